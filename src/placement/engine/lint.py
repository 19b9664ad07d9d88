"""Placement pitfalls worth a warning before a long run is wasted.

The Xeon study's ``GOMP_CPU_AFFINITY=0-7`` with 2 or 4 threads packed every
thread on one socket; the Bulldozer study's point is two threads on one module
while other modules idle.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from .maps import Placement
from .topology import Topology

if TYPE_CHECKING:
    from .hybrid import HybridPlacement


def _crowding(threads_on: Counter, units: dict[int, list[int]], what: str) -> str | None:
    busy = {u: threads_on[u] for u in units if threads_on[u] >= 2}
    idle = [u for u in units if threads_on[u] == 0]
    if busy and idle:
        worst = max(busy, key=busy.get)
        return (f"{what} {worst} holds {busy[worst]} threads while {len(idle)} {what}(s) "
                f"stay idle ({what} {idle[0]} among them)")
    return None


def warnings(topo: Topology, placement: Placement) -> list[str]:
    """Human-readable warnings; empty when the placement spreads sensibly."""
    if not placement.bound:
        return []
    out: list[str] = []
    checks = [(topo.groups("Package"), "package")]
    if len(topo.numa_nodes) > 1:
        checks.append(({n: sorted(c) for n, c in topo.numa_nodes.items()}, "NUMA node"))
    checks.append((topo.modules(), "module"))
    checks.append((topo.groups("Core"), "core"))
    for units, what in checks:
        if len(units) < 2:
            continue
        owner = {cpu: u for u, cpus in units.items() for cpu in cpus}
        # a thread with a multi-PU place counts on the unit of its first PU
        threads_on = Counter(owner.get(min(p)) for p in placement.places)
        msg = _crowding(threads_on, units, what)
        if msg:
            out.append(msg)
    return out


def hybrid_warnings(topo: Topology, hp: "HybridPlacement") -> list[str]:
    """Pitfalls of a ranks x threads layout that the launchers accept without a word."""
    out: list[str] = []
    levels = [(topo.groups("Package"), "package")]
    if len(topo.numa_nodes) > 1:
        levels.append(({n: sorted(c) for n, c in topo.numa_nodes.items()}, "NUMA node"))
    for units, what in levels:
        owner = {cpu: u for u, cpus in units.items() for cpu in cpus}
        for r, cpus in enumerate(hp.rank_sets):
            spans = sorted({owner[c] for c in cpus if c in owner})
            if len(spans) > 1:
                out.append(f"rank {r} spans {what}s {', '.join(map(str, spans))}: half its "
                           f"threads reach memory across the {what} boundary; confine ranks "
                           f"with --domain {'package' if what == 'package' else 'numa'}")
                break
    idle = len(topo.cpus) - len(hp.cpu_set)
    if idle and not hp.domain.startswith("cores:"):
        out.append(f"{idle} PU(s) stay idle: the {hp.domain} domains' cores do not divide "
                   f"evenly between {hp.ranks_per_domain} rank(s) each")
    # linear in threads: a count per place, not a comparison of every pair
    per_place = max(max(Counter(places).values()) for places in hp.places)
    if per_place > 1:
        out.append(f"{hp.threads} threads per rank on {hp.cores_per_rank} core(s): up to "
                   f"{per_place} threads share one {hp.unit[:-1]} place")
    return out
