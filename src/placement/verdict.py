"""A case's verdict against its baseline's runs: regressed, improved, unchanged or undecided.

Why not an interval around a mean: on a shared node the run-to-run spread is
wide, skewed and often two-mode (a share of unpinned runs much slower), a CV
estimated from three runs is itself noise, and with a thousand cases per run a
per-case threshold raises false alarms in bulk. The verdict here follows
Chromium's Pinpoint:

* ``p = min(Kolmogorov-Smirnov, Mann-Whitney U)`` between the new runs and the
  baseline's runs (SciPy's exact tests for small samples): the rank test sees
  a shift, KS also a change of shape; neither assumes normality.
* **DIFFERENT** (regressed or improved, by the variable's direction) when
  ``p <= alpha`` (default 0.01) *and* the median ratio moved by at least the
  site's minimum effect (default 3 %).
* **SAME** (unchanged) when the 90 % bootstrap interval of the median ratio
  lies inside ``1 ± min_effect``: whatever changed is smaller than what the
  site cares about (an equivalence test, two one-sided 5 % tests).
* **UNDECIDED** otherwise: more runs would tell (:func:`judge_repeats`).

Samples are whole program runs (process launches), but the launches of one
job share that job's node, load and memory layout: on a shared node they
agree with each other far more than with another session's. A baseline
recorded from **several sessions** (``placement baseline record --add``)
carries that spread, and the verdict then also asks the question at the
level that varies (Kalibera & Jones' multi-level design): is the new
session's median outside what the baseline's sessions show? Its p is a
prediction test of one new session against ``k`` session medians (log
scale, Student t with ``k - 1`` degrees of freedom, SciPy), and the verdict's
p is the larger of the launch-level and session-level p (an
intersection-union test: a change is called only when both the launches
and the session differ). The equivalence interval is then the wider of the
bootstrap interval and the session-level prediction interval.

Samples are whole program runs (process launches), never the iterations of
one run's measurement loop, whose values are correlated and far tighter than
run-to-run differences (Kalibera & Jones).

Across all the cases of one run, :func:`correct` applies Benjamini-Hochberg
(``scipy.stats.false_discovery_control``) to the p-values before anything is
called regressed. BH was chosen over Holm because when every case is unchanged
(the weekly run on an untouched machine) the false-discovery rate *is* the
chance of any false alarm, so BH keeps that at ``alpha`` like Holm does, while
with real regressions present it keeps more power than Holm's family-wise
bound.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

#: p at or below which the runs differ (Pinpoint's low threshold).
ALPHA = 0.01
#: relative change of the median below which a site does not care (site setting).
MIN_EFFECT = 0.03
#: confidence of the equivalence interval (two one-sided 5 % tests).
EQUIV_CONFIDENCE = 0.90
#: adaptive repeats: runs before the first verdict and the cap.
MIN_RUNS, MAX_RUNS = 3, 10
#: Adaptive repeats stop on a change only at this p: a change stopped at the smallest p
#: its few runs allow (0.007 for 3 against 10) is undone by the run-wide correction, while
#: more runs would have confirmed it. Regressions are rare, so this costs few runs.
STOP_P = 0.001
#: two-mode detection: the fewest runs, and the smallest share of runs in a mode.
MODES_MIN_RUNS, MODES_MIN_SHARE = 5, 0.2
#: A baseline with at least this many sessions is judged at the session level too.
MIN_SESSIONS = 3

# SciPy 1.15 renamed bootstrap's random_state to rng (the old name is deprecated)
_RNG_ARG = "rng" if "rng" in inspect.signature(stats.bootstrap).parameters else "random_state"

REGRESSED, IMPROVED, UNCHANGED, UNDECIDED = "regressed", "improved", "unchanged", "undecided"
OUTCOMES = (REGRESSED, IMPROVED, UNCHANGED, UNDECIDED)


@dataclass(frozen=True)
class Modes:
    """Two groups of runs separated by a gap wider than either group's own spread."""

    low: float  # median of the lower mode
    high: float  # median of the upper mode
    share_high: float  # fraction of runs in the upper mode
    median: float  # median of all runs

    def text(self) -> str:
        return (f"two modes: {self.low:.4g} and {self.high:.4g} "
                f"({self.share_high:.0%} of runs high), median {self.median:.4g}")


