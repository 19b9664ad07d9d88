"""Where a thread map is computed: strategies turn a topology and a thread count into places.

A :class:`Placement` holds, per thread, the set of PUs it may run on (one PU for
``compact``/``scatter``/``explicit`` and ``threads`` places, a core's PUs for
``cores`` places, nothing for ``none``) and the ordered primary CPU list that
GOMP_CPU_AFFINITY-style tools take.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..util import PlacementError
from .cpulist import format_ranges, parse_list
from .topology import Topology

#: Oversubscription beyond this many threads per PU is a typo, not a study: refused
#: before any map is built (the suite's own cases go to 2x).
MAX_THREADS_PER_PU = 64

STRATEGIES = ("none", "compact", "scatter", "explicit",
              "spread-cores", "close-cores", "spread-threads", "close-threads")


@dataclass(frozen=True)
class Placement:
    """The result of a strategy: what each thread is bound to.

    ``places[i]`` is the PU set thread i may use; empty tuple for ``none``.
    """

    strategy: str
    threads: int
    places: tuple[frozenset[int], ...]
    oversubscribed: bool = False

    @property
    def bound(self) -> bool:
        return bool(self.places)

    @property
    def cpus(self) -> list[int]:
        """One CPU per thread, in thread order (the smallest PU of each place)."""
        return [min(p) for p in self.places]

    @property
    def cpu_set(self) -> frozenset[int]:
        return frozenset().union(*self.places) if self.places else frozenset()


def compact_order(topo: Topology) -> list[int]:
    """PUs in topology order, hardware-thread siblings first (KMP compact)."""
    return topo.cpus


def scatter_order(topo: Topology) -> list[int]:
    """Round-robin over the hierarchy, outermost level varying fastest (KMP scatter).

    Sorting on the sibling ranks read innermost-first makes the package rank
    the fastest-changing key, then die/NUMA, cache/module, core, and the
    hardware thread the slowest.
    """
    cached = topo.orders.get("scatter")
    if cached is None:
        cached = [pu.os_index for pu in sorted(topo.pus, key=lambda p: (p.ranks[::-1], p.logical))]
        topo.orders["scatter"] = cached      # topologies are loaded once and reused
    return list(cached)


def _core_places(topo: Topology) -> list[frozenset[int]]:
    cores = topo.groups("Core")
    if not cores:  # no Core objects: every PU is its own core
        return [frozenset({c}) for c in topo.cpus]
    return [frozenset(cpus) for _k, cpus in sorted(cores.items())]


def omp_assign(places: list[frozenset[int]], threads: int, kind: str) -> list[frozenset[int]]:
    """OpenMP 5 proc_bind semantics over a place list, primary thread on place 0."""
    n = len(places)
    if kind != "spread" and threads <= n:
        return places[:threads]
    if threads <= n:
        # spread: T subpartitions of consecutive places, the first n mod T one place longer
        # (libgomp's split; libomp's agrees at 2 threads, so 4+3 cores get one per package),
        # each thread on its subpartition's first place
        size, longer = divmod(n, threads)
        return [places[i * size + min(i, longer)] for i in range(threads)]
    # more threads than places: consecutive threads share a place, as evenly as possible
    return [places[(i * n) // threads] for i in range(threads)]


def _take(order: list[int], threads: int, oversubscribe: bool, what: str) -> list[int]:
    if threads > len(order):
        if not oversubscribe:
            raise PlacementError(
                f"{threads} threads but only {len(order)} {what}: pass --oversubscribe "
                "to wrap round the list, or ask for fewer threads")
        return [order[i % len(order)] for i in range(threads)]
    return order[:threads]


def explicit_order(topo: Topology, spec: str | list[int]) -> list[int]:
    """Validate a user CPU list: numbers only, each PU of the topology, no duplicates."""
    valid = set(topo.cpus)
    cpus = parse_list(spec, valid=valid) if isinstance(spec, str) else list(spec)
    seen: set[int] = set()
    for cpu in cpus:
        if cpu not in valid:
            raise PlacementError(
                f"explicit list names CPU {cpu}, which is not in the topology "
                f"(valid PUs: {format_ranges(valid)} as listed by `placement topo`)")
        if cpu in seen:
            raise PlacementError(f"explicit list names CPU {cpu} twice: each CPU may appear once")
        seen.add(cpu)
    if not cpus:
        raise PlacementError("explicit list is empty: give CPUs like 0,4,1,5 or 0-7")
    return cpus


def compute(topo: Topology, threads: int, strategy: str, *,
            explicit: str | list[int] | None = None, oversubscribe: bool = False) -> Placement:
    """Compute the placement of ``threads`` threads with a strategy on a topology."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise PlacementError(f"thread count must be a positive whole number, got {threads!r}")
    if strategy not in STRATEGIES:
        raise PlacementError(f"unknown strategy {strategy!r}: choose one of {', '.join(STRATEGIES)}")
    over = threads > len(topo.pus)
    if threads > MAX_THREADS_PER_PU * len(topo.pus):
        raise PlacementError(
            f"{threads} threads is over {MAX_THREADS_PER_PU} per PU on {len(topo.pus)} PUs: "
            f"at most {MAX_THREADS_PER_PU * len(topo.pus)} threads, even with --oversubscribe")
    if over and not oversubscribe:
        raise PlacementError(
            f"{threads} threads but the topology has {len(topo.pus)} PUs: pass --oversubscribe "
            "(oversubscription wraps round the map), or ask for fewer threads")
    if strategy == "none":
        return Placement("none", threads, (), oversubscribed=over)
    if strategy == "explicit":
        if explicit is None:
            raise PlacementError("strategy 'explicit' needs a CPU list (--cpus 0,4,1,5)")
        order = explicit_order(topo, explicit)
        if len(order) < threads and not oversubscribe:
            raise PlacementError(
                f"explicit list has {len(order)} entries for {threads} threads: give at least "
                f"{threads} CPUs, or pass --oversubscribe to wrap round the list")
        cpus = _take(order, threads, True, "entries")
        return Placement("explicit", threads, tuple(frozenset({c}) for c in cpus),
                         oversubscribed=len(order) < threads)
    if strategy in ("compact", "scatter"):
        order = compact_order(topo) if strategy == "compact" else scatter_order(topo)
        cpus = _take(order, threads, oversubscribe, "PUs")
        return Placement(strategy, threads, tuple(frozenset({c}) for c in cpus), oversubscribed=over)
    kind, _, unit = strategy.partition("-")
    places = _core_places(topo) if unit == "cores" else [frozenset({c}) for c in topo.cpus]
    return Placement(strategy, threads, tuple(omp_assign(places, threads, kind)),
                     oversubscribed=threads > len(places))
