"""The peer verdict's part of an acceptance run: the NODES lines, and whether they fail it.

A run with ``--distribute`` measures every partition's nodes in one session; each node is
judged against its peers there (:mod:`placement.judgement.peers.partition`), from the first session,
with no baseline. A node named, or a partition with no majority to judge by, fails the
run, and the ACCEPTANCE line names the nodes, unless the run's confirmation session did not
show it again (:meth:`.confirmation.Confirmation.judge_peers`; :meth:`PeerLines.confirmed_by`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Protocol

from ..judgement import baselines, peers, reading, verdict
from ..util import PlacementError, one_line
from .record import Finding


class ReadPart(Protocol):
    """A run report of the run, read once (the acceptance run's ``Part``); named by
    shape so that this module need not import the run that imports it."""

    report: reading.run_report.RunReport


#: the odd and unjudged nodes a count line names (the record keeps every one)
NAMED_MAX = 20


@dataclass(frozen=True)
class NodeCount:
    """How many nodes the peer verdict judged, how many it found alike, which it named odd
    and which it could not judge: what a site reads first, as Intel Cluster Checker's
    summary opens (``4 nodes judged: 3 alike, 1 odd: n3``). The summary's line, the record
    and the report's partition page all show this one object."""

    judged: int
    alike: int
    odd: list[str]
    not_judged: list[str]
    #: no majority to judge by (values or topology): "alike" then means only "not named"
    no_majority: bool = False
    #: judged, neither alike nor odd: two nodes that differ with nothing to tell which is
    #: odd (a partition of two, or the two left of three)
    undecided: list[str] = field(default_factory=list)
    #: judged and not odd, but named by the run's load line (another job held its CPUs
    #: while it measured): its values may still sit among its peers', so it is not alike
    loaded: list[str] = field(default_factory=list)
    #: declared nodes the session did not run on (the system file's ``extras['nodes']``
    #: less the nodes seen): not counted above, and not accepted by this run
    absent: int = 0

    @classmethod
    def of(cls, judgements: Sequence[peers.partition.PeerJudgement],
           cleared: set[str] = frozenset(),
           dismissed: set[tuple[str, str]] = frozenset(),
           loaded: set[str] = frozenset()) -> NodeCount:
        """The count over ``judgements`` (one partition's, or a run's every partition): a
        node is judged when it has a value held against its peers or a line names it; a
        node its confirmation session did not name again (``dismissed``), or any node of
        a partition whose failure it did not show again (``cleared``), counts alike, unless
        the run's standing load line names it (``loaded``)."""
        judged, odd, not_judged, undecided, none, absent = 0, [], [], [], False, 0
        busy: list[str] = []
        for j in judgements:
            if j.unshared:              # no value on two nodes: no verdict, nothing counted
                continue
            absent += j.absent
            seen = set(j.measured) | set(j.named)
            judged += len(seen)
            if j.where in cleared:
                named = []
            else:
                named = [n for n in j.named if (j.where, n) not in dismissed]
                none = none or j.no_majority or j.topology_split
            odd += named
            undecided += [n for n in j.undecided if n in seen and n not in named]
            busy += [n for n in j.nodes if n in seen and n in loaded and n not in named
                     and n not in j.undecided]
            not_judged += [n for n in j.nodes if n not in seen]
        return cls(judged, judged - len(odd) - len(undecided) - len(busy), odd, not_judged,
                   none, undecided, busy, absent)

    def text(self) -> str:
        """``4 nodes judged: 3 alike, 1 odd: n3`` (``, 2 undecided: n1, n2``,
        ``, 1 under a load: n2`` and ``, 1 not judged: n4`` when so)."""
        out = f"{self.judged} nodes judged: {self.alike} alike, {len(self.odd)} odd" + \
            _names(self.odd)
        if self.undecided:
            out += f", {len(self.undecided)} undecided" + _names(self.undecided)
        if self.loaded:
            out += f", {len(self.loaded)} under a load" + _names(self.loaded)
        if self.not_judged:
            out += f", {len(self.not_judged)} not judged" + _names(self.not_judged)
        if self.absent:
            out += f", {self.absent} declared not in this session"
        return out + (" (no majority to judge by)" if self.no_majority else "")

    def as_dict(self) -> dict:
        return asdict(self)


def _names(nodes: list[str]) -> str:
    """``: n3, n4`` (the first :data:`NAMED_MAX`, then how many more); "" for none."""
    if not nodes:
        return ""
    return ": " + one_line.first_of(nodes, NAMED_MAX, sep=", ")


def count_finding(system: str, count: NodeCount) -> Finding:
    """The summary's first line for a run judged by its peers."""
    return Finding("COUNT", f"COUNT {system}: {count.text()}", system, data=count.as_dict())


def peer_finding(where: str, part: peers.partition.PeerLine) -> Finding:
    """A line of a partition's peer verdict as a finding, its data as the verdict gave it."""
    return Finding(part.kind, part.line, where, part.node, dict(part.data))


@dataclass
class PeerLines:
    """The NODES and HISTORY lines of a run, and the notes its ACCEPTANCE line carries."""

    judgements: list[peers.partition.PeerJudgement] = field(default_factory=list)
    #: the HISTORY findings (:func:`own_history`)
    history: list[Finding] = field(default_factory=list)
    #: the partitions whose failure a confirmation session did not show again
    cleared: set[str] = field(default_factory=set)
    #: the (partition, node) pairs a confirmation session did not name again
    dismissed: set[tuple[str, str]] = field(default_factory=set)
    #: the nodes the run's standing load line names (counted under a load, not alike)
    loaded: set[str] = field(default_factory=set)

    def confirmed_by(self, cleared: set[str], dismissed: set[tuple[str, str]]) -> None:
        """What the run's confirmation session did not show again: those partitions no
        longer fail the run, those nodes are no longer named in its notes."""
        self.cleared, self.dismissed = set(cleared), set(dismissed)

    @property
    def findings(self) -> list[Finding]:
        """The NODES findings, less those of a partition whose failure a confirmation
        session dismissed (its UNCONFIRMED lines quote them), then the HISTORY findings."""
        return [peer_finding(j.where, p) for j in self.judgements
                if j.where not in self.cleared for p in j.parts()] + self.history

    @property
    def lines(self) -> list[str]:
        return [f.line for f in self.findings]

    @property
    def fails(self) -> bool:
        return any(j.fails and j.where not in self.cleared for j in self.judgements)

    def named(self, j: peers.partition.PeerJudgement) -> list[str]:
        """The nodes of ``j`` that stand (named, and not dismissed by a confirmation)."""
        return [n for n in j.named if (j.where, n) not in self.dismissed]

    @property
    def notes(self) -> list[str]:
        """``odd nodes of P: n2, n3`` for each partition whose failure stands, and the
        declared nodes a partition's session did not run on (the one line a scheduled run
        ends with says so: its PASS is of the nodes it ran on)."""
        out = [f"{j.absent} of the {j.declared_nodes} nodes of {j.where} not in this session"
               for j in self.judged if j.absent]
        for j in self.judgements:
            if j.fails and j.where not in self.cleared:
                what = ", ".join(self.named(j)) or "no majority"
                out.append(f"odd nodes of {j.where}: {what}"
                           + ("; no majority to judge by" if j.no_majority and self.named(j)
                              else ""))
        return out

    @property
    def gaps(self) -> list[str]:
        """What the peer verdict could not judge (:attr:`PeerJudgement.gaps`): each makes
        the run incomplete, never a pass."""
        return [g for j in self.judgements for g in j.gaps]

    @property
    def judged(self) -> list[peers.partition.PeerJudgement]:
        """The partitions with a peer verdict: those with a value measured on two nodes (a
        partition with none has only its NOTE, no count)."""
        return [j for j in self.judgements if not j.unshared]

    @property
    def count(self) -> NodeCount:
        """The nodes of every partition judged, counted (:class:`NodeCount`)."""
        return NodeCount.of(self.judged, self.cleared, self.dismissed, self.loaded)

    def nodes(self) -> dict:
        """The record's ``nodes``: the run's count, and each partition's under its name;
        empty for a run no peer verdict judged."""
        if not self.judged:
            return {}
        return {**self.count.as_dict(),
                "partitions": {j.where: NodeCount.of([j], self.cleared, self.dismissed,
                                                     self.loaded).as_dict()
                               for j in self.judged}}


def judgements(parts: Sequence[ReadPart]) -> list[peers.partition.PeerJudgement]:
    """The peer verdict of every partition of the parts that ran on several nodes."""
    if not parts:
        return []
    return peers.cases.judge_report(reading.run_report.pool([p.report for p in parts]))


def of_parts(parts: Sequence[ReadPart], system: str = "") -> PeerLines:
    """The peer verdict of every partition of the run's parts that ran on several nodes,
    then each node against its own baseline sessions (:func:`own_history`)."""
    if not parts:
        return PeerLines()
    report = reading.run_report.pool([p.report for p in parts])
    out = PeerLines(judgements=peers.cases.judge_report(report))
    if system and out.judgements:
        out.history = own_history(report, system)
    return out


def own_history(report: reading.run_report.RunReport, system: str) -> list[Finding]:
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
    base = OwnBaseline.of(old, str(path))
    partition = {c.node: c.partition for c in report.cases}
    new_of = by_node(new)
    lines = []
    for node, only in sorted(entries_by_node(new).items()):
        lines += base.judge(system, node, partition.get(node), only, new, new_of)[1]
    return lines


@dataclass
class OwnBaseline:
    """A system's baseline split once for judging each node against its own entries (the
    HISTORY line's, and a node's history page's, one judgement)."""

    old: dict
    #: the baseline's path, as its judgements name it
    where: str
    stored: dict
    old_of: dict

    @classmethod
    def of(cls, old: dict, where: str) -> OwnBaseline:
        return cls(old, where, baselines.samples.entries(old, where), by_node(old))

    def judge(self, system: str, node: str, part: str | None, only: set, new: dict,
              new_of: dict) -> tuple[baselines.samples.Judgement, list[Finding]]:
        """``node``'s values of the run ``new`` (``only``: its entries; ``new_of``: ``new``
        by node) against its own entries, or, with none of its own stored, against its
        partition's pooled entries; the judgement and its HISTORY line."""
        if only & self.stored.keys():
            judged = baselines.samples.judge_entries(self.old_of.get(node, {}),
                                                     new_of.get(node, {}), self.where,
                                                     only=only)
            return judged, _history(system, node, part or "", judged, "")
        instead = baselines.pool.in_stead(new, node, part or "")
        judged = baselines.samples.judge_entries(
            self.old, instead, self.where, only=set(baselines.samples.entries(instead, "run")))
        return judged, _history(system, node, part or "", judged, _pool_text(judged, part))


def _history(system: str, node: str, part: str, judgement: baselines.samples.Judgement,
             pool: str) -> list[Finding]:
    """One node's HISTORY line (none when nothing of it was judged): against its own
    sessions, or against the pool (``pool``: what the pool holds)."""
    judged = [j.verdict for j in judgement if j.verdict is not None]
    if not judged:
        return []
    c = counts_of(judged)
    k = sorted(v.sessions for v in judged)[len(judged) // 2]
    against = pool or f"against its own {k} baseline session(s)"
    shift = judgement.node
    flagged = shift is not None and shift.flagged
    line = (f"HISTORY {system} {node}: {against}: {c['regressed']} regressed, "
            f"{c['improved']} improved, {c['unchanged']} unchanged, "
            f"{c['undecided']} undecided of {c['of']}"
            + (f"; {shift.line()}" if flagged else ""))
    return [Finding("HISTORY", line, f"{system.split(':')[0]}:{part}" if part else system, node,
                    {"against": "pool" if pool else "own", "sessions": k, **c,
                     "node_percent": math.copysign(shift.percent, shift.shift) if flagged
                     else None})]


def counts_of(judged: Sequence[verdict.over_sessions.Verdict]) -> dict[str, int]:
    """How many values are regressed, improved, unchanged and undecided, ``of`` how many:
    the numbers a line and the report both show."""
    c = verdict.over_sessions.counts(list(judged))
    return {"regressed": c[verdict.over_sessions.REGRESSED],
            "improved": c[verdict.over_sessions.IMPROVED],
            "unchanged": c[verdict.over_sessions.UNCHANGED],
            "undecided": c[verdict.over_sessions.UNDECIDED], "of": len(judged)}


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


def by_node(tree: dict) -> dict[str, dict]:
    """A reference file or a run's entries split by node, in one pass: per node, its own
    subtree of each per-node test (ReFrame's intervals and the samples alike) beside the
    file's own fields (``_provenance``, the control value). Why: a node judged against its
    own entries needs nothing of the other nodes' (a value's siblings share its node), and
    judging each node against the whole file cost each node the file's size, a partition
    the square of its nodes."""
    shared = {k: v for k, v in tree.items()
              if str(k).startswith("_") and k != baselines.samples.SAMPLES_KEY}
    out: dict[str, dict] = {}
    for where, tests in ((None, tree), (baselines.samples.SAMPLES_KEY,
                                        tree.get(baselines.samples.SAMPLES_KEY) or {})):
        for test, sub in tests.items():
            if str(test).startswith("_") or not isinstance(sub, dict):
                continue
            at = baselines.pool.node_level(sub.get("$index") or [])
            if at is not None:
                _split(sub, at, 0, (), (test, sub["$index"]), where, shared, out)
    return out


def _split(n: dict, at: int, level: int, path: tuple, test: tuple[str, list],
           where: str | None, shared: dict, out: dict[str, dict]) -> None:
    """:func:`by_node`'s walk down one test's tree to its node level (a function of its own:
    a nested one that calls itself is a reference cycle)."""
    for k, v in n.items():
        if k == "$index" and level == 0:
            continue
        if level < at:
            if isinstance(v, dict):
                _split(v, at, level + 1, path + (k,), test, where, shared, out)
            continue
        tree = out.setdefault(str(k), dict(shared))
        if where is not None:
            tree = tree.setdefault(where, {})
        d = tree.setdefault(test[0], {"$index": test[1]})
        for p in path:
            d = d.setdefault(p, {})
        d[k] = v


def entries_by_node(tree: dict) -> dict[str, set]:
    """A run's entries by the node its test's index names (per-node entries only)."""
    out: dict[str, set] = {}
    for e in baselines.samples.entries(tree, "run"):
        test, keys, _ = e
        at = baselines.pool.node_level(tree.get(test, {}).get("$index") or [])
        if at is not None and len(keys) > at and not baselines.pool.is_key(keys[at]):
            out.setdefault(str(keys[at]), set()).add(e)
    return out
