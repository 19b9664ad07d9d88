"""The numbers of the peer verdict: leave-one-node-out centres and spreads, and the exact
rank-sum test over nodes.

Everything works on a matrix of nodes x values (``nan`` where a node lacks a value) and
costs a sort per value: a partition of a thousand nodes is judged in the time of one
sort of a thousand numbers per value, and each node's leave-one-out centre and spread
come from that sort and two sums, not from a new pass over its peers
(``benchmarks/peer_judge_scale.py`` holds it linear).

**The rank test** (:func:`rank_sum_p`) is what makes a node's false-alarm rate follow
from its construction: when the nodes are alike, each node's rank among them on one
value is uniform over ``1..n``, whatever the value's distribution, its unit or its
spread, and the ranks of different values are independent draws. The sum of a node's
ranks over its values then has a known distribution (the ``K``-fold convolution of a
discrete uniform), computed exactly here, so the chance that an unchanged node is
called at level ``a`` is at most ``a`` with no constant fitted to sessions.

**The summed values' test** (:func:`sum_perm_p`) has the same null (each value's numbers
dealt to the nodes at random) but sums the numbers rather than their ranks, counted
exactly where a partition is small enough, which is where the ranks' floor ``n ** -k``
sits near the level.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from scipy import stats

from ..rules import MIN_NODES, SUM_ENUM_MAX


def loo_median(m: np.ndarray) -> np.ndarray:
    """Each node's peers' median, per value: the median of the column without that node.

    ``m`` is nodes x values with ``nan`` for a missing value; a node that lacks the value,
    or whose column has fewer than two other nodes, gets ``nan``. From one sort per
    column: removing the node at sorted position ``r`` shifts every later position by
    one, so the peers' median is read from the sorted column directly.
    """
    n_nodes, n_vals = m.shape
    out = np.full(m.shape, np.nan)
    order = np.argsort(np.where(np.isfinite(m), m, np.inf), axis=0, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(n_nodes)[:, None].repeat(n_vals, 1), axis=0)
    srt = np.take_along_axis(m, order, axis=0)
    n = np.isfinite(m).sum(axis=0)                     # finite values per column
    k = n - 1                                          # peers of a node that has the value
    for_col = np.isfinite(m) & (k >= 2)[None, :]
    if not for_col.any():
        return out
    lo_idx = (k - 1) // 2                              # the peers' middle positions
    hi_idx = k // 2

    def peers_at(q: np.ndarray) -> np.ndarray:
        # position q of the peers' sorted list is q, or q + 1 at or past the node's own
        pos = q[None, :] + (q[None, :] >= ranks)
        pos = np.clip(pos, 0, n_nodes - 1)
        return np.take_along_axis(srt, pos, axis=0)
    med = 0.5 * (peers_at(lo_idx) + peers_at(hi_idx))
    out[for_col] = med[for_col]
    return out


def loo_variance(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's peers' sample variance per value (``ddof=1``) and its degrees of freedom.

    From the column's sums without the node: ``nan`` where the node lacks the value or
    fewer than two peers have it. Centred on the column's mean first, so the sums keep
    their digits.
    """
    ok = np.isfinite(m)
    n = ok.sum(axis=0).astype(float)
    x = np.where(ok, m, 0.0)
    centre = np.divide(x.sum(axis=0), n, out=np.zeros(m.shape[1]), where=n > 0)
    x = np.where(ok, x - centre[None, :], 0.0)
    s1, s2 = x.sum(axis=0), (x * x).sum(axis=0)
    k = n[None, :] - 1.0                               # peers of each node
    p1, p2 = s1[None, :] - x, s2[None, :] - x * x
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (p2 - p1 * p1 / k) / (k - 1.0)
    good = ok & (k >= 2)
    var = np.where(good, np.maximum(var, 0.0), np.nan)
    return var, np.where(good, k - 1.0, np.nan)


def column_ranks(m: np.ndarray) -> np.ndarray:
    """Each node's rank on each value among the nodes that have it (1 = least, ties share
    their mean rank); ``nan`` where the node lacks the value."""
    ok = np.isfinite(m)
    r = stats.rankdata(np.where(ok, m, np.inf), axis=0, method="average")
    return np.where(ok, r, np.nan)


@functools.lru_cache(maxsize=256)
def _rank_sum_pmf(n: int, k: int) -> np.ndarray:
    """P(S = s) for ``s = k .. k*n``: the sum of ``k`` independent uniforms on ``1..n``.

    Each convolution with the uniform is a moving sum (a difference of cumulative
    sums), so the whole costs ``k`` passes over at most ``k*n`` numbers.
    """
    pmf = np.ones(1)
    for _ in range(k):
        c = np.concatenate(([0.0], np.cumsum(np.pad(pmf, n - 1))))
        pmf = (c[n:] - c[:-n]) / n
    return pmf


