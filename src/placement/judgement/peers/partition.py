"""The peer verdict: each node of a partition judged against the same values on its peers,
measured in the same session.

A partition's nodes measured in one session are replicates of one machine at one time,
so a node 30 % slower than the others is visible on the first day, with no baseline at
all. **The node is the replicate**: each value is reduced to one number per node (the
median of its launches, on a log scale signed so that worse is positive), and a node is
compared with the other nodes' numbers, never its launches with theirs (the launches of
one job share its node and its minute: pseudo-replication).

Two questions, each with its own test (:mod:`.rank_tests` holds the numbers):

1. **Does the node stand apart?** Its rank among the partition's nodes on every value,
   summed (:func:`.rank_tests.rank_sum_p`): when the nodes are alike each rank is uniform,
   so the sum's distribution is known exactly and the chance of calling an unchanged node
   follows from the level, ``PEER_ALPHA / (2 * nodes)`` per node and side (Bonferroni over
   the nodes and both directions): nothing is fitted to sessions. The test knows
   nothing of units or spreads, so it is robust to values that differ by orders of
   magnitude, and it needs every value only to be measured on every node.
2. **On which values, by how much?** Each value of each node against its peers' median
   (leave one node out: the node under test never moves its own centre), with the
   peers' spread between nodes moderated over the node's values (limma, as the verdict
   does over sessions: :func:`.moderation.fit_f_dist`) and never tighter than the node's
   own launches allow; Benjamini-Hochberg over nodes x values. A value is called when its
   q is at most ``PEER_ALPHA`` and its change at least ``PEER_EFFECT``.

A node is **named** on any of three paths, the level split between them (Bonferroni,
:mod:`.levels`):

* it stands apart by rank over all its values (split again over the nodes and sides)
  and at least ``PEER_MIN_VALUES`` of its values are called on that side;
* it is slower over the values that **use every PU** (one thread per PU the node
  allows, :attr:`PeerValue.all_pus`), split over the nodes, and by at least
  ``PEER_EFFECT`` in the median of those values. Why: a node short of CPU time (a cap,
  a throttle, a stray process) is slower where no PU is spare and like its peers where
  one is, so over all values its ranks are diluted. Over those values alone the node's
  summed log values are tested against every dealing of each value's numbers to the
  nodes (:func:`.ranks.slower_pvalues`), as exact as a rank sum and nothing fitted,
  but weighing how far behind the node is;
* or, whatever its ranks, at least ``PEER_VALUES_ALONE`` of its measurements, and
  ``PEER_VALUES_SHARE`` of those judged, have a value called on one side by the value
  test at ``PEER_ALPHA / 2``, while it has 3 peers or more (a case's time and its rate
  are one measurement: one bad launch moves both, and counting both made one value two). Why: a fault can move a few values
  only, and with four nodes no rank test can call a node that is worst on four values
  of twelve and middling on the rest; Benjamini-Hochberg over nodes x values, with no
  node odd, calls any value with a chance of at most its level, so this path's false
  alarms are bounded by it as long as the value test's p-values hold (the validation
  sessions check that). The share keeps a node whose few values had a bad minute (a
  one-off -50% on 3 values of 126) from being named: a fault moves a tenth of the
  values or more.

When no node is named and no majority was found that way, a partition of an even number
of nodes up to :data:`HALVES_MAX_NODES` is also asked whether **half of its nodes stand
apart** from the other half (two groups of two in four): each half's rank sum over the
values against its exact distribution when the nodes are alike, over every half and both
sides (Bonferroni), then over the values that use every PU (slower only), each at its
share of the rank paths' level, and by at least ``PEER_EFFECT`` in the median. A half
that stands apart is no majority to judge by: it is named, and the run fails. Why: with
two odd nodes of four each odd node's peers hold the other one, so neither stands apart
alone.

Naming is step-down: once a node is named, the
rest are judged again among themselves, so one slow node neither hides a second nor
makes the others look fast. When the named nodes are half the partition or more there
is **no majority** to judge by: the nodes are named and the partition fails, never a
pass; one named of three is a majority of two when those two are within ``PEER_EFFECT``
of each other.

**Coverage** (:mod:`.coverage`): a value counts only when it was measured on two nodes or
more (a value of one node has no peer); a partition with none (a run without
``--distribute`` whose cases landed on different nodes) gets no verdict, only a note, and
changes no run's outcome. A node is judged on its usable values (finite and
positive) only. One with none, or with fewer than half of its peers' (their median
count), is left out, named on its own line and makes the run incomplete: never alike,
never a peer. Fewer than three nodes judged: nothing to judge by (a note); two of them
that differ by ``PEER_EFFECT`` or more get a line instead and the run is incomplete, as
which of two is odd cannot be told.

The **topology** of every node (its fingerprint from hwloc) is compared with the
majority's: a node that differs gets its own line, whatever its values say. It is also
compared with the node the system file declares (:mod:`.declared`), so a partition whose
nodes all lack a DIMM, alike among themselves, still fails.
"""

