"""Where a binding is judged: read bindprobe output and compare it with the placement asked for.

Like the CSCS affinity check, each thread that is bound where it should be is
removed from the expected set, and the check requires the set to end empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..engine import KERNEL_MODE, MemoryPolicy, Placement, parse_list

_THREAD = re.compile(r"^bindprobe thread=(\d+) cpu=(-?\d+) allowed=(\S*)$", re.M)
_COUNT = re.compile(r"^bindprobe threads=(\d+)$", re.M)
_POLICY = re.compile(r"^bindprobe mempolicy=(\S+) nodes=(\S*)", re.M)


@dataclass(frozen=True)
class ProbeReport:
    """What the probe saw: thread count, per-thread (cpu, allowed set), memory policy."""

    threads: int
    cpu: dict[int, int]
    allowed: dict[int, frozenset[int]]
    mempolicy: str | None
    mem_nodes: frozenset[int]


def parse(text: str) -> ProbeReport:
    """Parse bindprobe output (other lines, e.g. a benchmark's, are ignored)."""
    count = _COUNT.search(text)
    cpu, allowed = {}, {}
    for m in _THREAD.finditer(text):
        tid = int(m.group(1))
        cpu[tid] = int(m.group(2))
        allowed[tid] = frozenset(parse_list(m.group(3))) if m.group(3) else frozenset()
    pol = _POLICY.search(text)
    return ProbeReport(
        threads=int(count.group(1)) if count else 0, cpu=cpu, allowed=allowed,
        mempolicy=pol.group(1) if pol else None,
        mem_nodes=frozenset(parse_list(pol.group(2))) if pol and pol.group(2) else frozenset())


def problems(report: ProbeReport, placement: Placement,
             policy: MemoryPolicy | None = None, per_thread: bool = True) -> list[str]:
    """Every way the observed run differs from the requested placement; empty means verified.

    With ``per_thread`` False (numactl, taskset, hwloc-bind bind the process to
    a set), every thread must be allowed on exactly the placement's whole set.
    """
    out: list[str] = []
    if report.threads == 0 and not report.cpu:
        # no report line at all: the probe never ran under the launcher or binding tool
        return ["the binding probe printed no report: the launch command or binding tool "
                "failed before it ran (see the job's stderr)"]
    if report.threads != placement.threads or len(report.cpu) != placement.threads:
        out.append(f"probe saw {report.threads} threads ({len(report.cpu)} reported), "
                   f"expected {placement.threads}")
        return out
    if placement.bound:
        expected = {i: placement.places[i] if per_thread else placement.cpu_set
                    for i in range(placement.threads)}
        for tid, want in list(expected.items()):
            got = report.allowed.get(tid, frozenset())
            if got == want and report.cpu[tid] in want:
                del expected[tid]
            else:
                out.append(f"thread {tid} allowed on {sorted(got)} running on {report.cpu[tid]}, "
                           f"expected {sorted(want)}")
        if expected and not out:
            out.append(f"threads not verified: {sorted(expected)}")
    if policy is not None:
        want_mode = KERNEL_MODE[policy.name]
        if report.mempolicy != want_mode:
            out.append(f"memory policy is {report.mempolicy!r}, expected {want_mode!r} "
                       f"({policy.name})")
        elif policy.nodes and report.mem_nodes != frozenset(policy.nodes):
            out.append(f"memory policy nodes are {sorted(report.mem_nodes)}, "
                       f"expected {list(policy.nodes)}")
    return out
