"""The peer verdict's part of an acceptance run: the NODES lines, and whether they fail it.

A run with ``--distribute`` measures every partition's nodes in one session; each node is
judged against its peers there (:mod:`placement.judgement.peers`), from the first session,
with no baseline. A node named, or a partition with no majority to judge by, fails the
run, and the ACCEPTANCE line names the nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..judgement import baseline_samples, baselines, peer_cases, peers, runreport, verdict
from ..util import PlacementError


class ReadPart(Protocol):
    """A run report of the run, read once (the acceptance run's ``Part``); named by
    shape so that this module need not import the run that imports it."""

    report: runreport.RunReport


@dataclass
class PeerLines:
    """The NODES lines of a run, and the notes its ACCEPTANCE line carries."""

    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    judgements: list[peers.PeerJudgement] = field(default_factory=list)

    @property
    def fails(self) -> bool:
        return any(j.fails for j in self.judgements)


def of_parts(parts: Sequence[ReadPart], system: str = "") -> PeerLines:
    """The peer verdict of every partition of the run's parts that ran on several nodes,
    then each node against its own baseline sessions (:func:`own_history_lines`)."""
    if not parts:
        return PeerLines()
    report = runreport.pool([p.report for p in parts])
    out = PeerLines(judgements=peer_cases.judge_report(report))
    for j in out.judgements:
        out.lines += j.lines()
        if j.fails:
            what = ", ".join(j.named) or "no majority"
            out.notes.append(f"odd nodes of {j.where}: {what}"
                             + ("; no majority to judge by" if j.no_majority and j.named
                                else ""))
    if system and out.judgements:
        out.lines += own_history_lines(report, system)
    return out


def own_history_lines(report: runreport.RunReport, system: str) -> list[str]:
    """Today's verdict per node: each node's values against its own entries of the system's
    baseline (``baseline record`` keeps a distributed run per node), judged together with
    that node's common shift alone. Information: a regressed value already fails the run
    through the verdict over every node's entries."""
    from ..util import baseline_file
    path = baseline_file(system)
    if baselines.refusal(path):
        return []
    old = baselines.load(path)
    try:
        new = baselines.from_run(report, system.split(":")[0])
    except PlacementError:
        return []
    lines = []
    for node, only in sorted(entries_by_node(new).items()):
        judged = [j.verdict for j in baseline_samples.judge_run(old, new, str(path), only=only)
                  if j.verdict is not None]
        if not judged:
            continue
        c = verdict.counts(judged)
        k = sorted(v.sessions for v in judged)[len(judged) // 2]
        lines.append(f"HISTORY {system} {node}: against its own {k} baseline session(s): "
                     f"{c[verdict.REGRESSED]} regressed, {c[verdict.IMPROVED]} improved, "
                     f"{c[verdict.UNCHANGED]} unchanged, {c[verdict.UNDECIDED]} undecided "
                     f"of {len(judged)}")
    return lines


def entries_by_node(tree: dict) -> dict[str, set]:
    """A run's entries by the node its test's index leads with (per-node entries only)."""
    out: dict[str, set] = {}
    for e in baseline_samples.entries(tree, "run"):
        test, keys, _ = e
        if tree.get(test, {}).get("$index", [None])[:1] == ["node"] and keys:
            out.setdefault(str(keys[0]), set()).add(e)
    return out
