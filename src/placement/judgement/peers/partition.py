"""The peer verdict: each node of a partition judged against the same values on its peers,
measured in the same session.

A partition's nodes measured in one session are replicates of one machine at one time,
so a node 30 % slower than the others is visible on the first day, with no baseline at
all. **The node is the replicate**: each value is reduced to one number per node (the
median of its launches, on a log scale signed so that worse is positive), and a node is
compared with the other nodes' numbers, never its launches with theirs (the launches of
one job share its node and its minute: pseudo-replication).

**One test decides which nodes are named** (:func:`.maxt.judge_matrix`): each value's
node numbers are scaled by their spread between the nodes, a node's score is the mean of
its scaled gaps over a declared family of values (all values; those that use every PU),
and the scores are compared with what they would be if each measurement's numbers had
been dealt to the nodes at random (a permutation test); the largest statistic over every
node, family and, in a small even partition, every half of the nodes (Westfall and
Young's step-down max-T) sets the family-wise level, ``PEER_ALPHA``, so the chance of
naming a node of an unchanged partition follows from the construction, at any size. A
node is named only when it is also at least ``PEER_EFFECT`` slower in the median over the
family: smaller gaps are the ordinary differences between machines. A half named is no
majority to judge by. Nodes are judged within their kind (the same topology
fingerprint), so a partition of two kinds of node is not read as one kind with odd
nodes.

Beside the decision, each value of each node is described against its peers' median
(:func:`value_tests`, leave one node out, the peers' spread moderated over the node's
values), and the values beyond chance and the margin are marked (Benjamini-Hochberg):
what the report's partition page draws. They name no node; a named node's line counts
the values of its family it is at least ``PEER_EFFECT`` slower on.

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

from ...util import LazyModule
from .. import verdict
from . import coverage, leave_one_out, maxt
from .declared import DeclaredDiff, DeclaredNode, declared_diffs
from .topology import TopologyDiff, topology_diffs
from ..rules import MIN_NODES, PEER_ALPHA, PEER_EFFECT

#: imported at its first use (:mod:`placement.util.lazy_module`)
stats = LazyModule("scipy.stats")


#: the ``what`` of the NOTE saying how many declared nodes the session did not run on
#: (about the session, never about one node)
ABSENT = "declared nodes absent"


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
    """A node named: which side, on how many values, by how much, and the test's adjusted p."""

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
    #: the slower half of a kind the test named (no majority to judge by): ``(node, slower)``
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
    #: the nodes of each kind (topology fingerprint) judged apart, when there are two or
    #: more kinds; empty for one
    kinds: list[list[str]] = field(default_factory=list)
    #: the kinds that got no verdict of their values (one node of its kind): nodes, why
    kind_notes: list[tuple[list[str], str]] = field(default_factory=list)
    #: the nodes the system file says the partition has (0: unsaid); those beyond the
    #: nodes the session saw were not accepted by this run (:attr:`absent`)
    declared_nodes: int = 0

    @property
    def absent(self) -> int:
        """How many of the declared nodes the session did not run on."""
        return max(0, self.declared_nodes - len(self.nodes))

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
    def decided(self) -> set[str]:
        """The nodes the verdict reached a verdict on: named, or judged among enough peers
        of their kind to be found alike (not two nodes that cannot tell which is odd, not a
        kind of one, not a partition too small or whose values were not shared)."""
        if self.note or self.unshared or len(self.judged) < MIN_NODES:
            return set(self.named)
        alone = {n for nodes, _ in self.kind_notes for n in nodes}
        return set(self.named) | (set(self.judged) - set(self.undecided) - alone)

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
        """Every node a line names: odd nodes first, then a slower half, then topology
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
        # a node whose topology line names it is not a kind of its own to note again
        named = {t.node for t in self.topology}
        if self.topology_split:
            split = "; ".join(", ".join(k) for k in self.kinds)
            out.append(PeerLine("NOTE", f"NOTE {self.where}: {len(self.kinds)} kinds of node "
                                f"(topology), each judged among its own: {split}", "",
                                {"what": "kinds", "kinds": self.kinds}))
        out += [PeerLine("NOTE", f"NOTE {self.where}: {', '.join(k)}: {why}", "",
                         {"what": "kind not judged", "nodes": k})
                for k, why in self.kind_notes if not set(k) <= named]
        if self.absent:
            out.append(PeerLine(
                "NOTE", f"NOTE {self.where}: {len(self.nodes)} of the {self.declared_nodes} "
                f"nodes the system file declares ran in this session: {self.absent} not "
                "accepted by this run (left out by --distribute=idle or a node list, or not "
                "up; or the partition shrank: update its extras['nodes'])", "",
                {"what": ABSENT, "declared": self.declared_nodes,
                 "seen": len(self.nodes), "absent": self.absent}))
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
    out.declared_nodes = declared.nodes if declared is not None else 0
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
    _judge_nodes(values, m[keep], w[keep], n_launch[keep], sub,
                 maxt.kinds_of(fingerprints or {}, kept), alpha, effect)
    out.change[keep], out.called[keep] = sub.change, sub.called
    out.odd, out.apart, out.pair = sub.odd, sub.apart, sub.pair
    out.no_majority, out.measured = sub.no_majority, sub.measured
    out.kinds, out.kind_notes = sub.kinds, sub.kind_notes
    return out


def decide(values: Sequence[PeerValue],
           fingerprints: Mapping[str, Mapping[str, Any]] | None = None,
           alpha: float = PEER_ALPHA, effect: float = PEER_EFFECT) -> maxt.PartitionVerdict:
    """The one test's decision alone (:func:`.maxt.judge_matrix`), on every node with its
    kind and its own coverage, without the lines' other parts: what the benchmarks time
    and resample."""
    fingerprints = fingerprints or {}
    nodes = sorted({n for v in values for n in v.launches} | set(fingerprints),
                   key=node_order)
    m, _, _ = matrix(values, nodes)
    every_pu = np.asarray([v.all_pus for v in values], bool)
    return maxt.judge_matrix(m, nodes, group_numbers(values), every_pu,
                             maxt.kinds_of(fingerprints, nodes), alpha, effect)


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
                 n_launch: np.ndarray, out: PeerJudgement, kinds: Mapping[str, str],
                 alpha: float, effect: float) -> None:
    """Three or more nodes, each with usable values (``m``, ``w``, ``n_launch``: their rows
    of :func:`matrix`; ``kinds``: node -> kind), judged by :func:`.maxt.judge_matrix` into
    ``out``, with each value's change described beside."""
    nodes = out.nodes
    out.measured = [n for n, row in zip(nodes, m) if np.isfinite(row).any()]
    everyone = np.ones(len(nodes), bool)
    d, p = value_tests(m, w, n_launch, everyone)
    out.change = np.where(np.isfinite(d), np.expm1(-d), np.nan)
    out.called = calls(d, p, everyone, alpha, effect)
    every_pu = np.asarray([v.all_pus for v in values], bool)
    decided = maxt.judge_matrix(m, nodes, group_numbers(values), every_pu, kinds, alpha,
                                effect)
    row = {n: i for i, n in enumerate(nodes)}
    for kind in decided.kinds:
        for named in kind.named:
            if len(named.nodes) > 1:
                out.apart += [(n, True) for n in named.nodes]
                continue
            cols = every_pu if named.family == maxt.EVERY_PU else np.ones(len(values), bool)
            out.odd.append(_odd(named, d[row[named.nodes[0]]], cols, effect))
        if kind.differ is not None and out.pair is None:
            pair = coverage.pair_gap(m[[row[n] for n in kind.nodes]], kind.nodes, effect)
            out.pair = pair if pair is not None and pair.differ else None
        if kind.note and len(decided.kinds) > 1:
            out.kind_notes.append((list(kind.nodes), kind.note))
    if len(decided.kinds) > 1:
        out.kinds = [list(k.nodes) for k in decided.kinds]
    out.no_majority = bool(out.apart) or 2 * len(out.odd) >= len(nodes)
    left = [i for i, n in enumerate(nodes) if n not in {o.node for o in out.odd}]
    if not out.no_majority and len(left) == 2 and len(nodes) == 3:
        # one named of three: the two left are a majority when they agree within the
        # margin; when they differ no two of the three are alike
        out.pair = coverage.pair_gap(m[left], [nodes[i] for i in left], effect)
        out.no_majority = out.pair is not None and out.pair.differ


def _odd(named: maxt.Named, d: np.ndarray, cols: np.ndarray, effect: float) -> OddNode:
    """The line's numbers for a node the test named slower (``d``: its row of log gaps,
    worse positive; ``cols``: the values of the family it was named on): those values it
    is ``effect`` or more slower on, of those judged, their median change, and those it
    is as much faster on."""
    row = d[cols]
    judged = row[np.isfinite(row)]
    perf = -np.expm1(-judged)                  # how much slower, a share
    worse = perf[perf >= effect]
    scope = " that use every PU" if named.family == maxt.EVERY_PU else ""
    return OddNode(named.nodes[0], True, len(worse), len(judged),
                   float(-np.median(worse)) if len(worse) else named.change, named.p,
                   named.peers, scope, int((np.expm1(judged) <= -effect).sum()))


def group_numbers(values: Sequence[PeerValue]) -> np.ndarray:
    """Each value's group as a number (a value with none is a group of its own)."""
    ids: dict = {}
    return np.asarray([ids.setdefault(("own", j) if v.group is None else v.group, len(ids))
                       for j, v in enumerate(values)], dtype=int)


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
    centre = leave_one_out.loo_median(peers_m)
    s2, df = leave_one_out.loo_variance(peers_m)
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