from __future__ import annotations

import math
import re
import statistics
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from .. import verdict
from . import coverage, levels, rank_tests
from .declared import DeclaredDiff, DeclaredNode, declared_diffs
from .ranks import Ranked, half_apart, rank_p, slower_where_every_pu, stand_apart, typical_change
from .topology import TopologyDiff, topology_diffs
from ..rules import (HALVES_MAX_NODES, MIN_NODES, PEER_ALPHA, PEER_EFFECT,
                     PEER_MIN_VALUES, PEER_VALUES_ALONE, PEER_VALUES_SHARE,
                     VALUES_ALONE_MIN_NODES)


@dataclass(frozen=True)
class PeerValue:
    """One value measured on several nodes of one partition in one session."""

    name: str
    higher_is_better: bool
    #: node -> its launches of the program (positive numbers)
    launches: Mapping[str, Sequence[float]]
    #: values of one measurement (a case's time and its rate) share a group: the rank
    #: test counts a group once, its draws being one draw (None: a group of its own)
    group: Hashable = None
    #: the case ran one thread on every PU its node allows, on every node: where a node
    #: short of CPU time shows (:mod:`.levels`)
    all_pus: bool = False


@dataclass(frozen=True)
class OddNode:
    """A node named: which side, on how many values, by how much, and the rank test's p."""

    node: str
    slower: bool
    called: int
    judged: int
    #: median over the called values of the change in performance (slower: negative)
    median: float
    p: float
    peers: int
    #: which values the counts are of: ``""`` all, ``" that use every PU"`` when the node
    #: was named on those alone
    scope: str = ""
    #: of the same values, those on the other side (faster, for a node named slower)
    opposite: int = 0

    @property
    def worse(self) -> int:
        """Its values called worse than its peers' (of ``judged``, when it was named)."""
        return self.called if self.slower else self.opposite

    @property
    def better(self) -> int:
        """Its values called better than its peers' (of ``judged``, when it was named)."""
        return self.opposite if self.slower else self.called

    def line(self, where: str) -> str:
        side = "slower" if self.slower else "faster"
        return (f"NODES {where}: {self.node} {side} than its {self.peers} peers on "
                f"{self.called} of {self.judged} values{self.scope} "
                f"(median {self.median:+.0%})")


