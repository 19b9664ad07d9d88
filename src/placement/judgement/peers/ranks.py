"""The peer verdict's rank tests: a node, or half of the nodes, against the others on
their ranks over a partition's values.

Why ranks: when the nodes are alike each node's rank on a value is uniform, so a rank
sum's distribution is known exactly (:mod:`.rank_tests`) and the chance of naming an
unchanged node follows from the level alone, whatever the values' units or spreads.
The levels come from :mod:`.levels`; which values are read, from :class:`Ranked`.
A node slower where every PU is busy is tested on its summed values instead where they
can be counted (:func:`slower_pvalues`): the same exact null, weighed by how far behind.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import rank_tests
from .levels import Levels
from ..rules import MIN_NODES


@dataclass(frozen=True)
class Ranked:
    """What the rank tests read: the columns of all values and of those that use every
    PU (one per group, :func:`first_of_groups`), every value that uses every PU (a
    node's line counts them), and the tests' levels."""

    cols: np.ndarray
    pu_cols: np.ndarray
    pu_values: np.ndarray
    levels: Levels
    #: each value's group (one measurement: a case's time and rate), as a number
    group_of: np.ndarray


def half_apart(m: np.ndarray, nodes: Sequence[str], level: float, effect: float,
               slower_only: bool = False) -> list[tuple[str, bool]]:
    """The half of the nodes whose rank sum over the values every node has stands apart
    from the other half's, one-sided, at ``level`` over every half and side tested, by
    at least ``effect`` (:func:`_half_change`): ``[(node, slower)]`` for that half, ``[]``
    when none does. Why the effect: ranks alone called two unchanged nodes apart whose
    values sat 2 % from the others'."""
    full = m[:, np.isfinite(m).all(axis=0)]
    n, k = full.shape
    if k == 0 or n < 4:
        return []
    ranks = rank_tests.column_ranks(full)
    g = n // 2
    halves = list(itertools.combinations(range(n), g))
    sides = (True,) if slower_only else (True, False)
    tests = len(sides) * len(halves)
    found = []
    for half in halves:
        total = float(ranks[list(half)].sum())
        for slower in sides:
            # a half faster: its rank sum counted from the top, the same distribution
            stat = total if slower else k * g * (n + 1) - total
            pv = rank_tests.group_rank_p(stat, n, g, k)
            # also ``effect`` apart: unchanged nodes a few percent from the others read as a half
            if pv * tests <= level and _half_change(full, half, slower) >= effect:
                found.append((pv, not slower, half))
    if not found:
        return []
    # a half slower and the other half faster are one event: name the slower
    _, faster, half = min(found)
    return [(nodes[i], not faster) for i in half]


def _half_change(full: np.ndarray, half: Sequence[int], slower: bool) -> float:
    """The median over the values of the half's median against the other half's, as a
    change on its side (log values, worse positive)."""
    rest = [i for i in range(full.shape[0]) if i not in half]
    gap = np.median(full[list(half)], axis=0) - np.median(full[rest], axis=0)
    x = float(np.median(gap))
    return float(np.expm1(x if slower else -x))


def slower_where_every_pu(m: np.ndarray, d: np.ndarray, active: np.ndarray, ranked: Ranked,
                          effect: float, already: set[int]) -> list[tuple[int, bool, float]]:
    """The active nodes not ``already`` named that are slower than the others over the
    values that use every PU: its upper p (:func:`slower_pvalues`) at ``levels.node_pu``
    split over the active nodes, and the median change over those values at least ``effect``:
    ``(node, True, p)``."""
    if not ranked.levels.node_pu or not len(ranked.pu_cols):
        return []
    rows, upper = slower_pvalues(m[:, ranked.pu_cols], active)
    level = ranked.levels.node_pu / len(rows)
    out = []
    for r, i in enumerate(rows):
        if int(i) in already or upper[r] > level:
            continue
        if typical_change(d[i, ranked.pu_values], True) >= effect:
            out.append((int(i), True, float(upper[r])))
    return out


def slower_pvalues(m: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The active rows and each one's upper p of being slower over ``m``'s values: the
    permutation p of its summed values (:func:`.rank_tests.sum_perm_p`) where every
    dealing can be counted, else its rank sum's. Why the sum where it can: with four
    nodes a rank sum cannot tell a node far behind on most values and second on one from
    a node a little behind on all of them; the sum weighs by how far, with the same exact
    null (each value's numbers dealt to the nodes at random)."""
    rows, upper, _ = rank_pvalues(m, active)
    # the sum where countable: a rank sum missed a node far behind on most values
    sub = m[rows]
    ok = np.isfinite(sub)
    sizes = ok.sum(axis=0)
    judged = sizes >= MIN_NODES
    for r in range(len(rows)):
        mine = np.flatnonzero(judged & ok[r])
        if len(mine) and rank_tests.sum_enumerable([int(x) for x in sizes[mine]]):
            upper[r] = rank_tests.sum_perm_p([sub[ok[:, j], j] for j in mine],
                                             float(sub[r, mine].sum()))
    return rows, upper


def rank_p(m: np.ndarray, active: np.ndarray, i: int, slower: bool) -> float:
    """Node ``i``'s one-sided rank-sum p among the active nodes (:func:`rank_pvalues`)."""
    rows, upper, lower = rank_pvalues(m, active)
    r = int(np.flatnonzero(rows == i)[0])
    return float(upper[r] if slower else lower[r])


def rank_pvalues(m: np.ndarray, active: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The active rows and each one's ``(upper, lower)`` rank-sum p over the values at
    least :data:`MIN_NODES` active nodes have."""
    rows = np.flatnonzero(active)
    sub = m[rows]
    n_per = np.isfinite(sub).sum(axis=0).astype(float)
    ranks = np.where((n_per >= MIN_NODES)[None, :], rank_tests.column_ranks(sub), np.nan)
    upper, lower = rank_tests.rank_tests(ranks, n_per)
    return rows, upper, lower


def stand_apart(m: np.ndarray, active: np.ndarray, alpha: float
                ) -> list[tuple[int, bool, float]]:
    """The active nodes whose rank sum over their values stands apart at
    ``alpha / (2 * active nodes)``: ``(node, slower, p)``."""
    rows, upper, lower = rank_pvalues(m, active)
    level = alpha / (2 * len(rows))
    out = []
    for r, i in enumerate(rows):
        if upper[r] <= level:
            out.append((int(i), True, float(upper[r])))
        elif lower[r] <= level:
            out.append((int(i), False, float(lower[r])))
    return out


def typical_change(d: np.ndarray, slower: bool) -> float:
    """The median over a node's values of its change against its peers, on its side."""
    ok = d[np.isfinite(d)]
    if not len(ok):
        return 0.0
    return float(np.expm1(np.median(ok) if slower else -np.median(ok)))
