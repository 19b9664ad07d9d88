"""How each launcher states a hybrid placement, and how its own report is read back.

One :class:`~placement.engine.hybrid.HybridPlacement` becomes the options of Open MPI's
``mpirun``, of Slurm's ``srun``, the OpenMP environment every rank shares (its
places are cut from the rank's mask), and a per-rank form for runtimes or sites
that set each rank's places explicitly (``OMP_PLACES`` and ``GOMP_CPU_AFFINITY``
chosen by the rank's local id). The way back: Open MPI's ``--report-bindings``
lines and Slurm's ``SLURM_CPU_BIND_*`` give the CPUs the launcher says it bound
each rank to.
"""

from __future__ import annotations

import json
import re

from ..util import PlacementError
from .cpulist import format_ranges
from .hybrid import HybridPlacement
from .topology import Topology

FORMATS = ("list", "mpirun", "srun", "srun-mask", "env", "per-rank", "json")
#: Open MPI's names for the domains in ``--map-by ppr:N:<object>`` (4.x says socket).
_OMPI_OBJECT = {"package": "package", "numa": "numa", "l3": "l3cache", "node": "node"}


def _place(p: frozenset[int]) -> str:
    return "{" + ",".join(str(c) for c in sorted(p)) + "}"


def ompi_major() -> int:
    """The major version of the Open MPI on PATH (its options changed at 5); 4 without one."""
    import shutil
    import subprocess
    if shutil.which("mpirun") is None:
        return 4
    try:
        out = subprocess.run(["mpirun", "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 4
    m = re.search(r"Open MPI\)?\s+(\d+)\.", out) or re.search(r"\(OpenRTE\)\s+(\d+)", out)
    return int(m.group(1)) if m else 4


def omp_env(hp: HybridPlacement) -> dict[str, str]:
    """The OpenMP environment every rank shares: places cut from the rank's own mask."""
    return {"OMP_NUM_THREADS": str(hp.threads), "OMP_PLACES": hp.unit,
            "OMP_PROC_BIND": "close"}


def mpirun_options(hp: HybridPlacement, ompi_major: int = 4) -> list[str]:
    """Open MPI options: ranks per domain, cores per rank, each rank bound to its cores."""
    if hp.domain.startswith("cores:"):
        mapping = f"slot:pe={hp.cores_per_rank}"
    else:
        obj = _OMPI_OBJECT[hp.domain]
        if obj == "package" and ompi_major < 5:
            obj = "socket"
        mapping = f"ppr:{hp.ranks_per_domain}:{obj}:pe={hp.cores_per_rank}"
    return ["-np", str(hp.ranks), "--map-by", mapping, "--bind-to", "core", "--report-bindings"]


def _mask(cpus: frozenset[int]) -> str:
    return hex(sum(1 << c for c in cpus))


def srun_options(hp: HybridPlacement, topo: Topology, explicit: bool = False) -> list[str]:
    """Slurm options; ``explicit`` (or a domain Slurm cannot name) gives each rank's mask."""
    per_core = pus_per_core(topo)
    opts = ["-n", str(hp.ranks), f"--cpus-per-task={hp.cores_per_rank * per_core}"]
    if hp.domain == "package" and not explicit:
        return opts + [f"--ntasks-per-socket={hp.ranks_per_domain}",
                       "--distribution=block:block", "--cpu-bind=cores"]
    return opts + ["--cpu-bind=mask_cpu:" + ",".join(_mask(s) for s in hp.rank_sets)]


def pus_per_core(topo: Topology) -> int:
    """Hardware threads per core (Slurm counts ``--cpus-per-task`` in them)."""
    cores = topo.groups("Core")
    return max(len(c) for c in cores.values()) if cores else 1


def per_rank_script(hp: HybridPlacement) -> str:
    """A shell fragment that sets each rank's places explicitly, by its local rank id.

    Only ``OMP_PLACES``: libgomp and LLVM/Intel libomp both read it, whereas a
    ``GOMP_CPU_AFFINITY`` beside it makes libomp ignore ``OMP_PLACES`` (its warning #182)
    and bind each thread to one PU of its place."""
    lines = ['case "${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-${MPI_LOCALRANKID:-0}}}" in']
    for r in range(hp.ranks):          # one node: the local rank id is the rank
        places = ",".join(_place(p) for p in hp.places[r])
        lines.append(f'  {r}) export OMP_PLACES="{places}" ;;')
    lines.append("esac")
    lines.append(f'export OMP_NUM_THREADS={hp.threads} OMP_PROC_BIND=close')
    return "\n".join(lines)


def _threads(places) -> str:
    return " ".join(f"{t}:{_place(p)}" for t, p in enumerate(places))


def _list(hp: HybridPlacement) -> str:
    """Each rank's CPUs and its threads' places. Where the runtimes split more threads
    than places differently, the line says which runtime it describes (libomp's split,
    which the per-rank fragment binds under every runtime) and libgomp's follows."""
    out = []
    for r, cpus in enumerate(hp.rank_sets):
        gnu = hp.runtime_places(r, "libgomp") if hp.unit_places else hp.places[r]
        differs = tuple(gnu) != tuple(hp.places[r])
        label = (" (libomp under OMP_PLACES, and the per-rank fragment under any runtime)"
                 if differs else "")
        out.append(f"rank {r} ({hp.domain} {hp.domain_of_rank[r]}): cpus "
                   f"{format_ranges(cpus)}; threads{label} {_threads(hp.places[r])}")
        if differs:
            out.append(f"rank {r} under libgomp with OMP_PLACES={hp.unit}: threads "
                       f"{_threads(gnu)}")
    return "\n".join(out)


def render(hp: HybridPlacement, topo: Topology, fmt: str, ompi_major: int = 4) -> str:
    """One rendering as text, the form a user pastes into a job script."""
    if fmt == "list":
        return _list(hp)
    env = " ".join(f"{k}={v}" for k, v in omp_env(hp).items())
    if fmt == "mpirun":
        return f"{env} mpirun {' '.join(mpirun_options(hp, ompi_major))} <program>"
    if fmt in ("srun", "srun-mask"):
        return f"{env} srun {' '.join(srun_options(hp, topo, fmt == 'srun-mask'))} <program>"
    if fmt == "env":
        return "\n".join(f'export {k}="{v}"' for k, v in omp_env(hp).items())
    if fmt == "per-rank":
        return per_rank_script(hp)
    if fmt == "json":
        return json.dumps({"ranks": hp.ranks, "threads": hp.threads, "domain": hp.domain,
                           "unit": hp.unit, "rank_cpus": [sorted(s) for s in hp.rank_sets],
                           "places": [[sorted(p) for p in r] for r in hp.places]})
    raise PlacementError(f"unknown format {fmt!r} for ranks: choose one of {', '.join(FORMATS)}")


# --- the launcher's own report, read back -------------------------------------------------
_OMPI_BOUND = re.compile(r"MCW rank (\d+) bound to [^\n]*?:\s*((?:\[[^\]\n]*\])+)\s*$", re.M)
_OMPI_UNBOUND = re.compile(r"MCW rank (\d+) is not bound", re.M)


def _map_order(topo: Topology) -> list[list[list[int]]]:
    """Packages, their cores and the cores' PUs in logical order: Open MPI's bracket map."""
    out: dict[int, dict[object, list[int]]] = {}
    for pu in topo.pus:
        pkg = pu.ancestor("Package") or 0
        core = pu.ancestor("Core")
        out.setdefault(pkg, {}).setdefault(core if core is not None else pu.os_index,
                                           []).append(pu.os_index)
    return [list(cores.values()) for _p, cores in sorted(out.items())]


def ompi_bindings(text: str, topo: Topology) -> dict[int, frozenset[int]]:
    """Each rank's CPUs as ``mpirun --report-bindings`` drew them (``[BB/..][../..]``).

    A rank Open MPI reports as not bound gets the whole node.
    """
    order = _map_order(topo)
    out: dict[int, frozenset[int]] = {}
    for m in _OMPI_BOUND.finditer(text):
        cpus: set[int] = set()
        for p, pkg in enumerate(re.findall(r"\[([^\]]*)\]", m.group(2))):
            for c, core in enumerate(pkg.split("/")):
                for h, mark in enumerate(core):
                    if mark == "B":
                        try:
                            cpus.add(order[p][c][h])
                        except IndexError:
                            raise PlacementError(
                                f"Open MPI's binding map {m.group(2)} does not fit the "
                                f"topology ({len(order)} packages): is it this node's?") from None
        out[int(m.group(1))] = frozenset(cpus)
    for m in _OMPI_UNBOUND.finditer(text):
        out[int(m.group(1))] = frozenset(topo.cpus)
    return out


def slurm_bind_set(bind_type: str, bind_list: str, localid: int) -> frozenset[int]:
    """The CPUs Slurm says it bound local task ``localid`` to (from SLURM_CPU_BIND_*)."""
    items = [i for i in bind_list.split(",") if i]
    if not items:
        return frozenset()
    item = items[localid % len(items)]
    if bind_type.startswith("map_cpu"):
        return frozenset({int(item, 0)})
    mask = int(item, 16)           # mask_cpu (also what 'cores' and 'threads' report)
    return frozenset(i for i in range(mask.bit_length()) if mask >> i & 1)