@dataclass(frozen=True)
class PeerLine:
    """One line of a partition's peer verdict with what it says, so that a reader (the
    verdict record) takes the node and the numbers from here, not from the words."""

    #: ``NODES`` (a node named, a topology, no majority, the nodes alike) or ``NOTE``
    kind: str
    line: str
    node: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class PeerJudgement:
    """A partition's nodes judged against each other, with what the report draws."""

    where: str
    nodes: list[str]
    values: list[str]
    #: nodes x values: change in performance against the peers' median (slower negative)
    change: np.ndarray
    #: nodes x values: +1 called worse, -1 called better, 0 not called
    called: np.ndarray
    odd: list[OddNode] = field(default_factory=list)
    topology: list[TopologyDiff] = field(default_factory=list)
    #: nodes whose fingerprint differs from the node the system file declares
    declared: list[DeclaredDiff] = field(default_factory=list)
    no_majority: bool = False
    #: nodes apart on their ranks alone, in two groups with no majority (no value called):
    #: ``(node, slower)``
    apart: list[tuple[str, bool]] = field(default_factory=list)
    #: the fingerprints differ with none shared by more than half the nodes
    topology_split: bool = False
    #: why nothing was judged (too few nodes or values), else ""
    note: str = ""
    #: the nodes with a value held against their peers (none when too few nodes were
    #: measured to judge by); a node known only by its fingerprint has none
    measured: list[str] = field(default_factory=list)
    #: each node's number of usable values (finite and positive)
    usable: dict[str, int] = field(default_factory=dict)
    #: the nodes left out: no usable value, or under half of their peers' (:mod:`.coverage`)
    not_judged: list[coverage.NotJudged] = field(default_factory=list)
    #: two nodes compared against the margin alone (a partition of two judged nodes, or
    #: the two left of three once one is named)
    pair: coverage.PairGap | None = None
    #: no value was measured on two nodes (a run without ``--distribute``): no verdict at
    #: all, only :attr:`note`; the run's outcome is not the peer verdict's to change
    unshared: bool = False

    @property
    def judged(self) -> list[str]:
        """The nodes judged on their values (every node but those :attr:`not_judged`; none
        when no value was shared)."""
        if self.unshared:
            return []
        left = {x.node for x in self.not_judged}
        return [n for n in self.nodes if n not in left]

    @property
    def undecided(self) -> list[str]:
        """Two nodes that differ by more than the margin with nothing to tell which is odd."""
        return self.pair.nodes if self.pair is not None and self.pair.differ else []

    @property
    def gaps(self) -> list[str]:
        """What the verdict could not judge: a node left out, or two nodes that differ with
        nothing to tell which is odd; the run is incomplete while any is left."""
        out = [x.gap(self.where) for x in self.not_judged]
        if self.undecided and not self.no_majority:
            out.append(self.pair.gap(self.where))
        return out

    @property
    def named(self) -> list[str]:
        """Every node a line names: odd values first, then apart on ranks, then topology
        (against the peers, then against the declared node)."""
        out = [o.node for o in self.odd]
        out += [n for n, _ in self.apart if n not in out]
        out += [t.node for t in self.topology if t.node not in out]
        return out + [n for d in self.declared for n in d.nodes if n not in out]

    @property
    def fails(self) -> bool:
        """A node named, or no majority to judge by (values or topology): never a pass."""
        return bool(self.named) or self.no_majority or self.topology_split

    def _no_majority_line(self) -> str:
        """The groups: the slower nodes, the faster ones (named or apart on ranks), the rest."""
        slow = [o.node for o in self.odd if o.slower] + [n for n, sl in self.apart if sl]
        fast = [o.node for o in self.odd if not o.slower] + \
            [n for n, sl in self.apart if not sl]
        rest = [n for n in self.judged if n not in slow and n not in fast]
        groups = [f"{', '.join(sorted(g, key=node_order))} {side}"
                  for g, side in ((slow, "slower"), (fast, "faster")) if g]
        than = f" than {', '.join(rest)}" if rest else ""
        apart = ", which differ from each other" if self.undecided else ""
        return (f"NODES {self.where}: no majority to judge by: {' and '.join(groups)}{than}"
                f"{apart} (no group of more than half of the {len(self.judged)} nodes)")

    def _alike_line(self) -> PeerLine:
        """The judged nodes alike, on how many usable values (each node's, where fewer)."""
        judged = self.judged
        counts = [self.usable.get(n, 0) for n in judged]
        most = max(counts, default=0)
        fewer = [f"{n} on {c}" for n, c in zip(judged, counts) if c < most]
        each = f", {', '.join(fewer)}" if fewer else ""
        return PeerLine(
            "NODES", f"NODES {self.where}: {len(judged)} nodes alike on {most} values"
            f"{each} (no node stands apart)", "",
            {"what": "alike", "nodes": len(judged), "values": most,
             "usable": {n: self.usable.get(n, 0) for n in judged}})

    def lines(self) -> list[str]:
        return [p.line for p in self.parts()]

    def parts(self) -> list[PeerLine]:
        """The lines with their data: each node not judged, the note, each node named on its
        values, each topology that differs, two nodes that differ, no majority, and the
        nodes alike when nothing else."""
        out = [PeerLine("NODES", x.line(self.where), x.node,
                        {"what": "not judged", "usable": x.usable, "peers_had": x.peers_had})
               for x in self.not_judged]
        if self.note:
            what = "no value on two nodes" if self.unshared else "not judged"
            out.append(PeerLine("NOTE", f"NOTE {self.where}: {self.note}", "",
                                {"what": what, "nodes": len(self.nodes)}))
        out += [PeerLine("NODES", o.line(self.where), o.node,
                         {"what": "odd", "slower": o.slower, "peers": o.peers,
                          "called": o.called, "judged": o.judged, "median": o.median,
                          "p": o.p, "scope": o.scope.strip(), "worse": o.worse,
                          "better": o.better}) for o in self.odd]
        out += [PeerLine("NODES", t.line(self.where), t.node,
                         {"what": "topology", "peers": t.peers, "diffs": list(t.diffs)})
                for t in self.topology]
        out += [PeerLine("NODES", d.line(self.where), d.nodes[0] if len(d.nodes) == 1 else "",
                         {"what": "declared", "nodes": list(d.nodes), "declared": d.source,
                          "diffs": list(d.diffs)}) for d in self.declared]
        if self.undecided:
            p = self.pair
            out.append(PeerLine("NODES", f"NODES {self.where}: {p.text()}", "",
                                {"what": "pair", "nodes": p.nodes, "values": p.values,
                                 "change": p.change}))
        if self.no_majority:
            out.append(PeerLine("NODES", self._no_majority_line(), "",
                                {"what": "no majority", "nodes": len(self.judged),
                                 "named": self.named}))
        if self.topology_split:
            n = len(self.nodes)
            out.append(PeerLine(
                "NODES", f"NODES {self.where}: topology: no majority to judge by (no "
                f"fingerprint shared by more than half of {n} nodes)", "",
                {"what": "topology split", "nodes": n}))
        if len(out) == len(self.not_judged) and self.judged:
            out.append(self._alike_line())
        return out


