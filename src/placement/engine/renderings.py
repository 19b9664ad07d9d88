"""Every way a user or a launcher states a placement, and the way back from each.

Per-thread renderings (GOMP_CPU_AFFINITY, OMP_PLACES, KMP_AFFINITY, likwid-pin)
keep the thread order. ``numactl --physcpubind``, ``taskset -c`` and
``hwloc-bind`` bind the whole process to a set: they keep the set, not the order.
"""

from __future__ import annotations

import json
import re

from ..util import PlacementError
from .cpulist import format_ranges, parse_list
from .maps import Placement

FORMATS = ("gomp", "omp", "kmp", "likwid", "numactl", "taskset", "hwloc", "json", "env")


def _place(p: frozenset[int]) -> str:
    return "{" + ",".join(str(c) for c in sorted(p)) + "}"


def env(placement: Placement, binder: str = "gomp") -> dict[str, str]:
    """Environment variables that make an OpenMP runtime bind as the placement says."""
    out = {"OMP_NUM_THREADS": str(placement.threads)}
    if not placement.bound:
        return out
    if binder == "gomp":
        out["GOMP_CPU_AFFINITY"] = " ".join(str(c) for c in placement.cpus)
    elif binder == "omp":
        out["OMP_PLACES"] = ",".join(_place(p) for p in placement.places)
        out["OMP_PROC_BIND"] = "close"
    elif binder == "kmp":
        out["KMP_AFFINITY"] = "granularity=fine,explicit,proclist=[" + \
            ",".join(str(c) for c in placement.cpus) + "]"
    return out


def command(placement: Placement, binder: str) -> list[str]:
    """Launch prefix for the tools that bind from the command line (empty if unbound)."""
    if not placement.bound:
        return []
    if binder == "likwid":
        return ["likwid-pin", "-q", "-c", ",".join(str(c) for c in placement.cpus)]
    cpus = format_ranges(placement.cpu_set)
    if binder == "numactl":
        return ["numactl", f"--physcpubind={cpus}"]
    if binder == "taskset":
        return ["taskset", "-c", cpus]
    if binder == "hwloc":
        # hwloc-bind takes PU locations by OS index with the -p flag
        return ["hwloc-bind", "-p"] + [f"pu:{c}" for c in sorted(placement.cpu_set)] + ["--"]
    return []


def render(placement: Placement, fmt: str) -> str:
    """One rendering as text, the form a user pastes into a job script."""
    if fmt not in FORMATS:
        raise PlacementError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps({
            "strategy": placement.strategy, "threads": placement.threads,
            "cpus": placement.cpus, "places": [sorted(p) for p in placement.places],
            "oversubscribed": placement.oversubscribed,
        })
    if fmt in ("gomp", "omp", "kmp"):
        e = env(placement, fmt)
        return "\n".join(f'export {k}="{v}"' for k, v in e.items())
    if fmt == "env":
        return "\n".join(f'export {k}="{v}"' for k, v in env(placement, "omp").items())
    return " ".join(command(placement, fmt))


def parse(text: str, fmt: str) -> list[int]:
    """Read a rendering back into the CPU list it states (a sorted set for set-based tools)."""
    if fmt == "json":
        return list(json.loads(text)["cpus"])
    if fmt == "gomp":
        m = re.search(r'GOMP_CPU_AFFINITY="([^"]*)"', text)
        return parse_list(m.group(1)) if m else []
    if fmt in ("omp", "env"):
        m = re.search(r'OMP_PLACES="([^"]*)"', text)
        return [min(parse_list(p)) for p in re.findall(r"\{([^}]*)\}", m.group(1))] if m else []
    if fmt == "kmp":
        m = re.search(r"proclist=\[([^\]]*)\]", text)
        return parse_list(m.group(1)) if m else []
    if fmt == "likwid":
        m = re.search(r"-c\s+(\S+)", text)
        return parse_list(m.group(1)) if m else []
    if fmt == "numactl":
        m = re.search(r"--physcpubind=(\S+)", text)
        return sorted(parse_list(m.group(1))) if m else []
    if fmt == "taskset":
        m = re.search(r"-c\s+(\S+)", text)
        return sorted(parse_list(m.group(1))) if m else []
    if fmt == "hwloc":
        return sorted(int(c) for c in re.findall(r"pu:(\d+)", text))
    raise PlacementError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
