"""A cgroup cpuset (Slurm's ``task/cgroup``) is announced as a restriction, as ``taskset`` is.

lstopo hides the CPUs a cgroup forbids, so the topology alone looks like a
whole (smaller) node; the process's allowed CPUs are held against the node's
and the difference is said. The test makes a real cpuset cgroup (v1 or v2)
holding one CPU and runs ``placement topo`` in it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from placement.engine import topology
from placement.testlib import node_topology

ROOT = Path(__file__).resolve().parents[1]


def _cpuset_cgroup(cpu: int) -> Path | None:
    """A new cpuset cgroup holding ``cpu`` (v1 hierarchy, else v2), or None where none can
    be made (not root, no cpuset controller)."""
    name = f"placement-test-{uuid.uuid4().hex[:8]}"
    v1 = Path("/sys/fs/cgroup/cpuset")
    v2 = Path("/sys/fs/cgroup")
    try:
        if (v1 / "cpuset.cpus").is_file():
            d = v1 / name
            d.mkdir()
            (d / "cpuset.cpus").write_text(str(cpu))
            (d / "cpuset.mems").write_text((v1 / "cpuset.mems").read_text().strip() or "0")
            return d
        if "cpuset" in (v2 / "cgroup.controllers").read_text().split():
            if "cpuset" not in (v2 / "cgroup.subtree_control").read_text().split():
                (v2 / "cgroup.subtree_control").write_text("+cpuset")
            d = v2 / name
            d.mkdir()
            (d / "cpuset.cpus").write_text(str(cpu))
            return d
    except OSError:
        return None
    return None


def test_a_cgroup_cpuset_is_announced(tmp_path):
    if not shutil.which("lstopo") and not shutil.which("lstopo-no-graphics"):
        pytest.skip("hwloc's lstopo is not installed")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs 2 or more CPUs to restrict")
    group = _cpuset_cgroup(cpus[-1])
    if group is None:
        pytest.skip("cannot create a cpuset cgroup here (needs root and a cpuset controller)")
    try:
        # the shell moves itself into the cgroup, then becomes `placement topo`
        procs = group / ("tasks" if (group / "tasks").exists() else "cgroup.procs")
        p = subprocess.run(["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh",
                            sys.executable, "-m", "placement", "topo"],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
        # a compute node's capture (testlib/node_topology.py) inside a job's cgroup
        xml = tmp_path / "topology.xml"
        subprocess.run(["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", "sh", "-c",
                        node_topology.CAPTURE], cwd=tmp_path, check=True, timeout=120)
    finally:
        group.rmdir()
    assert p.returncode == 0, p.stderr
    restricted = [ln for ln in p.stdout.splitlines() if ln.startswith("restricted: ")]
    assert restricted == [f"restricted: live machine: placing on the 1 CPU(s) this process may "
                          f"use ({cpus[-1]} of {topology.format_ranges(cpus)}: taskset, a "
                          "cgroup or a job allocation)"], p.stdout
    # the captured file keeps the node and the job's part of it: announced where it is read
    assert xml.exists()
    p = subprocess.run([sys.executable, "-m", "placement", "topo", "--topology",
                        str(xml)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert f"restricted: {xml}: placing on the 1 CPU(s) this process " \
           f"may use ({cpus[-1]} of {topology.format_ranges(cpus)}" in p.stdout, p.stdout
