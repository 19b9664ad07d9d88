"""Whether a new system's node is ready: what the suite will run there (its thread sweep and
maps), then the binding and memory-policy checks run on it through ReFrame."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from ..engine import maps, topology
from ..util import PlacementError
from .system_file import root

#: The checks that say whether a node places threads and memory as computed.
READY_CHECKS = r"BindingRenderingCheck|MemoryPolicyCheck"


def node_lines(topo: topology.Topology) -> Iterator[str]:
    """The node, the thread sweep the system gets and its compact and scatter maps, each line
    as soon as it is known."""
    from ..testlib import node_topology, placed
    yield f"node: {node_topology.one_line(topo)}"
    sweep = placed.sweep_for([len(topo.pus)])
    yield f"thread sweep: {', '.join(map(str, sweep))}"
    full = len(topo.pus)
    for strat in ("compact", "scatter"):
        cpus = maps.compute(topo, full, strat).cpus
        yield f"{strat} map, {full} threads: {' '.join(map(str, cpus))}"


def ready_checks(name: str, settings: Path, out_dir: Path) -> tuple[dict[str, int], list[str]]:
    """Run the binding and memory-policy checks on the new system: counts and failures."""
    report = out_dir / "report.json"
    reframe = Path(sys.executable).with_name("reframe")
    cmd = [str(reframe if reframe.exists() else "reframe"), "-C", str(settings), "--system", name,
           "-c", str(root() / "reframe_tests" / "binding_probe.py"), "-n", READY_CHECKS,
           "-p", "gnu", "--prefix", str(out_dir / "rfm"), "--report-file", str(report), "-r"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if not report.exists():
        raise PlacementError(f"the checks did not run on {name}: "
                             f"{(proc.stderr or proc.stdout).strip()[-300:]}")
    counts = {"pass": 0, "fail": 0, "skip": 0}
    failed = []
    for run in json.loads(report.read_text())["runs"][-1:]:
        for tc in run["testcases"]:
            counts[tc["result"] if tc["result"] in counts else "fail"] += 1
            if tc["result"] not in ("pass", "skip"):
                failed.append(f"{tc['display_name']}: {tc['fail_reason']}")
    return counts, failed