def judge(values: Sequence[PeerValue], where: str,
          fingerprints: Mapping[str, Mapping[str, Any]] | None = None,
          alpha: float = PEER_ALPHA, effect: float = PEER_EFFECT,
          declared: DeclaredNode | None = None) -> PeerJudgement:
    """The partition ``where`` (``SYSTEM:PART``) judged node by node (module docstring):
    on the values measured on two nodes or more (:func:`shared`; none: no verdict, a note),
    the nodes with too few usable values left out and named (:mod:`.coverage`), the rest
    judged against each other, two of them only against the margin; every fingerprint
    against the majority's and against the ``declared`` node, when there is one."""
    nodes = sorted({n for v in values for n in v.launches}
                   | set(fingerprints or {}), key=node_order)
    had_values, values = bool(values), shared(values)
    m, w, n_launch = matrix(values, nodes)
    out = PeerJudgement(where, nodes, [v.name for v in values], np.full(m.shape, np.nan),
                        np.zeros(m.shape, int))
    if had_values and not values:
        out.unshared, out.note = True, UNSHARED_NOTE
        return out
    out.topology, out.topology_split = topology_diffs(fingerprints or {}, nodes)
    out.declared = declared_diffs(fingerprints or {}, nodes, declared)
    counts = coverage.usable_counts(m)
    out.usable = {n: int(c) for n, c in zip(nodes, counts)}
    out.not_judged = coverage.not_judged(nodes, counts)
    left = {x.node for x in out.not_judged}
    keep = np.asarray([i for i, n in enumerate(nodes) if n not in left], dtype=int)
    kept = [nodes[i] for i in keep]
    if len(keep) < MIN_NODES:
        out.pair = coverage.pair_gap(m[keep], kept, effect) if len(keep) == 2 else None
        out.measured = kept if out.pair is not None else []
        if out.pair is None or not out.pair.differ:
            out.note = _too_few_note(len(nodes), len(keep), out.pair)
        return out
    sub = PeerJudgement(where, kept, out.values, np.full((len(keep), m.shape[1]), np.nan),
                        np.zeros((len(keep), m.shape[1]), int))
    _judge_nodes(values, m[keep], w[keep], n_launch[keep], sub, alpha, effect)
    out.change[keep], out.called[keep] = sub.change, sub.called
    out.odd, out.apart, out.pair = sub.odd, sub.apart, sub.pair
    out.no_majority, out.measured = sub.no_majority, sub.measured
    return out