@dataclass(frozen=True)
class Verdict:
    """One variable of one case judged against its baseline's runs."""

    outcome: str
    p: float  # min(KS, MWU), before any correction
    p_ks: float
    p_mwu: float
    ratio: float  # median(new) / median(baseline)
    ci: tuple[float, float]  # EQUIV_CONFIDENCE bootstrap interval of the ratio
    n_new: int
    n_base: int
    higher_is_better: bool
    min_effect: float
    modes: Modes | None = None  # of the new runs
    q: float | None = None  # p after the run-wide correction
    spread: tuple[float, float, float] | None = None  # new runs: CV, lowest, highest
    #: sessions the baseline's runs come from (1: session-to-session spread unknown)
    sessions: int = 1
    #: session level: p of the new session's median among the baseline's session medians
    p_session: float | None = None

    @property
    def change(self) -> float:
        """Relative change of the median, signed so that positive is worse."""
        c = self.ratio - 1.0
        return -c if self.higher_is_better else c

    def text(self) -> str:
        ci = f"[{self.ci[0] - 1:+.1%}, {self.ci[1] - 1:+.1%}]"
        p = f"p={self.p:.3g}" + (f" q={self.q:.3g}" if self.q is not None else "")
        modes = f"; {self.modes.text()}" if self.modes else ""
        spread = ""
        if self.outcome == UNDECIDED and self.spread is not None:
            # what the `unstable` guard used to fail on, now part of the verdict
            cv, lo, hi = self.spread
            spread = f"; new runs spread CV {cv:.1%} ({lo:.4g} to {hi:.4g})"
        base = f"{self.n_base} runs" + (f" of {self.sessions} sessions"
                                          if self.sessions > 1 else "")
        return (f"{self.outcome}: median {self.ratio - 1:+.1%} {ci}, {p}, "
                f"{self.n_new} vs {base}{modes}{spread}")


def _clean(values: Sequence[float], what: str) -> np.ndarray:
    a = np.asarray(list(values), dtype=float)
    if a.ndim != 1 or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: runs must be finite numbers")
    return a


def pvalues(new: Sequence[float], base: Sequence[float]) -> tuple[float, float, float]:
    """``(min, KS, MWU)`` two-sided p-values of the two samples (SciPy, exact where small)."""
    a, b = _clean(new, "new runs"), _clean(base, "baseline runs")
    if np.ptp(np.concatenate([a, b])) == 0:  # all equal: no evidence of any change
        return 1.0, 1.0, 1.0
    ks = float(stats.ks_2samp(a, b).pvalue)
    mwu = float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return min(ks, mwu), ks, mwu


def ratio_interval(new: Sequence[float], base: Sequence[float],
                   confidence: float = EQUIV_CONFIDENCE, seed: int = 0) -> tuple[float, float]:
    """Bootstrap percentile interval of median(new)/median(base) (SciPy, fixed seed)."""
    a, b = _clean(new, "new runs"), _clean(base, "baseline runs")
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        r = float(np.median(a) / np.median(b))
        return r, r
    if len(a) < 2 or len(b) < 2:  # nothing to resample: every ratio the runs allow
        return float(a.min() / b.max()), float(a.max() / b.min())

    def stat(x, y, axis=-1):
        return np.median(x, axis=axis) / np.median(y, axis=axis)

    res = stats.bootstrap((a, b), stat, n_resamples=2000, confidence_level=confidence,
                          method="percentile", vectorized=True, paired=False,
                          **{_RNG_ARG: np.random.default_rng(seed)})
    lo, hi = res.confidence_interval
    return float(lo), float(hi)


def two_modes(values: Sequence[float], min_effect: float = MIN_EFFECT) -> Modes | None:
    """Two modes when the widest gap between sorted runs splits them into two real groups.

    A gap counts when each side holds at least :data:`MODES_MIN_SHARE` of the
    runs (two at least), the gap is wider than twice the wider side's range and
    larger than ``min_effect`` of the median. With 5-10 runs a density estimate
    (KDE, dip test) has nothing to work on; a gap that wide is what a share of
    much slower unpinned runs looks like.
    """
    x = np.sort(_clean(values, "runs"))
    n = len(x)
    if n < MODES_MIN_RUNS:
        return None
    k = max(2, math.ceil(MODES_MIN_SHARE * n))
    gaps = np.diff(x)
    best = None
    for i in range(k - 1, n - k):  # split after index i
        lo, hi = x[: i + 1], x[i + 1:]
        spread = max(np.ptp(lo), np.ptp(hi))
        if gaps[i] > 2 * spread and (best is None or gaps[i] > gaps[best]):
            best = i
    med = float(np.median(x))
    if best is None or gaps[best] <= min_effect * abs(med):
        return None
    lo, hi = x[: best + 1], x[best + 1:]
    return Modes(float(np.median(lo)), float(np.median(hi)), len(hi) / n, med)


