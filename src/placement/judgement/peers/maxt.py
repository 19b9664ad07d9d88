"""A partition's nodes judged against each other by one step-down max-statistic
permutation test (Westfall and Young), its family-wise level following from its
construction.

Why another test: nodes of a partition are separate machines, each with its own small
offset, not copies of one. A rule calibrated on copies names healthy nodes of a large
partition whose machines differ as machines do. Here every gap is **scaled by the
partition's own spread between nodes**, twice:

1. each value's node numbers (the log of the median launch, worse positive) are centred
   on the value's median over the nodes and divided by 1.4826 times their median absolute
   deviation (MAD), so values of different noise weigh alike;
2. a node's **score** on a declared family of values (all values; the values that use
   every PU) is the mean of its scaled gaps over the family's measurements (a case's time
   and rate are one measurement), and the scores are scaled again by their own median and
   MAD over the nodes, that MAD no smaller than the spread a score has when the
   measurements are dealt at random (:func:`dealt_spread`). A node whose offset runs
   through every value (a machine a little slower than its peers) widens that spread, so
   ordinary differences between machines are not named however many nodes there are.

**Candidates**: each node (slower side) and, where the partition is small and even
(:data:`~placement.judgement.rules.HALVES_MAX_NODES`), each half against the other (a pooled two-sample t of the
halves' scores: two odd nodes of four are no majority to judge by). **Reference**: under
the null the nodes are exchangeable per measurement, so each measurement's numbers are
dealt to the nodes at random (every dealing counted where there are few, else
:data:`PEER_PERMUTATIONS` drawn with a fixed seed); each candidate kind's statistic is
turned into a p-value against its pooled permutation distribution, and the step-down
min-p over all candidates and families gives adjusted p-values whose family-wise level
is :data:`PEER_ALPHA` when the nodes are alike. A node (or half) is **named** when its
adjusted p is at most the level and its median gap over the family's measurements is at
least :data:`PEER_EFFECT`.

**A node far out of its kind** that the step-down test leaves unnamed (its own gaps,
dealt to its peers, make the dealings' extreme node nearly as far out as itself) is named
by :func:`far_out`: the slowest of its kind on every measurement that uses every PU, at
under :data:`~placement.judgement.rules.PEER_FAR_OUT` of its peers' rate. Its p-value is
exact under the same null (a given node is the slowest on all K measurements of n
exchangeable nodes with chance n^-K, so any node with chance at most n^(1-K)), and it is
named only where that p is within the level.

Nodes are judged within **kinds**: nodes sharing their topology fingerprint (memory sizes
snapped as :func:`.topology.memory_snapped` does; a CPU model or memory field where the
fingerprint has one). A node with no usable value, or usable values fewer than half its
kind's median count, is **not judged**, never alike. The level is split over the kinds
judged (Bonferroni), so it holds for the partition. Two nodes of a kind can only be
said to differ (which one is odd cannot be told); one node is too few to judge.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..rules import HALVES_MAX_NODES, PEER_ALPHA, PEER_EFFECT, PEER_FAR_OUT
from .topology import memory_snapped

#: dealings drawn when counting every one would cost more: enough for a p-value of
#: 0.05 to be read within about 0.007 (its binomial standard error)
PEER_PERMUTATIONS = 1000

#: the name of the family of the values that use every PU (a node short of CPU time is
#: behind on those alone)
EVERY_PU = "the values that use every PU"
#: the consistency constant of the MAD for a normal spread
_MAD_NORMAL = 1.4826
#: the smallest spread a value's scale may take, as a share of the margin's log: a value
#: whose nodes tie (a timer printed to two digits) would otherwise weigh without bound in a
#: node's score, and gaps well under the margin are not what a node is named for
_FLOOR_SHARE = 1 / 3
#: the smallest spread a score's scale may take (scores are in units of a value's spread)
_FLOOR = 1e-3
#: a fixed seed: the same run report always gets the same verdict
_SEED = 20261204


@dataclass(frozen=True)
class Family:
    """A declared family of values: its name and which columns (values) it holds."""

    name: str
    cols: np.ndarray


@dataclass(frozen=True)
class Named:
    """A node (or the slower half of a kind) named slower, with its evidence."""

    nodes: tuple[str, ...]
    family: str
    #: the step-down adjusted p-value
    p: float
    #: median over the family's measurements of the change in performance (slower:
    #: negative), against the kind's median (a half: against the other half)
    change: float
    #: the statistic (a node: its robust z of the score; a half: the pooled t; a node far
    #: out of its kind, :func:`far_out`: the measurements it is the slowest on, all of them)
    statistic: float
    #: measurements of the family the node was judged on
    judged: int
    peers: int

    def line(self, where: str) -> str:
        who = " and ".join(self.nodes)
        what = "half of the nodes " if len(self.nodes) > 1 else ""
        return (f"NODES {where}: {what}{who} slower than {self.peers} peers on the "
                f"{self.judged} measurements of {self.family} (median {self.change:+.0%}, "
                f"adjusted p {self.p:.3g})")


@dataclass
class KindVerdict:
    """One kind of nodes (one fingerprint) judged among themselves."""

    kind: str
    nodes: list[str]
    named: list[Named] = field(default_factory=list)
    #: two nodes only: their median gap and the p of their difference (sign flips)
    differ: tuple[float, float] | None = None
    #: why this kind got no verdict (too small, no family to judge), else ""
    note: str = ""


@dataclass
class PartitionVerdict:
    """A partition judged kind by kind, with each node's count of values judged."""

    kinds: list[KindVerdict]
    #: node -> values it was judged on (0: not judged)
    judged: dict[str, int]
    #: node -> why it was not judged
    not_judged: dict[str, str]
    #: why the partition got no verdict at all, else ""
    note: str = ""

    @property
    def named(self) -> list[str]:
        return [n for k in self.kinds for x in k.named for n in x.nodes]

    @property
    def fails(self) -> bool:
        """A node named, two nodes that differ, or a node not judged: never a pass."""
        return bool(self.named) or bool(self.not_judged) or any(
            k.differ is not None and k.differ[1] <= PEER_ALPHA
            and abs(k.differ[0]) >= PEER_EFFECT for k in self.kinds)

    def lines(self, where: str) -> list[str]:
        if self.note:
            return [f"NOTE {where}: {self.note}"]
        out = [f"NODES {where}: {n} not judged: {why}" for n, why in self.not_judged.items()]
        for k in self.kinds:
            nodes = ", ".join(k.nodes)
            if k.note:
                out.append(f"NOTE {where}: kind {k.kind} ({nodes}): {k.note}")
            elif k.differ is not None:
                gap, p = k.differ
                beyond = p <= PEER_ALPHA and abs(gap) >= PEER_EFFECT
                out.append(f"NODES {where}: {nodes} differ by {abs(gap):.0%} (p {p:.3g}): "
                           + ("more than the margin; which one is odd cannot be told"
                              if beyond else "not beyond chance and the margin; two nodes "
                              "cannot tell which one is odd"))
            elif k.named:
                out += [x.line(where) for x in k.named]
            else:
                few = " (3 nodes: a majority of 2)" if len(k.nodes) == 3 else ""
                out.append(f"NODES {where}: {len(k.nodes)} nodes of kind {k.kind} alike"
                           f"{few}: no node slower than its peers by {PEER_EFFECT:.0%} "
                           "beyond chance")
        return out


