"""Every way a user or a launcher states a placement, and the way back from each.

Per-thread renderings (GOMP_CPU_AFFINITY, OMP_PLACES, KMP_AFFINITY, likwid-pin)
keep the thread order. ``numactl --physcpubind``, ``taskset -c`` and
``hwloc-bind`` bind the whole process to a set: they keep the set, not the order.

``OMP_PLACES`` and ``KMP_AFFINITY``'s proclist (``{0,8}``) state a place of several PUs;
``GOMP_CPU_AFFINITY`` and ``likwid-pin -c`` name one CPU per thread, so there each thread
gets its own PU of its place (:func:`pinned_cpus`) and :func:`narrowing` says so. likwid-pin
counts the *distinct* CPUs of its list, keeps that many entries and hands them out round
robin (likwid 5.2's ``cpustr_to_cpulist`` and pthread wrapper): a list with repeats binds as
the map only when it is one period repeated, and then ``OMP_NUM_THREADS`` sets the count.
"""

from __future__ import annotations

import json
import re

from collections import Counter

from ..util import PlacementError
from .cpulist import format_ranges, parse_list
from .maps import Placement

FORMATS = ("gomp", "omp", "kmp", "likwid", "numactl", "taskset", "hwloc", "json", "env")


def _place(p: frozenset[int]) -> str:
    return "{" + ",".join(str(c) for c in sorted(p)) + "}"


def _kmp_item(p: frozenset[int]) -> str:
    return str(min(p)) if len(p) == 1 else _place(p)


def pinned_cpus(placement: Placement) -> list[int]:
    """One PU per thread for the formats that name one CPU each: the k-th thread on a
    place gets the place's k-th PU (round robin), so threads sharing a core's place get
    its hardware threads, not all its first PU."""
    seen: Counter = Counter()
    out = []
    for place in placement.places:
        pus = sorted(place)
        out.append(pus[seen[place] % len(pus)])
        seen[place] += 1
    return out


def likwid_list(placement: Placement) -> list[int]:
    """The ``likwid-pin -c`` list that binds every thread as the map says, or one line.

    likwid-pin keeps as many entries as its list has distinct CPUs and gives thread k
    entry k modulo that count: the map must be its first distinct CPUs repeated."""
    cpus = pinned_cpus(placement)
    period = len(set(cpus))
    if len(set(cpus[:period])) == period and all(
            c == cpus[i % period] for i, c in enumerate(cpus)):
        return cpus[:period]
    raise PlacementError(
        f"likwid-pin cannot state this map ({placement.strategy}, {placement.threads} threads: "
        "consecutive threads share a CPU, and likwid-pin hands its distinct CPUs out round "
        "robin): use --format omp, kmp or gomp")


def narrowing(placement: Placement, fmt: str) -> list[str]:
    """Warnings for a format that binds a thread to fewer PUs than the map's place."""
    if fmt not in ("gomp", "likwid") or not placement.bound:
        return []
    cut = [t for t, p in enumerate(placement.places) if len(p) > 1]
    if not cut:
        return []
    t = cut[0]
    return [f"{fmt} names one CPU per thread: {len(cut)} thread(s) get one PU of a "
            f"multi-PU place (thread {t}: PU {pinned_cpus(placement)[t]} of "
            f"{_place(placement.places[t])}); --format omp or kmp binds the whole place"]


def env(placement: Placement, binder: str = "gomp") -> dict[str, str]:
    """Environment variables that make an OpenMP runtime bind as the placement says."""
    out = {"OMP_NUM_THREADS": str(placement.threads)}
    if not placement.bound:
        return out
    if binder == "gomp":
        out["GOMP_CPU_AFFINITY"] = " ".join(str(c) for c in pinned_cpus(placement))
    elif binder == "omp":
        out["OMP_PLACES"] = ",".join(_place(p) for p in placement.places)
        out["OMP_PROC_BIND"] = "close"
    elif binder == "kmp":
        out["KMP_AFFINITY"] = "granularity=fine,explicit,proclist=[" + \
            ",".join(_kmp_item(p) for p in placement.places) + "]"
    return out


def command(placement: Placement, binder: str) -> list[str]:
    """Launch prefix for the tools that bind from the command line (empty if unbound)."""
    if not placement.bound:
        return []
    if binder == "likwid":
        return ["likwid-pin", "-q", "-c", ",".join(str(c) for c in likwid_list(placement))]
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
    if fmt == "likwid" and placement.bound:      # likwid-pin sets it only when unset
        return f"OMP_NUM_THREADS={placement.threads} " + " ".join(command(placement, fmt))
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
        items = re.findall(r"\{([^}]*)\}|(\d+)", m.group(1)) if m else []
        return [min(parse_list(s)) if s else int(n) for s, n in items]
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