def decide(p: float, ratio: float, ci: tuple[float, float], higher_is_better: bool,
           alpha: float = ALPHA, min_effect: float = MIN_EFFECT) -> str:
    """The outcome from a p-value, the median ratio and its interval."""
    if p <= alpha and abs(ratio - 1.0) >= min_effect:
        worse = ratio < 1.0 if higher_is_better else ratio > 1.0
        return REGRESSED if worse else IMPROVED
    if 1.0 - min_effect < ci[0] and ci[1] < 1.0 + min_effect:
        return UNCHANGED
    return UNDECIDED


def session_test(new: Sequence[float], sessions: Sequence[Sequence[float]],
                 confidence: float = EQUIV_CONFIDENCE,
                 many_launches: bool = False) -> tuple[float, float, tuple[float, float]]:
    """``(p, ratio, interval)`` of the new runs' median among the baseline's session medians.

    On a log scale, the ``k`` session medians give a mean and a spread; one new
    session's median is a new draw from them under no change, so
    ``t = (log m_new - mean) / se`` has Student's t with ``k - 1`` degrees of
    freedom (a prediction interval), where ``se² = sd²·(1 + 1/k)`` plus what
    the new median's fewer launches add: a median of ``n`` launches varies by
    about ``(π/2)·σ²/n`` (σ² the launches' spread within a session, pooled over
    the baseline), so a new median of 3 launches against medians of 10 adds
    ``(π/2)·σ²·(1/3 - 1/10)``. That term also keeps ``se`` above zero when
    every baseline median is the same. A value printed coarsely (NPB prints
    its time to 0.01 s: a class S run of 0.02 s) carries a rounding error of
    ``q²/12`` (``q`` the finest decimal place the baseline's values use, see
    :func:`resolution`), which no number of sessions removes: it is added too, so a 5 % change of a
    value printed in 50 % steps is never called.
    ``ratio`` is ``m_new`` over the sessions' geometric mean, ``interval``
    the ratio's ``confidence`` prediction interval. ``many_launches``: as if
    the new median came from as many launches as the baseline's (what more
    launches of this session could reach at best).
    """
    logs = [np.log(_clean(r, "baseline session runs")) for r in sessions]
    k = len(logs)
    if k < 2:
        raise ValueError("a session-level test needs at least two baseline sessions")
    a = np.log(_clean(new, "new runs"))
    medians = np.array([np.median(x) for x in logs])
    d = float(np.median(a) - medians.mean())
    dof = sum(len(x) - 1 for x in logs)
    within = sum(float(((x - x.mean()) ** 2).sum()) for x in logs) / dof if dof else 0.0
    n_base = k / sum(1 / len(x) for x in logs)  # harmonic mean of the sessions' launches
    extra = 0.0 if many_launches else math.pi / 2 * within * max(0.0, 1 / len(a) - 1 / n_base)
    q = resolution([x for r in sessions for x in r]) / math.exp(float(medians.mean()))
    rounding = q * q / 12 * (1 + 1 / k)
    se = math.sqrt(float(medians.var(ddof=1)) * (1 + 1 / k) + extra + rounding)
    ratio = math.exp(d)
    if se == 0:
        return (1.0 if d == 0 else 0.0), ratio, (ratio, ratio)
    p = float(2 * stats.t.sf(abs(d) / se, k - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, k - 1)) * se
    return p, ratio, (math.exp(d - half), math.exp(d + half))


def resolution(values: Sequence[float]) -> float:
    """The step a value is printed in: ``10**-d`` for the most decimals any value uses.

    NPB prints its time as ``0.02`` (two decimals: steps of 0.01); a value measured
    finely and stored with six significant digits (``10.5197``) has steps far
    below any change worth calling. Identical runs give no gap to measure the
    step by, but their decimals still tell it.
    """
    finest = None
    for x in values:
        mantissa, _, exp = f"{abs(x):.6g}".partition("e")
        decimals = len(mantissa.partition(".")[2]) - (int(exp) if exp else 0)
        finest = decimals if finest is None else max(finest, decimals)
    return 0.0 if finest is None else 10.0 ** -finest