#: why a partition none of whose values was measured on two nodes gets no verdict
UNSHARED_NOTE = "no value was measured on two nodes (a run without --distribute): no peer verdict"


def shared(values: Sequence[PeerValue]) -> list[PeerValue]:
    """The values measured on two nodes or more: a value of one node has no peer to be
    compared with, and counting it would make a node alike on values no other node ran."""
    return [v for v in values if len(v.launches) >= 2]


def _too_few_note(nodes: int, judged: int, pair: coverage.PairGap | None) -> str:
    """Why a partition of too few judged nodes gets no verdict (two within the margin: how
    close they are)."""
    said = f"{nodes} node(s)" if judged == nodes else f"{judged} of {nodes} nodes judged"
    note = f"{said}: the peer verdict needs {MIN_NODES} or more measured in one session"
    if pair is not None:
        note += (f"; the two are within {PEER_EFFECT:.0%} of each other in the median of "
                 f"{pair.values} values")
    return note


def _judge_nodes(values: Sequence[PeerValue], m: np.ndarray, w: np.ndarray,
                 n_launch: np.ndarray, out: PeerJudgement, alpha: float, effect: float
                 ) -> None:
    """Three or more nodes, each with usable values, judged against each other (``m``,
    ``w``, ``n_launch``: their rows of :func:`matrix`), into ``out``."""
    nodes = out.nodes
    out.measured = [n for n, row in zip(nodes, m) if np.isfinite(row).any()]
    active = np.ones(len(nodes), bool)
    halves = len(nodes) % 2 == 0 and len(nodes) <= HALVES_MAX_NODES
    ranked = ranked_values(values, len(nodes), alpha, halves)
    out.apart = step_down(m, w, n_launch, active, out, alpha, effect, ranked)
    if halves and not out.odd and not out.apart:
        out.apart = half_apart(m[:, ranked.cols], nodes, ranked.levels.half, effect)
        if not out.apart and ranked.levels.half_pu:
            out.apart = half_apart(m[:, ranked.pu_cols], nodes, ranked.levels.half_pu,
                                   effect, slower_only=True)
    # the page's changes: against the nodes left standing, all of them when too few are
    shown = active if active.sum() >= MIN_NODES else np.ones(len(nodes), bool)
    d, p = value_tests(m, w, n_launch, shown)
    out.change = np.where(np.isfinite(d), np.expm1(-d), np.nan)
    out.called = calls(d, p, np.ones(len(nodes), bool), alpha, effect)
    odd = [o.node for o in out.odd]
    out.no_majority = bool(out.apart) or 2 * len(odd) >= len(nodes)
    if not out.no_majority and active.sum() < MIN_NODES:
        # one named of three: the two left are a majority when they agree within the
        # margin; when they differ no two of the three are alike
        rows = np.flatnonzero(active)
        out.pair = coverage.pair_gap(m[rows], [nodes[i] for i in rows], effect)
        out.no_majority = out.pair is not None and out.pair.differ


