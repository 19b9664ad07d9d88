"""The peer verdict's part of an acceptance run: the NODES lines, and whether they fail it.

A run with ``--distribute`` measures every partition's nodes in one session; each node is
judged against its peers there (:mod:`placement.judgement.peers`), from the first session,
with no baseline. A node named, or a partition with no majority to judge by, fails the
run, and the ACCEPTANCE line names the nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..judgement import peer_cases, runreport

if TYPE_CHECKING:
    from ..judgement.peers import PeerJudgement
    from .run import Part


@dataclass
class PeerLines:
    """The NODES lines of a run, and the notes its ACCEPTANCE line carries."""

    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    judgements: list["PeerJudgement"] = field(default_factory=list)

    @property
    def fails(self) -> bool:
        return any(j.fails for j in self.judgements)


def of_parts(parts: list["Part"]) -> PeerLines:
    """The peer verdict of every partition of the run's parts that ran on several nodes."""
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
    return out