def judge(new: Sequence[float], base: Sequence[float], higher_is_better: bool = False,
          alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
          sessions: Sequence[Sequence[float]] | None = None) -> Verdict:
    """The verdict on ``new`` runs against ``base`` runs (each at least one run).

    ``sessions``: the baseline's runs grouped by the session that made them
    (``base`` is then their concatenation); with :data:`MIN_SESSIONS` or more
    the session-level test joins in (see the module's docstring).
    """
    if sessions is not None and len(sessions) > 0:
        base = [x for r in sessions for x in r]
    a, b = _clean(new, "new runs"), _clean(base, "baseline runs")
    if len(a) == 0 or len(b) == 0:
        raise ValueError("a verdict needs at least one new and one baseline run")
    if np.median(b) == 0:
        raise ValueError("baseline median is zero: no relative change can be judged")
    p, ks, mwu = pvalues(a, b)
    ratio = float(np.median(a) / np.median(b))
    ci = ratio_interval(a, b)
    k, p_session = (len(sessions) if sessions else 1), None
    if k >= MIN_SESSIONS:
        p_session, ratio, s_ci = session_test(a, sessions)
        p = max(p, p_session)          # intersection-union: both levels must differ
        ci = (min(ci[0], s_ci[0]), max(ci[1], s_ci[1]))
    cv = float(np.std(a, ddof=1) / np.mean(a)) if len(a) > 1 else 0.0
    return Verdict(decide(p, ratio, ci, higher_is_better, alpha, min_effect), p, ks, mwu,
                   ratio, ci, len(a), len(b), higher_is_better, min_effect,
                   two_modes(a, min_effect), spread=(cv, float(a.min()), float(a.max())),
                   sessions=k, p_session=p_session)


def correct(verdicts: Sequence[Verdict], alpha: float = ALPHA) -> list[Verdict]:
    """Verdicts of one run after Benjamini-Hochberg over all their p-values.

    A case called regressed or improved on its own p stays so only if its
    adjusted p (``q``) is still at most ``alpha``; otherwise it becomes
    undecided (a change that may be one of the run's expected false alarms).
    """
    if not verdicts:
        return []
    q = stats.false_discovery_control([v.p for v in verdicts], method="bh")
    out = []
    for v, qi in zip(verdicts, q):
        outcome = v.outcome
        if outcome in (REGRESSED, IMPROVED) and qi > alpha:
            outcome = decide(1.0, v.ratio, v.ci, v.higher_is_better, alpha, v.min_effect)
        out.append(replace(v, outcome=outcome, q=float(qi)))
    return out


def counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How many verdicts have each outcome."""
    return {o: sum(v.outcome == o for v in verdicts) for o in OUTCOMES}


@dataclass(frozen=True)
class Decision:
    """What a job does after a run: stop (with the verdict so far) or run again."""

    stop: bool
    reason: str
    verdict: Verdict | None

    @property
    def word(self) -> str:
        return "stop" if self.stop else "continue"


def judge_repeats(base: Sequence[float], runs: Sequence[float], higher_is_better: bool = False,
                  min_runs: int = MIN_RUNS, max_runs: int = MAX_RUNS,
                  alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
                  stop_p: float = STOP_P,
                  sessions: Sequence[Sequence[float]] | None = None) -> Decision:
    """Adaptive repeats: after each run, stop once decided, at the cap, or with no baseline.

    Unchanged stops at once; regressed or improved stops once p <= ``stop_p``
    (see :data:`STOP_P`), so the change survives Benjamini-Hochberg over the run.
    With a baseline of several ``sessions``, a case also stops when even as
    many launches as the baseline's sessions have would leave it undecided
    (:func:`_session_limited`): the baseline's sessions differ more than more
    launches of this one session can resolve.

    A case starts with ``min_runs`` runs and runs again while its verdict is
    undecided, up to ``max_runs``: clear cases stay cheap and only ambiguous
    ones cost more, as the studies' measurement loop did for samples.
    """
    if min_runs < 1 or max_runs < min_runs:
        raise ValueError(f"repeats: need 1 <= min ({min_runs}) <= max ({max_runs})")
    n = len(runs)
    if n < min_runs:
        return Decision(False, f"{n} of at least {min_runs} runs", None)
    if len(base) == 0 and not sessions:
        return Decision(True, "no baseline runs: nothing to judge against", None)
    v = judge(runs, base, higher_is_better, alpha, min_effect, sessions)
    if v.outcome == UNCHANGED or (v.outcome != UNDECIDED and v.p <= stop_p):
        return Decision(True, v.text(), v)
    if n >= max_runs:
        return Decision(True, f"cap of {max_runs} runs reached, {v.text()}", v)
    if v.p_session is not None and _session_limited(runs, sessions, alpha, min_effect):
        return Decision(True, f"the baseline's {v.sessions} sessions differ by more than "
                              f"{min_effect:.0%}; more launches cannot decide: {v.text()}", v)
    return Decision(False, v.text(), v)


def _session_limited(runs: Sequence[float], sessions: Sequence[Sequence[float]],
                     alpha: float, min_effect: float) -> bool:
    """Whether even as many launches as the baseline's sessions have would leave the case
    undecided: at the median so far, the session-level p stays above ``alpha`` and its
    interval wider than ``1 ± min_effect`` (the part more launches cannot shrink)."""
    p, ratio, (lo, hi) = session_test(runs, sessions, many_launches=True)
    return p > alpha and (hi / ratio > 1 + min_effect or ratio / lo > 1 + min_effect)