def ranked_values(values: Sequence[PeerValue], n_nodes: int, alpha: float, halves: bool
                  ) -> Ranked:
    """What the rank tests read of ``values`` on ``n_nodes`` nodes, and at which levels."""
    # also ranked over the values that use every PU alone: a CPU-capped node's one-thread values
    # diluted its ranks
    pu = [v.all_pus for v in values]
    pu_cols = first_of_groups(values, pu)
    return Ranked(first_of_groups(values), pu_cols, np.flatnonzero(pu),
                  levels.split(alpha, n_nodes, len(pu_cols), halves),
                  group_numbers(values))


def first_of_groups(values: Sequence[PeerValue], keep: Sequence[bool] | None = None
                    ) -> np.ndarray:
    """The columns the rank test reads: the first value of each group (of those ``keep``
    marks, when given)."""
    seen: set = set()
    cols = []
    for j, v in enumerate(values):
        if keep is not None and not keep[j]:
            continue
        g = ("own", j) if v.group is None else v.group
        if g not in seen:
            seen.add(g)
            cols.append(j)
    return np.asarray(cols, dtype=int)


def group_numbers(values: Sequence[PeerValue]) -> np.ndarray:
    """Each value's group as a number (a value with none is a group of its own)."""
    ids: dict = {}
    return np.asarray([ids.setdefault(("own", j) if v.group is None else v.group, len(ids))
                       for j, v in enumerate(values)], dtype=int)


def step_down(m: np.ndarray, w: np.ndarray, n_launch: np.ndarray, active: np.ndarray,
              out: PeerJudgement, alpha: float, effect: float, ranked: Ranked
              ) -> list[tuple[str, bool]]:
    """Name odd nodes one round at a time, judging the rest again among themselves
    (``active`` is updated, ``out.odd`` filled); the nodes that stand apart by rank with no
    value called when they are half of those left (no majority), else ``[]``."""
    while active.sum() >= MIN_NODES:
        d, p = value_tests(m, w, n_launch, active)
        q = bh_q(p, active)
        called = called_at(d, q, alpha, effect)
        apart = stand_apart(m[:, ranked.cols], active, ranked.levels.node)
        named = [(i, slower, pr) for i, slower, pr in apart
                 if (called[i] == (1 if slower else -1)).sum() >= PEER_MIN_VALUES]
        pu_named = slower_where_every_pu(m, d, active, ranked, effect,
                                         {i for i, _, _ in named})
        named += pu_named
        if active.sum() >= VALUES_ALONE_MIN_NODES:
            named += called_alone(called_at(d, q, alpha / 2, effect), np.isfinite(d),
                                  ranked.group_of, active, {i for i, _, _ in named},
                                  m[:, ranked.cols])
        if not named:
            # nodes apart on ranks alone, each by PEER_EFFECT over its values: half of
            # those left or more is two groups
            apart = [a for a in apart if typical_change(d[a[0]], a[1]) >= effect]
            if apart and 2 * len(apart) >= active.sum():
                return [(out.nodes[i], slower) for i, slower, _ in apart]
            return []
        on_pus = {i for i, _, _ in pu_named}
        for i, slower, p_rank in named:
            out.odd.append(_odd_on_pus(out.nodes[i], p_rank, d[i], ranked.pu_values,
                                       effect, active) if i in on_pus else
                           _odd(out.nodes[i], slower, p_rank, d[i], called[i], active))
        for i, _, _ in named:
            active[i] = False
    return []


def called_alone(strict: np.ndarray, judged: np.ndarray, group_of: np.ndarray,
                 active: np.ndarray, already: set[int], rank_m: np.ndarray
                 ) -> list[tuple[int, bool, float]]:
    """The active nodes not ``already`` named with at least :data:`PEER_VALUES_ALONE`
    measurements, and :data:`PEER_VALUES_SHARE` of those judged, called on one side
    (``strict``: :func:`calls` at half the level; ``judged``: which values each node has;
    ``group_of``: each value's measurement, so a case's time and rate count once):
    ``(node, slower, p)``, ``p`` the node's rank-sum p on that side (its line's number;
    it did not decide)."""
    out = []
    for i in np.flatnonzero(active):
        if int(i) in already:
            continue
        worse = len(set(group_of[strict[i] == 1]))
        better = len(set(group_of[strict[i] == -1]))
        need = max(PEER_VALUES_ALONE, PEER_VALUES_SHARE * len(set(group_of[judged[i]])))
        if max(worse, better) >= need and worse != better:
            slower = bool(worse > better)
            out.append((int(i), slower, rank_p(rank_m, active, int(i), slower)))
    return out


