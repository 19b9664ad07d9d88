"""ReFrame runs the binding checks on this machine and they pass; a wrong map fails them."""

import os
import subprocess

import pytest

pytestmark = pytest.mark.reframe


def reframe(reframe_bin, root, tmp_path, *args):
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results")}
    cmd = [reframe_bin, "-C", "config/settings.py", "-c", "reframe_tests/binding_probe.py",
           "--prefix", str(tmp_path / "rfm"), *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)


def test_binding_checks_pass(reframe_bin, root, tmp_path):
    p = reframe(reframe_bin, root, tmp_path, "--tag", "binding", "-r")
    assert p.returncode == 0, p.stdout[-4000:]
    assert "FAILED" not in p.stdout and "PASSED" in p.stdout


def test_tampered_binding_fails_the_sanity_check(reframe_bin, root, tmp_path):
    """The job gets another map than the one computed: the probe sees it and the check fails."""
    p = reframe(reframe_bin, root, tmp_path, "-n", "BindingRenderingCheck", "-r",
                "-S", "env_vars=GOMP_CPU_AFFINITY:0", "-x", "binder=likwid")
    assert p.returncode != 0
    assert "binding not as requested" in p.stdout
