"""Where a step change started in a case's history of sessions, if it did.

The series is one value per stored session (the median of its launches, on a
log scale), oldest first: the session is the unit that varies, so launches
are never pooled across sessions. The most likely single step is the split
that removes the most squared error (each side at least
:data:`MIN_SESSIONS` sessions; the same split ``ruptures``' dynamic
programming finds, checked in the tests). Choosing the split and then testing
it on the same data would find a step in most series of pure noise, so the
test is a **permutation test of the whole procedure**: the series' session
medians are shuffled :data:`PERMUTATIONS` times, the best split of each
shuffle is found the same way, and ``p`` is the share of shuffles whose best
split explains at least as much as the real one's. Under no change the
order of sessions is exchangeable, so a step is reported in at most
``alpha`` (1 %) of no-change series, and only when it also moved the median
by at least the minimum effect.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import over_sessions

#: each side of a step holds at least this many sessions
MIN_SESSIONS = 2
#: shuffles of the permutation test (p is at least 1 / (PERMUTATIONS + 1))
PERMUTATIONS = 999
#: at most this share of no-change series gets a step
ALPHA = 0.01
#: shuffled session medians held at once (a block of shuffles): a megabyte of floats, so a
#: block and the arrays of its search stay in the processor's cache (the shuffles, their
#: order and each row's arithmetic are the same for any block size)
SHUFFLED_VALUES = 2**17


@dataclass(frozen=True)
class Step:
    """A step change: the first session after it, its size and its permutation p."""

    index: int  # position of the first session after the step
    session: str
    #: geometric mean of the session medians after the step over before it
    ratio: float
    p: float
    higher_is_better: bool
    sessions: tuple[int, int]  # before, after

    @property
    def outcome(self) -> str:
        worse = self.ratio < 1 if self.higher_is_better else self.ratio > 1
        return over_sessions.REGRESSED if worse else over_sessions.IMPROVED

    def text(self) -> str:
        return (f"step from session {self.session[:8]}: {self.outcome}, median "
                f"{self.ratio - 1:+.1%}, permutation p={self.p:.3g}, "
                f"{self.sessions[0]} sessions before, {self.sessions[1]} after")


def best_split(series: np.ndarray, min_size: int = MIN_SESSIONS) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``series``: the split index that removes the most squared error, and
    the share of the total squared error it removes (0 to 1).

    The between-group sum of squares of a split after ``k`` values is
    ``k(n-k)/n (mean_l - mean_r)^2``; it is taken in place in one array (the same operations
    in the same order as written out, so the same numbers): 999 shuffles of ten thousand
    sessions are searched for each value of a report's step table."""
    x = np.atleast_2d(np.asarray(series, dtype=float))
    n = x.shape[1]
    total = ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    c = np.cumsum(x, axis=1)
    ks = np.arange(min_size, n - min_size + 1)
    left = c[:, min_size - 1:n - min_size]      # c[:, ks - 1], a view
    right = np.subtract(c[:, -1:], left)
    right /= n - ks
    gain = left / ks
    gain -= right
    gain **= 2
    gain *= ks * (n - ks) / n
    best = np.argmax(gain, axis=1)
    share = np.where(total > 0, gain[np.arange(len(x)), best] / np.where(total > 0, total, 1),
                     0.0)
    return ks[best], share


def step(sessions: Sequence[str], runs: Sequence[Sequence[float]], higher_is_better: bool = False,
         alpha: float = ALPHA, min_effect: float = over_sessions.MIN_EFFECT,
         candidates: bool = False, seed: int = 0) -> Step | None:
    """The step in ``runs`` (one list of launches per session, oldest first), if a real one.

    ``candidates``: return the most likely step whatever its p and size.
    """
    if len(sessions) != len(runs):
        raise ValueError("one list of runs per session")
    kept = [(s, r) for s, r in zip(sessions, runs) if len(r)]
    return step_of_medians([s for s, _ in kept], [np.median(r) for _, r in kept],
                           higher_is_better, alpha, min_effect, candidates, seed)


