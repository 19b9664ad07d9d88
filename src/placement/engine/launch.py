"""Everything a job needs to run one placed case: environment, launch prefix, checks.

ReFrame tests, the CLI and the kernels' scripts all go through this module so
that a test never holds a hand-written map.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..util import PlacementError
from . import lint, maps, policies, renderings
from .topology import Topology

BINDERS = ("gomp", "omp", "kmp", "likwid", "numactl", "taskset", "hwloc")
#: Binders that pin each thread; the others bind the whole process to a CPU set.
PER_THREAD_BINDERS = ("gomp", "omp", "kmp", "likwid")


@dataclass(frozen=True)
class LaunchSettings:
    """A placed case: env vars to export and the command prefix to put before the program."""

    placement: maps.Placement
    policy: policies.MemoryPolicy
    binder: str
    env: dict[str, str]
    prefix: list[str]
    warnings: list[str]

    @property
    def per_thread(self) -> bool:
        return self.binder in PER_THREAD_BINDERS

    def command(self, program: list[str]) -> list[str]:
        return self.prefix + program


def settings(topo: Topology, threads: int, strategy: str, policy: str = "first-touch", *,
             binder: str = "gomp", explicit: str | list[int] | None = None,
             oversubscribe: bool = False) -> LaunchSettings:
    """Compute the placement and memory policy and how to apply them with one binder."""
    if binder not in BINDERS:
        raise PlacementError(f"unknown binder {binder!r}: choose one of {', '.join(BINDERS)}")
    placement = maps.compute(topo, threads, strategy, explicit=explicit,
                             oversubscribe=oversubscribe)
    pol = policies.resolve(policy, topo, placement)
    env = renderings.env(placement, binder if binder in ("gomp", "omp", "kmp") else "none")
    bind_cmd = renderings.command(placement, binder)
    mem = pol.prefix
    if bind_cmd[:1] == ["numactl"] and mem:
        prefix = bind_cmd + mem[1:]          # one numactl does both
    else:
        prefix = mem + bind_cmd
    warns = lint.warnings(topo, placement) + renderings.narrowing(placement, binder)
    return LaunchSettings(placement, pol, binder, env, prefix, warns)
