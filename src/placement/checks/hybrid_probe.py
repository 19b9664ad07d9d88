"""Where a hybrid binding is judged: every rank's and thread's CPUs against the engine's plan.

Each rank runs the binding probe with its rank id in front of every line
(``rank=R bindprobe thread=...``). The check passes only when each rank's
threads are where the engine said, no two ranks share a CPU, and the launcher's
own report (``mpirun --report-bindings``, ``SLURM_CPU_BIND_*``) names the same
set as the rank saw. The classic failures get a line that names them: every
rank's threads on the same first CPUs (``OMP_PLACES`` without a per-rank mask),
every rank inside the first package (Open MPI #11726 under ``-N``), and a
launcher that reports one binding while the rank runs with another (its hwloc
unable to bind, Open MPI #12470; ``srun --cpu-bind`` and ``OMP_PROC_BIND``
fighting).
"""

from __future__ import annotations

import re

from ..engine import HybridPlacement, Topology, format_ranges
from .probe import ProbeReport, parse

_RANKED = re.compile(r"^(?:\s*\d+: )?rank=(\d+) (.*)$", re.M)


def per_rank(text: str) -> dict[int, ProbeReport]:
    """Split probe output by rank (``rank=R`` prefix; ``srun --label``'s ``N: `` is allowed)."""
    lines: dict[int, list[str]] = {}
    for rank, line in _RANKED.findall(text):
        lines.setdefault(int(rank), []).append(line)
    return {r: parse("\n".join(ls)) for r, ls in sorted(lines.items())}


def _set(report: ProbeReport) -> frozenset[int]:
    return frozenset().union(*report.allowed.values()) if report.allowed else frozenset()


def problems(hp: HybridPlacement, observed: dict[int, ProbeReport], topo: Topology,
             launcher: dict[int, frozenset[int]] | None = None,
             launcher_name: str = "the launcher") -> list[str]:
    """Every way the run differs from the plan; empty means every rank and thread verified."""
    out: list[str] = []
    missing = [r for r in range(hp.ranks) if r not in observed]
    if missing:
        out.append(f"rank(s) {format_ranges(missing)} printed no probe report "
                   f"({len(observed)} of {hp.ranks} ranks reported)")
    for r, rep in sorted(observed.items()):
        if r >= hp.ranks:
            out.append(f"rank {r} reported, but only {hp.ranks} ranks were asked for")
            continue
        if rep.threads != hp.threads or len(rep.cpu) != hp.threads:
            out.append(f"rank {r}: {rep.threads} threads ({len(rep.cpu)} reported), "
                       f"expected {hp.threads}")
            continue
        for t, want in enumerate(hp.places[r]):
            got = rep.allowed.get(t, frozenset())
            if got != want or rep.cpu[t] not in want:
                out.append(f"rank {r} thread {t} allowed on {format_ranges(got) or 'nothing'} "
                           f"running on {rep.cpu[t]}, expected {format_ranges(want)}")
    seen = {r: _set(rep) for r, rep in observed.items() if r < hp.ranks}
    ranks = sorted(seen)
    for i, a in enumerate(ranks):
        for b in ranks[i + 1:]:
            shared = seen[a] & seen[b]
            if shared and not (hp.rank_sets[a] & hp.rank_sets[b]):
                out.append(f"ranks {a} and {b} share CPU(s) {format_ranges(shared)}")
    if launcher is not None:
        for r in range(hp.ranks):
            said = launcher.get(r)
            if said is None:
                out.append(f"{launcher_name} did not report rank {r}'s binding")
            elif r in seen and said != seen[r]:
                out.append(f"{launcher_name} reports rank {r} bound to "
                           f"{format_ranges(said) or 'nothing (no binding)'}, "
                           f"the rank runs on {format_ranges(seen[r]) or 'nothing'}")
    if out:
        out += diagnose(hp, seen, topo, launcher)
    return out


def diagnose(hp: HybridPlacement, seen: dict[int, frozenset[int]], topo: Topology,
             launcher: dict[int, frozenset[int]] | None = None) -> list[str]:
    """Name the classic failure a set of observed rank masks shows, if it is one."""
    out: list[str] = []
    sets = [s for _r, s in sorted(seen.items()) if s]
    if len(sets) > 1 and len(set(sets)) == 1 and len(set(hp.rank_sets)) > 1:
        out.append(f"every rank runs on the same CPUs {format_ranges(sets[0])}: the ranks were "
                   "not bound apart (OMP_PLACES without a per-rank mask, or the launcher's "
                   "binding switched off)")
    packages = topo.groups("Package")
    owner = {c: p for p, cpus in packages.items() for c in cpus}
    used = {owner.get(c) for s in sets for c in s}
    planned = {owner.get(c) for s in hp.rank_sets for c in s}
    if len(set(sets)) > 1 and len(used) == 1 and len(planned) > 1:
        out.append(f"every rank is inside package {used.pop()}: the launcher mapped all ranks "
                   "to one package (Open MPI bound every rank to package[0] under -N, "
                   "open-mpi/ompi#11726)")
    if launcher and any(launcher.get(r) == hp.rank_sets[r] and seen.get(r) != hp.rank_sets[r]
                        for r in range(hp.ranks)):
        out.append("the launcher reports the planned binding but the ranks run elsewhere: "
                   "the binding was not applied (a launcher's hwloc unable to bind under "
                   "cgroups, open-mpi/ompi#12470) or was overridden in the rank "
                   "(srun --cpu-bind and OMP_PROC_BIND fighting)")
    return out
