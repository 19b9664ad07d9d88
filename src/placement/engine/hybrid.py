"""Where a hybrid MPI+OpenMP placement is computed: ranks in domains, threads inside each rank.

Most codes at a site run a few MPI ranks per node, each with a team of OpenMP
threads. The launcher binds each rank to a set of cores (Open MPI's
``--map-by ppr:N:package:pe=C --bind-to core``, Slurm's ``--ntasks-per-socket``
with ``--cpus-per-task`` and ``--cpu-bind=cores``) and the OpenMP runtime then
places the rank's threads inside that set (``OMP_PLACES=cores``,
``OMP_PROC_BIND=close``: the places are cut from the process's own mask).

The engine states the answer both ways: which CPUs each rank holds and where
each of its threads goes, so that a check can compare every rank and thread
with what ran. Ranks fill domains in order (ranks 0..N-1 in the first package),
as ``ppr`` maps and as Slurm's ``--distribution=block:block`` does; each
domain's cores are split evenly between its ranks, in the topology's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..util import PlacementError
from .maps import MAX_THREADS_PER_PU
from .topology import Topology

#: Domains a rank can be confined to; ``cores:N`` (N consecutive cores per rank) too.
DOMAINS = ("package", "numa", "l3", "node")
#: What one OpenMP place is inside a rank: a whole core, or one hardware thread.
UNITS = ("cores", "threads")


@dataclass(frozen=True)
class HybridPlacement:
    """Ranks x threads on one node: each rank's CPU set, and each thread's place in it."""

    ranks: int
    threads: int                                   #: per rank
    domain: str
    unit: str
    ranks_per_domain: int
    cores_per_rank: int
    domain_of_rank: tuple[int, ...]                #: index into the node's domains, in order
    rank_sets: tuple[frozenset[int], ...]
    places: tuple[tuple[frozenset[int], ...], ...]  #: [rank][thread] -> the thread's PUs
    #: [rank] -> the rank's OpenMP places (its cores, or its PUs) in order
    unit_places: tuple[tuple[frozenset[int], ...], ...] = ()

    @property
    def cpu_set(self) -> frozenset[int]:
        return frozenset().union(*self.rank_sets)

    def runtime_places(self, rank: int, runtime: str) -> tuple[frozenset[int], ...]:
        """Where ``runtime`` (``libgomp`` or ``libomp``) binds each thread of a rank under the
        shared ``OMP_PLACES=<unit>`` and ``OMP_PROC_BIND=close`` (:func:`close_split`)."""
        return tuple(close_split(list(self.unit_places[rank]), self.threads, runtime))

    def thread_cpus(self, rank: int) -> list[int]:
        """One CPU per thread of a rank (the smallest of its place), GOMP_CPU_AFFINITY order."""
        return [min(p) for p in self.places[rank]]


#: OpenMP runtimes whose split of more threads than places :func:`close_split` knows.
RUNTIMES = ("libomp", "libgomp")


def close_split(places: list[frozenset[int]], threads: int, runtime: str = "libomp"
                ) -> list[frozenset[int]]:
    """``OMP_PROC_BIND=close`` over ``places`` as each runtime does it; the spec leaves the
    split of more threads than places open.

    Up to one thread per place both bind thread i to place i. Beyond, with
    S = T // P and R = T % P: LLVM/Intel libomp (``__kmp_partition_places``) gives every
    place S threads and every (P // R)-th place one more; libgomp (``gomp_team_start``)
    gives places 0..P-1 S threads each, then the R others one each from place 0."""
    n = len(places)
    if threads <= n:
        return places[:threads]
    s, rem = divmod(threads, n)
    if runtime == "libgomp":
        return [places[i // s] if i < s * n else places[i - s * n] for i in range(threads)]
    if runtime != "libomp":
        raise PlacementError(f"unknown OpenMP runtime {runtime!r}: choose one of "
                             f"{', '.join(RUNTIMES)}")
    gap = n // rem if rem else n
    out, place, count, gap_ct = [], 0, 0, gap
    for _ in range(threads):          # the loop of __kmp_partition_places, close, T > P
        out.append(places[place])
        count += 1
        if count == s and rem and gap_ct == gap:
            continue                  # this place takes one thread more
        if count == s + 1 and rem and gap_ct == gap:
            rem -= 1
            gap_ct = 1
        elif count == s:
            gap_ct += 1
        else:
            continue
        place, count = (place + 1) % n, 0
    return out


def _cores(topo: Topology, pus: set[int] | frozenset[int]) -> list[list[int]]:
    """The cores holding these PUs, each as its PUs, in the topology's order."""
    out: dict[object, list[int]] = {}
    for pu in topo.pus:
        if pu.os_index in pus:
            core = pu.ancestor("Core")
            out.setdefault(core if core is not None else ("pu", pu.os_index), []).append(
                pu.os_index)
    return list(out.values())


def domains(topo: Topology, domain: str) -> list[list[list[int]]]:
    """The node's domains of one kind, each as its cores (each core as its PUs)."""
    if domain == "package":
        sets = [set(c) for _k, c in sorted(topo.groups("Package").items())]
    elif domain == "numa":
        sets = [set(c) for _k, c in sorted(topo.numa_nodes.items())]
    elif domain == "l3":
        sets = [set(c) for _k, c in sorted(topo.groups("L3Cache").items())]
        if not sets:
            raise PlacementError("domain 'l3': the topology has no L3 cache; "
                                 f"choose one of {', '.join(d for d in DOMAINS if d != 'l3')}")
    elif domain == "node":
        sets = [set(topo.cpus)]
    else:
        raise PlacementError(f"unknown domain {domain!r}: choose one of {', '.join(DOMAINS)} "
                             "or cores:N (N cores per rank)")
    # a domain's cores in topology order; a domain without PUs (memory only) is no domain
    return [c for c in (_cores(topo, s) for s in sets) if c]


def compute(topo: Topology, ranks: int, threads: int, domain: str = "package",
            unit: str = "cores") -> HybridPlacement:
    """Place ``ranks`` ranks of ``threads`` threads each on one node of this topology."""
    for name, value in (("rank count", ranks), ("threads per rank", threads)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise PlacementError(f"{name} must be a positive whole number, got {value!r}")
    if threads > MAX_THREADS_PER_PU * len(topo.pus):
        raise PlacementError(
            f"{threads} threads per rank is over {MAX_THREADS_PER_PU} per PU of the node's "
            f"{len(topo.pus)} PUs: at most {MAX_THREADS_PER_PU * len(topo.pus)} threads per rank")
    if unit not in UNITS:
        raise PlacementError(f"unknown place unit {unit!r}: choose one of {', '.join(UNITS)}")
    if domain.startswith("cores:"):
        n = domain.partition(":")[2]
        if not (n.isascii() and n.isdigit()) or int(n) < 1:
            raise PlacementError(f"domain {domain!r}: expected cores:N with N a positive "
                                 "whole number of cores per rank")
        cores = domains(topo, "node")[0]
        per = int(n)
        if ranks * per > len(cores):
            raise PlacementError(f"{ranks} ranks x {per} cores need {ranks * per} cores; "
                                 f"the node has {len(cores)}")
        doms = [cores[r * per:(r + 1) * per] for r in range(ranks)]
        rpd, cpr = 1, per
    else:
        doms = domains(topo, domain)
        if ranks % len(doms):
            raise PlacementError(
                f"{ranks} ranks do not fill the node's {len(doms)} {domain} domain(s) evenly: "
                f"give a multiple of {len(doms)} ranks, or another domain")
        rpd = ranks // len(doms)
        smallest = min(len(d) for d in doms)
        if rpd > smallest:
            raise PlacementError(
                f"{rpd} ranks per {domain} but a {domain} has {smallest} core(s): "
                "at most one rank per core; give fewer ranks")
        cpr = smallest // rpd
    rank_sets, places, dom_of, units = [], [], [], []
    for r in range(ranks):
        d, j = divmod(r, rpd)
        mine = doms[d][j * cpr:(j + 1) * cpr]
        rank_sets.append(frozenset(c for core in mine for c in core))
        pl = ([frozenset(core) for core in mine] if unit == "cores"
              else [frozenset({c}) for core in mine for c in core])
        places.append(tuple(close_split(pl, threads, "libomp")))
        units.append(tuple(pl))
        dom_of.append(d)
    return HybridPlacement(ranks, threads, domain, unit, rpd, cpr, tuple(dom_of),
                           tuple(rank_sets), tuple(places), tuple(units))


def fill(topo: Topology, domain: str = "package", ranks_per_domain: int = 1,
         factor: int = 1) -> tuple[int, int]:
    """Ranks and threads per rank that fill the node (``factor`` 2: twice as many threads)."""
    doms = domains(topo, domain)
    cpr = min(len(d) for d in doms) // ranks_per_domain
    if cpr < 1:
        raise PlacementError(f"{ranks_per_domain} ranks per {domain} do not fit its cores")
    return len(doms) * ranks_per_domain, cpr * factor
