"""The peer verdict's part of an acceptance run: the NODES lines, and whether they fail it.

A run with ``--distribute`` measures every partition's nodes in one session; each node is
judged against its peers there (:mod:`placement.judgement.peers.partition`), from the first session,
with no baseline. A node named, or a partition with no majority to judge by, fails the
run, and the ACCEPTANCE line names the nodes, unless the run's confirmation session did not
show it again (:meth:`.confirmation.Confirmation.judge_peers`; :meth:`PeerLines.confirmed_by`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..judgement import baselines, peers, reading, verdict
from ..util import PlacementError


class ReadPart(Protocol):
    """A run report of the run, read once (the acceptance run's ``Part``); named by
    shape so that this module need not import the run that imports it."""

    report: reading.run_report.RunReport


@dataclass
class PeerLines:
    """The NODES lines of a run, and the notes its ACCEPTANCE line carries."""

    judgements: list[peers.partition.PeerJudgement] = field(default_factory=list)
    #: the HISTORY lines (:func:`own_history_lines`)
    history: list[str] = field(default_factory=list)
    #: the partitions whose failure a confirmation session did not show again
    cleared: set[str] = field(default_factory=set)
    #: the (partition, node) pairs a confirmation session did not name again
    dismissed: set[tuple[str, str]] = field(default_factory=set)

    def confirmed_by(self, cleared: set[str], dismissed: set[tuple[str, str]]) -> None:
        """What the run's confirmation session did not show again: those partitions no
        longer fail the run, those nodes are no longer named in its notes."""
        self.cleared, self.dismissed = set(cleared), set(dismissed)

    @property
    def lines(self) -> list[str]:
        """The NODES lines, less those of a partition whose failure a confirmation session
        dismissed (its UNCONFIRMED lines quote them), then the HISTORY lines."""
        return [ln for j in self.judgements if j.where not in self.cleared
                for ln in j.lines()] + self.history

    @property
    def fails(self) -> bool:
        return any(j.fails and j.where not in self.cleared for j in self.judgements)

    def named(self, j: peers.partition.PeerJudgement) -> list[str]:
        """The nodes of ``j`` that stand (named, and not dismissed by a confirmation)."""
        return [n for n in j.named if (j.where, n) not in self.dismissed]

    @property
    def notes(self) -> list[str]:
        """``odd nodes of P: n2, n3`` for each partition whose failure stands."""
        out = []
        for j in self.judgements:
            if j.fails and j.where not in self.cleared:
                what = ", ".join(self.named(j)) or "no majority"
                out.append(f"odd nodes of {j.where}: {what}"
                           + ("; no majority to judge by" if j.no_majority and self.named(j)
                              else ""))
        return out


def judgements(parts: Sequence[ReadPart]) -> list[peers.partition.PeerJudgement]:
    """The peer verdict of every partition of the parts that ran on several nodes."""
    if not parts:
        return []
    return peers.cases.judge_report(reading.run_report.pool([p.report for p in parts]))


def of_parts(parts: Sequence[ReadPart], system: str = "") -> PeerLines:
    """The peer verdict of every partition of the run's parts that ran on several nodes,
    then each node against its own baseline sessions (:func:`own_history_lines`)."""
    if not parts:
        return PeerLines()
    report = reading.run_report.pool([p.report for p in parts])
    out = PeerLines(judgements=peers.cases.judge_report(report))
    if system and out.judgements:
        out.history = own_history_lines(report, system)
    return out


def own_history_lines(report: reading.run_report.RunReport, system: str) -> list[str]:
    """Today's verdict per node: each node's values against its own entries of the system's
    baseline (``baseline record`` keeps a distributed run per node), judged together with
    that node's common shift alone; a node with no entry of its own (replaced, renamed,
    added, or down when the baseline was recorded) against its partition's pooled entries
    (:mod:`placement.judgement.baselines.pool`). Information: a regressed value of a node's
    own entries already fails the run through the verdict over every node's entries, and a
    node unlike its peers today through the NODES lines."""
    from ..util import baseline_file
    path = baseline_file(system)
    if baselines.store.refusal(path):
        return []
    old = baselines.store.load(path)
    try:
        new = baselines.store.from_run(report, system.split(":")[0])
    except PlacementError:
        return []
    stored = baselines.samples.entries(old, str(path))
    partition = {c.node: c.partition for c in report.cases}
    lines = []
    for node, only in sorted(entries_by_node(new).items()):
        if only & stored.keys():
            lines += _history_line(system, node, baselines.samples.judge_entries(
                old, new, str(path), only=only), "")
            continue
        instead = baselines.pool.in_stead(new, node, partition.get(node, ""))
        judged = baselines.samples.judge_entries(old, instead, str(path),
                                            only=set(baselines.samples.entries(instead, "run")))
        lines += _history_line(system, node, judged, _pool_text(judged, partition.get(node)))
    return lines


def _history_line(system: str, node: str, judgement: baselines.samples.Judgement,
                  pool: str) -> list[str]:
    """One node's HISTORY line (none when nothing of it was judged): against its own
    sessions, or against the pool (``pool``: what the pool holds)."""
    judged = [j.verdict for j in judgement if j.verdict is not None]
    if not judged:
        return []
    c = verdict.over_sessions.counts(judged)
    k = sorted(v.sessions for v in judged)[len(judged) // 2]
    against = pool or f"against its own {k} baseline session(s)"
    shift = judgement.node
    flagged = f"; {shift.line()}" if shift is not None and shift.flagged else ""
    return [f"HISTORY {system} {node}: {against}: {c[verdict.over_sessions.REGRESSED]} regressed, "
            f"{c[verdict.over_sessions.IMPROVED]} improved, {c[verdict.over_sessions.UNCHANGED]} unchanged, "
            f"{c[verdict.over_sessions.UNDECIDED]} undecided of {len(judged)}{flagged}"]


def _pool_text(judgement: baselines.samples.Judgement, partition: str | None) -> str:
    """``no entries of its own, against partition P's pooled baseline (N nodes, K
    sessions)``: the nodes and sessions of the pooled entries it was judged against."""
    nodes, sessions = set(), set()
    for j in judgement:
        s = judgement.stored.get(j.entry)
        if j.verdict is not None and s is not None:
            for sid, names, _ in s.pooled:
                nodes |= set(names)
                sessions.add(sid)
    return (f"no entries of its own, against partition {partition}'s pooled baseline "
            f"({len(nodes)} nodes, {len(sessions)} session(s))")


def entries_by_node(tree: dict) -> dict[str, set]:
    """A run's entries by the node its test's index names (per-node entries only)."""
    out: dict[str, set] = {}
    for e in baselines.samples.entries(tree, "run"):
        test, keys, _ = e
        at = baselines.pool.node_level(tree.get(test, {}).get("$index") or [])
        if at is not None and len(keys) > at and not baselines.pool.is_key(keys[at]):
            out.setdefault(str(keys[at]), set()).add(e)
    return out