@functools.lru_cache(maxsize=256)
def _tails(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """P(S >= k + i) and P(S <= k + i) for every i: once per partition size."""
    pmf = _rank_sum_pmf(n, k)
    return np.cumsum(pmf[::-1])[::-1], np.cumsum(pmf)


def rank_sum_p(total: float, n: int, k: int) -> tuple[float, float]:
    """One-sided p-values ``(upper, lower)`` of a node's rank sum ``total`` over ``k`` values
    of ``n`` nodes each: P(S >= total) and P(S <= total) when the nodes are alike.

    Mean ranks of ties make half-integer sums; each tail is taken on its own side of them
    (``floor`` for the upper, ``ceil`` for the lower), so a tie never makes a node look odder.
    """
    if k <= 0 or n < 2:
        return 1.0, 1.0
    tail, head = _tails(n, k)
    up = int(math.floor(total + 1e-9)) - k
    lo = int(math.ceil(total - 1e-9)) - k
    upper = 1.0 if up <= 0 else 0.0 if up >= len(tail) else float(tail[up])
    lower = 1.0 if lo >= len(head) - 1 else 0.0 if lo < 0 else float(head[lo])
    return min(upper, 1.0), min(lower, 1.0)


def rank_tests(ranks: np.ndarray, n_per_value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's ``(upper, lower)`` rank-sum p over its values (:func:`rank_sum_p`).

    Exact where every value the node has was measured on the same number of nodes (the
    usual case: one convolution per partition size); otherwise the sum of uniforms of
    different sizes is taken as normal with its exact mean and variance.
    """
    n_nodes = ranks.shape[0]
    upper, lower = np.ones(n_nodes), np.ones(n_nodes)
    has = np.isfinite(ranks)
    for i in range(n_nodes):
        sizes = n_per_value[has[i]]
        if len(sizes) == 0:
            continue
        total = float(np.nansum(ranks[i]))
        if np.all(sizes == sizes[0]):
            upper[i], lower[i] = rank_sum_p(total, int(sizes[0]), len(sizes))
        else:
            mean = float(((sizes + 1) / 2).sum())
            sd = math.sqrt(float(((sizes ** 2 - 1) / 12).sum()))
            upper[i] = float(stats.norm.sf((total - 0.5 - mean) / sd)) if sd > 0 else 1.0
            lower[i] = float(stats.norm.cdf((total + 0.5 - mean) / sd)) if sd > 0 else 1.0
    return upper, lower


@functools.lru_cache(maxsize=64)
def _group_sum_pmf(n: int, g: int, k: int) -> np.ndarray:
    """P(S = s) for ``s = k*g*(g+1)/2 ..``: the sum over ``k`` independent values of the
    rank sum of a fixed group of ``g`` nodes among ``n`` alike ones (each value's ranks a
    uniform permutation, so the group's ranks are ``g`` of ``1..n`` without replacement)."""
    low = g * (g + 1) // 2
    one = np.zeros(g * (2 * n - g + 1) // 2 - low + 1)
    for ranks in itertools.combinations(range(1, n + 1), g):
        one[sum(ranks) - low] += 1
    one /= one.sum()
    pmf = np.ones(1)
    for _ in range(k):
        pmf = np.convolve(pmf, one)
    return pmf


def group_rank_p(total: float, n: int, g: int, k: int) -> float:
    """One-sided ``P(S >= total)`` of a group of ``g`` nodes' rank sum over ``k`` values of
    ``n`` alike nodes (:func:`_group_sum_pmf`); ties' half ranks floored, as
    :func:`rank_sum_p` does."""
    if k <= 0:
        return 1.0
    pmf = _group_sum_pmf(n, g, k)
    i = int(math.floor(total + 1e-9)) - k * g * (g + 1) // 2
    return 1.0 if i <= 0 else 0.0 if i >= len(pmf) else float(pmf[i:].sum())


def sum_enumerable(sizes: list[int]) -> bool:
    """Whether :func:`sum_perm_p` can count every dealing of columns of these sizes."""
    h = len(sizes) // 2
    return math.prod(sizes[:h]) <= SUM_ENUM_MAX and math.prod(sizes[h:]) <= SUM_ENUM_MAX


def sum_perm_p(cols: list[np.ndarray], total: float) -> float:
    """``P(S >= total)``, ``S`` the sum of one number drawn uniformly from each column: the
    exact permutation distribution of a node's summed (log) values when each value's
    numbers are dealt to the nodes at random (the nodes alike), as a rank sum's is, but
    weighing how far apart the numbers are, so a value where the nodes nearly tie counts
    for little and one where the node is far behind counts for much.

    Counted, not sampled: the columns are split in two halves, every sum of each half is
    listed (at most :data:`SUM_ENUM_MAX` each, :func:`sum_enumerable`) and the pairs
    reaching ``total`` are counted with one sort and a binary search. A sum within
    ``1e-9`` of ``total`` counts as reaching it, so rounding never makes a node look odder.
    """
    if not cols:
        return 1.0
    h = len(cols) // 2

    def sums(part: list[np.ndarray]) -> np.ndarray:
        out = np.zeros(1)
        for c in part:
            out = (out[:, None] + c[None, :]).ravel()
        return out
    a, b = np.sort(sums(cols[:h])), sums(cols[h:])
    eps = 1e-9 * (1.0 + abs(total))
    reach = len(a) - np.searchsorted(a, total - eps - b, side="left")
    return min(1.0, float(reach.sum()) / (len(a) * len(b)))