def step_of_medians(sessions: Sequence[str], medians: Sequence[float],
                    higher_is_better: bool = False, alpha: float = ALPHA,
                    min_effect: float = over_sessions.MIN_EFFECT, candidates: bool = False,
                    seed: int = 0) -> Step | None:
    """:func:`step` of sessions given as their launches' medians (each session's median
    taken once where it is read: ten thousand sessions' launches need not be held)."""
    return steps_of_medians([(sessions, medians, higher_is_better)], alpha, min_effect,
                            candidates, seed)[0]


def steps_of_medians(series: Sequence[tuple[Sequence[str], Sequence[float], bool]],
                     alpha: float = ALPHA, min_effect: float = over_sessions.MIN_EFFECT,
                     candidates: bool = False, seed: int = 0) -> list[Step | None]:
    """:func:`step_of_medians` of each of ``series`` (``(sessions, medians, higher is
    better)``), the same steps as one at a time.

    Each series' shuffles come from a generator of its own seeded with ``seed``, and a
    shuffle's moves depend on the series' length alone, never on its values: series of one
    length are shuffled alike. So the shuffles are drawn once for all series of a length,
    as positions, and each series is read through them (a report's step table searches
    dozens of values over the same ten thousand sessions: drawing the shuffles was most of
    its time)."""
    out: list[Step | None] = [None] * len(series)
    tested: dict[int, list[tuple[int, _Split]]] = {}
    for i, (sessions, medians, better) in enumerate(series):
        split = _split(sessions, medians, better, min_effect, candidates)
        if split is not None:
            tested.setdefault(len(split.logs), []).append((i, split))
    for group in tested.values():
        shares = _shuffled_shares([s.logs for _, s in group], seed)
        for (i, s), got in zip(group, shares):
            p = (1 + int(np.sum(got >= s.share - 1e-12))) / (PERMUTATIONS + 1)
            step_ = Step(s.k, s.sessions[s.k], s.ratio, p, s.better,
                         (s.k, len(s.sessions) - s.k))
            if candidates or not (p > alpha or abs(s.ratio - 1) < min_effect):
                out[i] = step_
    return out


@dataclass(frozen=True)
class _Split:
    """A series' most likely step, before its shuffles test it."""

    sessions: list[str]
    logs: np.ndarray
    k: int
    share: float
    ratio: float
    better: bool


def _split(sessions: Sequence[str], medians: Sequence[float], higher_is_better: bool,
           min_effect: float, candidates: bool) -> _Split | None:
    """The most likely step of one series, or None when there is none to test: too few
    sessions, a median not above zero, no spread, or (unless ``candidates``) too small a
    step to report whatever its p (its shuffles would only be thrown away)."""
    if len(sessions) != len(medians):
        raise ValueError("one median per session")
    if len(sessions) < 2 * MIN_SESSIONS:
        return None
    kept = list(sessions)
    medians = np.array(medians, dtype=float)
    if np.any(medians <= 0) or np.ptp(medians) == 0:
        return None
    logs = np.log(medians)
    (k,), (share,) = best_split(logs)
    ratio = math.exp(float(logs[k:].mean() - logs[:k].mean()))
    if not candidates and abs(ratio - 1) < min_effect:
        return None
    return _Split(kept, logs, int(k), share, ratio, higher_is_better)


def _shuffled_shares(series: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """The best split's share of :data:`PERMUTATIONS` shuffles of each of ``series`` (of one
    length), in blocks of at most :data:`SHUFFLED_VALUES` values (ten thousand sessions
    would otherwise hold 999 x 10,000 and its sums at once). A block's rows are the
    positions ``0..n-1`` shuffled as ``rng.permutation`` shuffles a series (a copy shuffled
    in place, the same draws in the same order), and each series is read through them:
    the shuffles of ``rng.permutation(logs)``, drawn once for all the series."""
    n = len(series[0])
    rng = np.random.default_rng(seed)
    block = np.empty((max(1, min(PERMUTATIONS, SHUFFLED_VALUES // n)), n), dtype=np.intp)
    positions = np.arange(n)
    out: list[list[np.ndarray]] = [[] for _ in series]
    for i in range(0, PERMUTATIONS, len(block)):
        rows = block[:min(len(block), PERMUTATIONS - i)]
        for row in rows:
            row[:] = positions
            rng.shuffle(row)
        for logs, shares in zip(series, out):
            shares.append(best_split(logs[rows])[1])
    return [np.concatenate(s) for s in out]