def node_order(name: str) -> tuple:
    """``n2`` before ``n10``: digits compared as numbers."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def matrix(values: Sequence[PeerValue], nodes: Sequence[str]
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes x values: the median of each node's launches (log, worse positive), their
    variance (log, ``ddof=1``; 0 for one launch) and their number; ``nan`` where missing."""
    where = {n: i for i, n in enumerate(nodes)}
    m = np.full((len(nodes), len(values)), np.nan)
    w = np.zeros(m.shape)
    n_launch = np.zeros(m.shape)
    for j, v in enumerate(values):
        sign = -1.0 if v.higher_is_better else 1.0
        for node, runs in v.launches.items():
            # a handful of launches each: plain Python beats NumPy's per-call cost here
            logs = [sign * math.log(x) for x in runs if math.isfinite(x) and x > 0]
            if not logs:
                continue
            i = where[node]
            m[i, j] = statistics.median(logs)
            w[i, j] = _variance(logs)
            n_launch[i, j] = len(logs)
    return m, w, n_launch


def _variance(xs: list[float]) -> float:
    """The sample variance (``ddof=1``) of a few floats; 0 for one."""
    n = len(xs)
    if n < 2:
        return 0.0
    mean = sum(xs) / n
    return sum((x - mean) ** 2 for x in xs) / (n - 1)