def kinds_of(fingerprints: Mapping[str, Mapping[str, Any]], nodes: Sequence[str]
             ) -> dict[str, str]:
    """Each node's kind: its fingerprint as text (memory snapped); ``"-"`` without one."""
    snapped = memory_snapped({n: fingerprints[n] for n in nodes if n in fingerprints})
    return {n: ",".join(f"{k}={v}" for k, v in sorted(snapped[n].items()))
            if n in snapped else "-" for n in nodes}


def judge_matrix(m: np.ndarray, nodes: Sequence[str], groups: np.ndarray,
                 every_pu: np.ndarray, kinds: Mapping[str, str],
                 alpha: float = PEER_ALPHA, effect: float = PEER_EFFECT,
                 permutations: int = PEER_PERMUTATIONS) -> PartitionVerdict:
    """``m``: nodes x values, log of each node's median launch, worse positive, ``nan``
    where unusable; ``groups``: each value's measurement; ``every_pu``: which values use
    every PU; ``kinds``: node -> kind."""
    m = np.where(np.isfinite(m), m, np.nan)
    on_many = (np.isfinite(m).sum(axis=0) >= 2) if m.size else np.zeros(0, bool)
    if not on_many.any():
        return PartitionVerdict([], {n: 0 for n in nodes}, {},
                                "each value was measured on one node at most: no peers to "
                                "judge a node by")
    out = PartitionVerdict([], {}, {})
    by_kind: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        by_kind.setdefault(kinds.get(n, "-"), []).append(i)
    judged = {kind: _judged_rows(m, rows, nodes, out) for kind, rows in by_kind.items()}
    # the level split over the kinds that are judged: the partition's family-wise level
    tested = max(1, sum(len(ok) >= 2 for ok in judged.values()))
    for kind, ok in sorted(judged.items(), key=lambda kv: -len(kv[1])):
        label = f"{len(out.kinds) + 1}"
        out.kinds.append(_judge_kind(label, m[ok], [nodes[r] for r in ok], groups, every_pu,
                                     alpha / tested, effect, permutations))
    return out


