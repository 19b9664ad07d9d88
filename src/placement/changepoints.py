"""Where a step change started in a case's history of sessions.

The series is one value per stored session (the median of its runs), oldest
first. ``ruptures`` (BSD-2-Clause; needs only NumPy and SciPy) places the
single most likely step exactly (dynamic programming, least squares on the
log of the medians, each side at least two sessions); whether the step is
real is then the verdict's own question: the runs after it judged against
the runs before it (:func:`placement.verdict.judge`: rank tests, minimum
effect). Apache Otava's E-divisive (``apache-otava``, Apache-2.0) pins
NumPy 2.2 and SciPy below 1.17 and pulls in BigQuery, Slack and PostgreSQL
clients; MongoDB's ``signal-processing-algorithms`` (Apache-2.0) pins NumPy
below 2 and setuptools below 71; neither belongs beside ReFrame in a job's Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import verdict

#: each side of a step holds at least this many sessions
MIN_SESSIONS = 2


@dataclass(frozen=True)
class Step:
    """A step change: the first session after it, and the verdict on after vs before."""

    index: int  # position of the first session after the step
    session: str
    verdict: verdict.Verdict

    def text(self) -> str:
        return f"step from session {self.session[:8]}: {self.verdict.text()}"


def step(sessions: Sequence[str], runs: Sequence[Sequence[float]], higher_is_better: bool = False,
         alpha: float = verdict.ALPHA, min_effect: float = verdict.MIN_EFFECT,
         candidates: bool = False) -> Step | None:
    """The step in ``runs`` (one list of runs per session, oldest first), if a real one.

    ``candidates``: return the most likely step whatever its verdict, for a
    correction over many series (:func:`placement.verdict.correct`).
    """
    if len(sessions) != len(runs):
        raise ValueError("one list of runs per session")
    kept = [(s, list(r)) for s, r in zip(sessions, runs) if len(r)]
    if len(kept) < 2 * MIN_SESSIONS:
        return None
    medians = np.array([np.median(r) for _, r in kept], dtype=float)
    if np.any(medians <= 0) or np.ptp(medians) == 0:
        return None
    import ruptures  # here, not at the top: `placement judge` in a job never needs it
    algo = ruptures.Dynp(model="l2", min_size=MIN_SESSIONS, jump=1).fit(np.log(medians))
    k = algo.predict(n_bkps=1)[0]
    before = [x for _, r in kept[:k] for x in r]
    after = [x for _, r in kept[k:] for x in r]
    v = verdict.judge(after, before, higher_is_better, alpha, min_effect)
    if v.outcome not in (verdict.REGRESSED, verdict.IMPROVED) and not candidates:
        return None
    return Step(k, kept[k][0], v)

