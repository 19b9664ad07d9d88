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


def test_missing_binding_tool_is_a_visible_skip(reframe_bin, root, tmp_path):
    """Without likwid-pin its cases are SKIPs in the run, with the reason, not gone at load time."""
    bin_dir = tmp_path / "bin"            # /usr/bin without likwid-pin
    bin_dir.mkdir()
    for tool in os.listdir("/usr/bin"):
        if not tool.startswith("likwid"):
            os.symlink(os.path.join("/usr/bin", tool), bin_dir / tool)
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results"),
           "PATH": f"{os.path.dirname(reframe_bin)}:{bin_dir}"}
    cmd = [reframe_bin, "-C", "config/settings.py", "-c", "reframe_tests/binding_probe.py",
           "--prefix", str(tmp_path / "rfm"), "-n", "BindingRenderingCheck.*likwid.*compact", "-r"]
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout[-3000:]
    assert "[likwid-pin is not installed here]" in p.stdout and " 0 skipped" not in p.stdout