def _judged_rows(m: np.ndarray, rows: list[int], nodes: Sequence[str],
                 out: PartitionVerdict) -> list[int]:
    """The rows of one kind that are judged: a usable value, and at least half the kind's
    median count of them; each node's count (0: not judged, with why) into ``out``."""
    counts = np.isfinite(m[rows]).sum(axis=1)
    need = 0.5 * float(np.median(counts))
    ok = [r for r, c in zip(rows, counts) if c > 0 and c >= need]
    for r, c in zip(rows, counts):
        out.judged[nodes[r]] = int(c) if r in ok else 0
        if r not in ok:
            out.not_judged[nodes[r]] = ("no usable value" if c == 0 else
                                        f"{c} usable values, under half of its peers' "
                                        f"{int(2 * need)}")
    return ok


def families(measured: int, pu: np.ndarray) -> list[Family]:
    """The declared families, as columns of the measurement matrix (``measured`` of them;
    ``pu``: those that use every PU, :func:`every_pu_columns`): all measurements, and those
    that use every PU where they are some but not all."""
    out = [Family("all values", np.arange(measured))]
    if 0 < len(pu) < measured:
        out.append(Family(EVERY_PU, pu))
    return out


def every_pu_columns(groups: np.ndarray, every_pu: np.ndarray) -> np.ndarray:
    """The measurements (columns of the measurement matrix) whose values all use every
    PU."""
    return np.flatnonzero([every_pu[groups == x].all() for x in np.unique(groups)])


def measurements(m: np.ndarray, groups: np.ndarray, floor: float) -> np.ndarray:
    """Nodes x measurements: each measurement's values' scaled gaps averaged (a case's time
    and rate are one draw), each value scaled by its median and MAD over the nodes (at least
    ``floor``)."""
    z = (m - _nanmedian(m, 0)) / np.maximum(_scale(m, 0), floor)
    g = np.unique(groups)
    return np.stack([_nanmean(z[:, groups == x], 1) for x in g], axis=1)