def value_tests(m: np.ndarray, w: np.ndarray, n_launch: np.ndarray, active: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Every node's change against its active peers' median (log, worse positive) and the
    two-sided p of the moderated leave-one-node-out t; ``nan`` where not judged.

    A node outside ``active`` is judged against the active nodes (all of them are its
    peers); an active one against the other active nodes.
    """
    peers_m = np.where(active[:, None], m, np.nan)
    centre, s2, df = _peer_centre_spread(m, peers_m, active)
    d = m - centre
    k = df + 1.0                                           # peers of each node and value
    s2_mod, df_t = _moderated(s2, df)
    var = s2_mod * (1.0 + math.pi / (2.0 * k))
    own = math.pi / 2.0 * np.divide(w, n_launch, out=np.zeros_like(w), where=n_launch > 1)
    var = np.maximum(np.maximum(var, own), 1e-12)
    t = d / np.sqrt(var)
    p = 2.0 * stats.t.sf(np.abs(t), np.minimum(df_t, verdict.moderation.DF_CAP))
    bad = ~np.isfinite(d) | ~np.isfinite(var)
    return np.where(bad, np.nan, d), np.where(bad, np.nan, p)


def _peer_centre_spread(m: np.ndarray, peers_m: np.ndarray, active: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each node's peers' median, variance and its degrees of freedom, per value: leave one
    out for an active node, all active nodes for one already named."""
    centre = rank_tests.loo_median(peers_m)
    s2, df = rank_tests.loo_variance(peers_m)
    if (~active).any():
        # a named node's peers are every active node: the column's own median and variance
        ok = np.isfinite(peers_m)
        n = ok.sum(axis=0)
        with warnings.catch_warnings():     # a column no active node has: nan, said so
            warnings.simplefilter("ignore", RuntimeWarning)
            col_med = np.nanmedian(np.where(n[None, :] >= 2, peers_m, np.nan), axis=0)
            col_var = np.nanvar(peers_m, axis=0, ddof=1)
        out_rows = ~active
        centre[out_rows] = np.where(np.isfinite(m[out_rows]), col_med[None, :], np.nan)
        s2[out_rows] = np.where(np.isfinite(m[out_rows]) & (n >= 3)[None, :],
                                col_var[None, :], np.nan)
        df[out_rows] = np.where(np.isfinite(s2[out_rows]), (n - 1.0)[None, :], np.nan)
    return centre, s2, df


def _moderated(s2: np.ndarray, df: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's peer variances shrunk towards a prior fitted over that node's values
    (:func:`.moderation.fit_f_dist`), and the t's degrees of freedom ``d0 + df``."""
    out, df_t = np.full(s2.shape, np.nan), np.full(s2.shape, np.nan)
    for i in range(s2.shape[0]):
        ok = np.isfinite(s2[i]) & np.isfinite(df[i])
        if not ok.any():
            continue
        try:
            s0, d0 = verdict.moderation.fit_f_dist(s2[i][ok], df[i][ok])
        except ValueError:      # every peer spread zero: nothing to borrow
            s0, d0 = 0.0, 0.0
        if math.isinf(d0):
            out[i, ok], df_t[i, ok] = s0, np.inf
        else:
            out[i, ok] = (d0 * s0 + df[i][ok] * s2[i][ok]) / (d0 + df[i][ok])
            df_t[i, ok] = d0 + df[i][ok]
    return out, df_t


def calls(d: np.ndarray, p: np.ndarray, rows: np.ndarray, alpha: float, effect: float
          ) -> np.ndarray:
    """+1 (worse) / -1 (better) where a value of a node in ``rows`` is called: BH over those
    nodes x values at ``alpha``, and a change of at least ``effect``; 0 elsewhere."""
    return called_at(d, bh_q(p, rows), alpha, effect)


def bh_q(p: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q of the values of the nodes in ``rows``; ``nan`` elsewhere.
    Why apart from :func:`called_at`: a round reads one q-vector at two levels."""
    q = np.full(p.shape, np.nan)
    judged = np.isfinite(p) & rows[:, None]
    if judged.any():
        q[judged] = stats.false_discovery_control(np.clip(p[judged], 0, 1), method="bh")
    return q


def called_at(d: np.ndarray, q: np.ndarray, alpha: float, effect: float) -> np.ndarray:
    """+1 (worse) / -1 (better) where ``q`` is at most ``alpha`` and the change at least
    ``effect``; 0 elsewhere (a ``nan`` q is never called)."""
    out = np.zeros(d.shape, int)
    big = np.abs(np.expm1(np.where(np.isfinite(d), d, 0.0))) >= effect
    hit = np.isfinite(q) & (np.nan_to_num(q, nan=np.inf) <= alpha) & big
    out[hit & (d > 0)] = 1
    out[hit & (d < 0)] = -1
    return out


def _odd_on_pus(node: str, p: float, d: np.ndarray, cols: np.ndarray, effect: float,
                active: np.ndarray) -> OddNode:
    """The line's numbers for a node named slower on the values that use every PU
    (``cols``): those it is slower on by ``effect`` or more, of those judged (and those
    it is faster on by as much, the other side)."""
    row = d[cols]
    judged = row[np.isfinite(row)]
    worse = judged[judged >= math.log1p(effect)]
    perf = np.expm1(-worse)
    return OddNode(node, True, len(worse), len(judged),
                   float(np.median(perf)) if len(perf) else 0.0, p, int(active.sum()) - 1,
                   " that use every PU", int((-np.expm1(judged) >= effect).sum()))


def _odd(node: str, slower: bool, p: float, d: np.ndarray, called: np.ndarray,
         active: np.ndarray) -> OddNode:
    """The line's numbers for a node named on one side (``d``, ``called``: its row)."""
    side = called == (1 if slower else -1)
    perf = np.expm1(-d[side])
    return OddNode(node, slower, int(side.sum()), int(np.isfinite(d).sum()),
                   float(np.median(perf)) if len(perf) else 0.0, p, int(active.sum()) - 1,
                   opposite=int((called == (-1 if slower else 1)).sum()))


