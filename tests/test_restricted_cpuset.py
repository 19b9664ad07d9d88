"""ReFrame under `taskset`: the binding checks place within the CPUs the process may use.

The same holds in a cgroup or a Slurm allocation smaller than the node: the live
topology is cut to the process's CPU set, and ReFrame's output says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from placement.engine import topology

pytestmark = pytest.mark.reframe


@pytest.mark.skipif(not shutil.which("taskset"), reason="taskset (util-linux) not installed")
def test_binding_checks_pass_under_taskset(reframe_bin, root, tmp_path):
    live = topology.load(None)
    if len(live.pus) < 2:
        pytest.skip("needs a machine with 2 or more PUs to restrict")
    cpu = str(live.cpus[-1])
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results")}
    p = subprocess.run(["taskset", "-c", cpu, reframe_bin, "-C", "config/settings.py", "-c",
                        "reframe_tests/binding_probe.py", "--prefix", str(tmp_path / "rfm"),
                        "--tag", "binding", "-r"],
                       cwd=root, capture_output=True, text=True, env=env, timeout=900)
    out = p.stdout + p.stderr
    assert "placing on the 1 CPU(s) this process may use" in out, out[-3000:]
    assert p.returncode == 0 and "FAILED" not in p.stdout and "PASSED" in p.stdout, out[-4000:]