def raw_gaps(m: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Nodes x measurements: the log gap to the value's median over the nodes, unscaled."""
    d = m - _nanmedian(m, 0)
    return np.stack([_nanmean(d[:, groups == x], 1) for x in np.unique(groups)], axis=1)


def _judge_kind(kind: str, m: np.ndarray, nodes: list[str], groups: np.ndarray,
                every_pu: np.ndarray, alpha: float, effect: float, permutations: int
                ) -> KindVerdict:
    out = KindVerdict(kind, nodes)
    if len(nodes) < 2:
        out.note = f"{len(nodes)} node judged: too few to judge by its peers"
        return out
    usable = np.isfinite(m).sum(axis=0) >= min(len(nodes), 3)
    if not usable.any():
        out.note = "no value measured on enough nodes of this kind"
        return out
    m, groups, every_pu = m[:, usable], groups[usable], every_pu[usable]
    pu = every_pu_columns(groups, every_pu)
    fams = families(len(np.unique(groups)), pu)
    if len(nodes) == 2:
        out.differ = _two_nodes(raw_gaps(m, groups), fams[-1], permutations)
        return out
    zg = measurements(m, groups, _FLOOR_SHARE * math.log1p(effect))
    gaps = raw_gaps(m, groups)
    perms = dealings(len(nodes), zg.shape[1], permutations)
    halves = _halves(len(nodes))
    zt = zg.T                                                   # measurements x nodes
    # the first dealing is the one observed
    null, kinds = _statistics(zt[np.arange(zt.shape[0])[None, :, None], perms], fams, halves)
    stats = null[:1]
    adj = step_down(*_marginal_p(stats[0], null, kinds))
    for h in np.argsort(adj, kind="stable"):
        if adj[h] > alpha:
            break
        f, rows = _hypothesis(int(h), len(nodes), fams, halves, stats[0, h])
        cols = fams[f].cols
        change = float(np.nanmedian(gaps[list(rows)][:, cols].mean(axis=0)
                                    - np.nanmean(np.delete(gaps, rows, axis=0)[:, cols], 0)
                                    if len(rows) > 1 else gaps[rows[0], cols]))
        members = tuple(nodes[i] for i in rows)
        # the margin on the change the line shows (10 % slower), not on its log
        if -math.expm1(-change) < effect or any(set(members) & set(x.nodes) for x in out.named):
            continue
        out.named.append(Named(members, fams[f].name, float(adj[h]),
                               float(math.expm1(-change)), float(stats[0, h]), len(cols),
                               len(nodes) - len(rows)))
    far = far_out(gaps, pu, nodes, out.named, alpha)
    if far is not None:
        out.named.append(far)
    return out


def far_out(gaps: np.ndarray, cols: np.ndarray, nodes: list[str], named: list[Named],
            alpha: float, far: float = PEER_FAR_OUT) -> Named | None:
    """A node far out of its kind that the step-down test left unnamed: the slowest of
    its kind on every measurement that uses every PU (``cols`` of ``gaps``, nodes x
    measurements, log, worse positive; each finite on every node, two or more of them),
    at under ``far`` of the others' rate in the median over those measurements.

    Why a second rule: the step-down test deals every node's gaps, the far-out node's
    too, so a node several times slower than its peers makes the dealings' extreme node
    nearly as extreme as itself and can go unnamed (docs/reference/peer-nulls.md). Its
    level follows from the same null: where the nodes are exchangeable on each
    measurement, a given node is the slowest on all K with chance ``n ** -K``, so any
    node is with chance at most ``n ** (1 - K)``, the p it is named with; it is named only
    where that p is within the kind's level (``alpha``). Under half the others' rate
    keeps it off machines that differ as machines do: their offsets run through every
    value, but by tens of per cent, not by a factor of two."""
    n = len(nodes)
    g = gaps[:, cols]
    g = g[:, np.isfinite(g).all(axis=0)]
    k = g.shape[1]
    if n < 3 or k < 2:
        return None
    slowest = g.argmax(axis=0)
    i = int(slowest[0])
    p = float(n) ** (1 - k)
    if (slowest != i).any() or p > alpha or any(nodes[i] in x.nodes for x in named):
        return None
    others = np.delete(g, i, axis=0)
    change = float(np.median(g[i] - np.median(others, axis=0)))
    rate = math.exp(-change)
    if rate >= far:
        return None
    # the statistic: how many measurements the node is the slowest on (every one)
    return Named((nodes[i],), EVERY_PU, p, rate - 1.0, float(k), k, n - 1)


def dealings(n: int, k: int, permutations: int) -> np.ndarray:
    """Permutation indices (dealings x measurements x nodes): every dealing with the first
    measurement held (relabelling nodes changes no maximum) where there are at most
    ``permutations``, else the identity and ``permutations`` drawn at random."""
    total = math.factorial(n) ** (k - 1)
    if k > 1 and total <= permutations:
        each = list(itertools.permutations(range(n)))
        rows = [np.vstack([np.arange(n), *(each[i] for i in combo)])
                for combo in itertools.product(range(len(each)), repeat=k - 1)]
        return np.asarray(rows)
    rng = np.random.default_rng(_SEED)
    ident = np.broadcast_to(np.arange(n, dtype=np.int32), (permutations + 1, k, n))
    drawn = rng.permuted(ident, axis=2)
    drawn[0] = ident[0]
    return drawn


def _halves(n: int) -> list[tuple[int, ...]]:
    """Every half holding the first node (its complement is the other half), when ``n`` is
    even and at most :data:`~placement.judgement.rules.HALVES_MAX_NODES`; else none."""
    if n % 2 or n > HALVES_MAX_NODES:
        return []
    return [(0, *c) for c in itertools.combinations(range(1, n), n // 2 - 1)]


def _statistics(zt: np.ndarray, fams: list[Family], halves: list[tuple[int, ...]]
                ) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """Dealings x hypotheses (``zt``: dealings x measurements x nodes, the first the one
    observed): per family, each node's robust z of its score (slower positive), then each
    half's pooled two-sample t (signed: the half slower positive); and each hypothesis's
    kind (its candidate type and family) for the marginal p.

    Why each dealing's own scale, with no floor taken from the dealings: where the nodes
    differ as machines do, a dealing mixes their offsets away and its scale shrinks, so a
    floor set by the dealings lifts their scale and not the observed one, and names
    healthy machines (a quarter of 4-node partitions, a tenth of 16-node ones, in
    ``benchmarks/peer_nulls.py``).

    Why a node's scale is at least :func:`dealt_spread`: the MAD of a few nodes' scores
    comes near zero whenever most of them happen to agree, so the dealings' z had a tail
    far heavier than a normal's (a node slower on every measurement: marginal p 0.01 at 4
    nodes) and a slow node's z stood out of it rarely; the spread a score has by dealing
    alone is the same number in every dealing and the observed one, and no scale smaller
    than it is read."""
    cols, kinds = [], []
    for f, fam in enumerate(fams):
        s = _nanmean(zt[:, fam.cols], 1)                          # dealings x nodes
        floor = dealt_spread(zt[0, fam.cols])
        z = (s - _nanmedian(s, 1)) / np.maximum(_scale(s, 1), floor)
        cols.append(z)
        kinds += [("node", f)] * s.shape[1]
        if halves:
            cols.append(_half_t(s, halves, floor))
            kinds += [("half", f)] * len(halves)
    return np.concatenate(cols, axis=1), kinds


def dealt_spread(z: np.ndarray) -> float:
    """The spread a node's score has when its measurements are dealt at random: 1.4826
    times the MAD of the scaled gaps ``z`` (measurements x nodes, every node's), over the
    root of the measurements. Each measurement's gaps are only dealt anew, so it is the
    same in every dealing."""
    fin = z[np.isfinite(z)]
    if not fin.size:
        return _FLOOR
    mad = float(np.median(np.abs(fin - np.median(fin))))
    return max(_MAD_NORMAL * mad / math.sqrt(z.shape[0]), _FLOOR)


def _half_t(s: np.ndarray, halves: list[tuple[int, ...]], floor: float) -> np.ndarray:
    """Dealings x halves: the pooled t of each half's scores against the other half's
    (positive: the half holding the first node is slower), each half's spread at least
    ``floor`` (:func:`dealt_spread`, the same in every dealing).

    Why the floor: with two nodes a half the pooled spread has two degrees of freedom, and
    a dealing whose two halves each happen to agree had a t without bound; the dealings'
    tail then hid two nodes twice as slow as the other two (a pass of a broken half)."""
    n = s.shape[1]
    out = np.empty((s.shape[0], len(halves)))
    for h, half in enumerate(halves):
        a = np.zeros(n, bool)
        a[list(half)] = True
        sa, sb = s[:, a], s[:, ~a]
        pooled = np.maximum((sa.var(axis=1, ddof=1) + sb.var(axis=1, ddof=1)) / 2,
                            floor ** 2) * 4 / n
        out[:, h] = (sa.mean(axis=1) - sb.mean(axis=1)) / np.sqrt(pooled)
    return out


def _marginal_p(obs: np.ndarray, null: np.ndarray, kinds: list[tuple[str, int]]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each hypothesis's p against the pooled permutation distribution of its kind (the
    nodes are exchangeable, so every node's has the same), for the observed statistics and
    for every dealing's. A node is one-sided (slower); a half two-sided (either half)."""
    p_obs, p_null = np.empty(obs.shape), np.empty(null.shape)
    labels = np.asarray([f"{t}{f}" for t, f in kinds])
    for label in np.unique(labels):
        sel = labels == label
        fold = np.abs if label.startswith("half") else (lambda x: x)
        pool = np.nan_to_num(fold(null[:, sel]), nan=-np.inf)
        order = np.argsort(pool, axis=None)
        ref = pool.ravel()[order]
        # each pooled value's count of those below it: its sorted place, ties first
        below = np.empty(ref.size)
        below[order] = np.searchsorted(ref, ref, side="left")
        p_null[:, sel] = 1.0 - below.reshape(pool.shape) / ref.size
        x = np.nan_to_num(fold(obs[sel]), nan=-np.inf)
        p_obs[sel] = 1.0 - np.searchsorted(ref, x, side="left") / ref.size
    return p_obs, p_null


def step_down(p_obs: np.ndarray, p_null: np.ndarray) -> np.ndarray:
    """Westfall-Young step-down min-p adjusted p-values: the k-th smallest observed p
    against the dealings' least p over the hypotheses not yet rejected, kept monotone."""
    order = np.argsort(p_obs, kind="stable")
    succ_min = np.minimum.accumulate(p_null[:, order][:, ::-1], axis=1)[:, ::-1]
    adj = np.maximum.accumulate((succ_min <= p_obs[order][None, :]).mean(axis=0))
    out = np.empty_like(adj)
    out[order] = adj
    return out


def _hypothesis(h: int, n: int, fams: list[Family], halves: list[tuple[int, ...]],
                stat: float) -> tuple[int, tuple[int, ...]]:
    """Which family and candidate hypothesis ``h`` is: a node's row, or the slower half's
    rows (``stat`` positive: the half holding the first node)."""
    f, r = divmod(h, n + len(halves))
    if r < n:
        return f, (r,)
    half = halves[r - n]
    return f, half if stat > 0 else tuple(i for i in range(n) if i not in half)


def _two_nodes(gaps: np.ndarray, fam: Family, permutations: int) -> tuple[float, float]:
    """Two nodes: the median change of the second against the first over the family's
    measurements, and the exact (or drawn) sign-flip p of their mean log difference."""
    d = gaps[1, fam.cols] - gaps[0, fam.cols]
    d = d[np.isfinite(d)]
    k = len(d)
    if k == 0:
        return 0.0, 1.0
    if 2 ** k <= permutations:
        signs = np.asarray(list(itertools.product((1, -1), repeat=k)), float)
    else:
        rng = np.random.default_rng(_SEED)
        signs = np.vstack([np.ones(k), rng.choice((1.0, -1.0), (permutations, k))])
    null = np.abs((signs * d).mean(axis=1))
    p = float((null >= abs(d.mean()) - 1e-12).mean())
    return float(math.expm1(-np.median(d))), p


def _nanmedian(x: np.ndarray, axis: int) -> np.ndarray:
    """The median along ``axis`` (kept), ``nan`` where all are missing, without a warning."""
    if not np.isnan(x).any():           # the common case, several times faster
        return np.median(x, axis=axis, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(x, axis=axis, keepdims=True)


def _nanmean(x: np.ndarray, axis: int) -> np.ndarray:
    """The mean along ``axis``, ``nan`` where all are missing, without a warning."""
    if not np.isnan(x).any():
        return x.mean(axis=axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=axis)


def _scale(x: np.ndarray, axis: int) -> np.ndarray:
    """1.4826 times the MAD along ``axis`` (kept as a dimension), at least :data:`_FLOOR`."""
    mad = _nanmedian(np.abs(x - _nanmedian(x, axis)), axis)
    return np.maximum(_MAD_NORMAL * mad, _FLOOR)
