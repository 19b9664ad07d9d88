"""Borrowing a variance from many values: limma's empirical Bayes moderation.

A baseline of one to three sessions says almost nothing about one value's
session-to-session spread, but a run judges a hundred values at once.
Genomics met the same problem (a few replicates per gene, thousands of genes)
with *moderated statistics* (Smyth 2004, limma): each value's sample variance
``s²`` (``d`` degrees of freedom) is taken as a draw from a scaled inverse
chi-square prior ``s0²·d0/χ²(d0)`` fitted to all values, and replaced by the
posterior mean ``(d0·s0² + d·s²)/(d0 + d)``; a test with it has Student's t
with ``d0 + d`` degrees of freedom. A value with few sessions leans on the
run; one with many on itself. ``d0`` measures how alike the values are: a
small ``d0`` (values that differ a lot) gives heavy tails, so a value with an
unknown spread is never judged by the spread of quiet ones.

:func:`fit_f_dist` is limma's ``fitFDist`` (moment matching on ``log s²``),
:func:`trigamma_inverse` its Newton iteration; both are checked against
SciPy (``scipy.special.polygamma``, ``scipy.stats.f``) in the tests.
:func:`fit_f_dist_mle` fits the same F by maximum likelihood (SciPy's
``stats.f.fit`` without a trend); it is kept to be measured against the
moments (:data:`ESTIMATOR`), not used.

**A prior that follows the launches' spread** (limma-trend, Law et al. 2014):
the values' session spreads differ by orders of magnitude (a 40 ms class S
time against a GB/s figure), and a single prior for all of them has a small
``d0``: heavy tails that leave every lone value undecided. A value whose own
launches are tight tends to be tight between sessions too (on the A/A
sessions of this suite the two correlate at 0.5 to 0.7 on a log scale), so
:func:`fit_f_dist_trend` lets the prior's scale follow the value's
within-session spread (a line in ``log s0²`` against ``log w``, never
falling): the scale a value borrows is that of values like it, and the
heterogeneity left around the line, not all of it, sets ``d0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...util import LazyModule
from ..rules import DF_CAP

#: imported at its first use (:mod:`placement.util.lazy_module`)
optimize = LazyModule("scipy.optimize")
special = LazyModule("scipy.special")
stats = LazyModule("scipy.stats")

#: the most a fitted prior may claim: fitted on one or two degrees of freedom per value,
#: ``fitFDist`` often finds the values "alike" (``d0`` infinite) only because sampling hides
#: how they differ, and a normal tail then calls the noisier ones changed. Values whose
#: spreads differ threefold failed 13 % of unchanged runs at the 5 % level with two baseline
#: sessions without this bound and 5 % with it (tests/test_verdict.py)
D0_MAX = 10.0
#: how :func:`fit` estimates the prior: ``moments`` (limma's ``fitFDist``) or ``mle``
#: (:func:`fit_f_dist_mle`). Moments it is: the likelihood fit found more lone changes with
#: two baseline sessions (a lone 2x: 133 against 120 of 240 on the two-hour A/A set, 76
#: against 65 of 144 back to back) with the same unchanged sessions failed, but it called 35
#: values regressed in the shared set's unchanged sessions at two sessions, against 14
#: (``benchmarks/regression_detection.py --estimator mle`` shows both)
ESTIMATOR = "moments"


@dataclass(frozen=True)
class Prior:
    """A fitted prior of a variance: scale ``s0²`` and degrees of freedom ``d0``."""

    s0_2: float
    d0: float
    #: where it came from: ``baseline`` (the baseline's sessions), ``run`` (the
    #: run's own values against a one-session baseline), ``default`` (no data)
    source: str = "baseline"
    #: values it was fitted on
    values: int = 0
    #: the trend: ``log s0²`` rises by ``slope`` per unit of the covariate (the log of the
    #: value's launch variance) around ``x0``; ``s0_2`` is the scale at ``x0``
    slope: float = 0.0
    x0: float = 0.0
    #: the covariate's fitted range: a value outside it borrows the scale at the edge
    x_range: tuple[float, float] = (-math.inf, math.inf)

    @property
    def df(self) -> float:
        return min(self.d0, DF_CAP)

    def scale(self, x: float | None = None) -> float:
        """``s0²`` for a value whose covariate is ``x`` (None: the scale at the centre)."""
        if x is None or self.slope == 0.0 or not math.isfinite(x):
            return self.s0_2
        x = min(max(x, self.x_range[0]), self.x_range[1])
        return self.s0_2 * math.exp(self.slope * (x - self.x0))

    def text(self) -> str:
        d0 = "inf" if not math.isfinite(self.d0) else f"{self.d0:.3g}"
        trend = ""
        if self.slope:
            lo, hi = (math.sqrt(self.scale(x)) for x in self.x_range)
            trend = f", {lo:.1%} to {hi:.1%} with the launches' spread"
        return (f"session spread {math.sqrt(self.s0_2):.1%}{trend} (d0={d0}, from the "
                f"{self.source}" + (f", {self.values} values" if self.values else "") + ")")


def trigamma_inverse(y: float) -> float:
    """``x`` with ``trigamma(x) = y`` (limma's Newton iteration, y > 0)."""
    if not y > 0:
        raise ValueError("trigamma_inverse needs y > 0")
    if y > 1e7:
        return 1.0 / math.sqrt(y)
    if y < 1e-6:
        return 1.0 / y
    x = 0.5 + 1.0 / y
    for _ in range(100):
        tri = float(special.polygamma(1, x))
        step = tri * (1 - tri / y) / float(special.polygamma(2, x))
        x += step
        if -step / x < 1e-8:
            break
    return x


def fit_f_dist(s2, df) -> tuple[float, float]:
    """``(s0², d0)`` of the scaled-F prior that the sample variances ``s2`` follow.

    ``s2 / s0²`` is taken as F-distributed with ``(df, d0)`` degrees of
    freedom; the two moments of ``log s2`` give both parameters. Non-positive
    variances are left out. ``d0`` is ``inf`` when the values spread no more
    than sampling alone explains (all alike).
    """
    s2 = np.asarray(s2, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), s2.shape)
    ok = (s2 > 0) & np.isfinite(s2) & (df > 0)
    s2, df = s2[ok], df[ok]
    n = len(s2)
    if n == 0:
        raise ValueError("no positive variances to fit a prior on")
    e = np.log(s2) - special.digamma(df / 2) + np.log(df / 2)
    emean = float(e.mean())
    if n < 2:
        return math.exp(emean), math.inf
    evar = float(((e - emean) ** 2).sum() / (n - 1) - special.polygamma(1, df / 2).mean())
    if evar <= 0:
        return math.exp(emean), math.inf
    d0 = 2 * trigamma_inverse(evar)
    s0_2 = math.exp(emean + float(special.digamma(d0 / 2)) - math.log(d0 / 2))
    return s0_2, d0


def fit_f_dist_trend(s2, df, x) -> tuple[float, float, float, float]:
    """``(s0², d0, slope, x0)``: :func:`fit_f_dist` with the scale following a covariate.

    limma's ``fitFDist`` with a covariate, the trend a straight line: the
    moment-matched ``e = log s2 - digamma(df/2) + log(df/2)`` is regressed on
    ``x`` (least squares, :func:`numpy.polyfit`); what the line leaves, less
    the sampling variance ``trigamma(df/2)``, gives ``d0``. A falling line (a
    value with noisier launches calmer between sessions) has no physical reading
    and is taken as flat. ``s0²`` is the scale at ``x0``, the covariate's mean.
    """
    s2 = np.asarray(s2, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), s2.shape)
    x = np.broadcast_to(np.asarray(x, dtype=float), s2.shape)
    ok = (s2 > 0) & np.isfinite(s2) & (df > 0) & np.isfinite(x)
    s2, df, x = s2[ok], df[ok], x[ok]
    n = len(s2)
    if n < 3 or float(np.ptp(x)) == 0.0:
        s0_2, d0 = fit_f_dist(s2, df)
        return s0_2, d0, 0.0, float(x.mean()) if n else 0.0
    e = np.log(s2) - special.digamma(df / 2) + np.log(df / 2)
    x0 = float(x.mean())
    slope, centre = (float(c) for c in np.polyfit(x - x0, e, 1))
    params = 2
    if slope <= 0:
        slope, centre, params = 0.0, float(e.mean()), 1
    resid = e - centre - slope * (x - x0)
    evar = float((resid ** 2).sum() / (n - params) - special.polygamma(1, df / 2).mean())
    if evar <= 0:
        return math.exp(centre), math.inf, slope, x0
    d0 = 2 * trigamma_inverse(evar)
    return math.exp(centre + float(special.digamma(d0 / 2)) - math.log(d0 / 2)), d0, slope, x0


def fit_f_dist_mle(s2, df, x=None) -> tuple[float, float, float, float]:
    """``(s0², d0, slope, x0)`` by maximum likelihood: the scaled F of :func:`fit_f_dist_trend`
    (the scale a straight, never falling line in ``log s0²`` against ``x``; ``x`` None: flat).

    Why not moments: with one or two degrees of freedom per value (one to three baseline
    sessions), the variance of ``log s²`` is mostly the sampling variance of ``log χ²``,
    whose left tail (a value whose sessions happened to agree) swamps what the values'
    real differences add. The moments then find the values "alike" (``d0`` infinite) or
    very unalike from one run to the next. The likelihood of each ``s²`` under the F weighs
    every value by what it says about ``d0``. Maximised with Nelder-Mead from the moment
    fit; checked against :func:`scipy.stats.f.fit` in the tests.
    """
    s2 = np.asarray(s2, dtype=float)
    df = np.broadcast_to(np.asarray(df, dtype=float), s2.shape)
    xa = np.zeros(s2.shape) if x is None else np.broadcast_to(np.asarray(x, dtype=float),
                                                                s2.shape)
    ok = (s2 > 0) & np.isfinite(s2) & (df > 0) & np.isfinite(xa)
    s2, df, xa = s2[ok], df[ok], xa[ok]
    n = len(s2)
    if n < 3:
        return (*fit_f_dist(s2, df), 0.0, float(xa.mean()) if n else 0.0)
    x0 = float(xa.mean())
    dx = xa - x0
    trend = x is not None and float(np.ptp(xa)) > 0.0
    lo, hi = math.log(0.2), math.log(DF_CAP)

    def nll(theta: np.ndarray, with_slope: bool) -> float:
        c, t = float(theta[0]), min(max(float(theta[-1]), lo), hi)
        b = float(theta[1]) if with_slope else 0.0
        return -float(stats.f.logpdf(s2, df, math.exp(t), scale=np.exp(c + b * dx)).sum())

    m_s0_2, m_d0, m_slope, _ = (fit_f_dist_trend(s2, df, xa) if trend
                                else (*fit_f_dist(s2, df), 0.0, x0))
    t0 = math.log(min(max(m_d0, 1.0), DF_CAP / 2))
    best = None
    for with_slope in ((True, False) if trend else (False,)):
        start = [math.log(m_s0_2)] + ([m_slope] if with_slope else []) + [t0]
        r = optimize.minimize(nll, np.array(start), args=(with_slope,), method="Nelder-Mead",
                              options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 4000})
        slope = float(r.x[1]) if with_slope else 0.0
        if with_slope and slope <= 0:
            continue        # a falling line has no physical reading: the flat fit
        if best is None or r.fun < best[0]:
            best = (float(r.fun), float(r.x[0]), slope, float(r.x[-1]))
        if with_slope:
            break
    _, c, slope, t = best
    t = min(max(t, lo), hi)
    d0 = math.inf if t >= hi else math.exp(t)
    return math.exp(c), d0, slope, x0


def squeeze(s2: float, df: float, prior: Prior, x: float | None = None) -> float:
    """The posterior variance of one value: its own ``s2`` (``df``) shrunk to the prior
    (its scale at the value's covariate ``x``, for a trend)."""
    s0_2 = prior.scale(x)
    if df <= 0:
        return s0_2
    if not math.isfinite(prior.d0):
        return s0_2
    return (prior.d0 * s0_2 + df * s2) / (prior.d0 + df)


def fit(s2, df, source: str, floor: float = 0.0, x=None) -> Prior | None:
    """:func:`fit_f_dist` as a :class:`Prior` (:func:`fit_f_dist_trend` with a covariate
    ``x``; :func:`fit_f_dist_mle` for either when :data:`ESTIMATOR` is ``mle``), or None
    with no positive variance."""
    s2 = np.maximum(np.asarray(s2, dtype=float), floor)
    if not np.any(s2 > 0):
        return None
    if x is None:
        if ESTIMATOR == "mle":
            s0_2, d0, _, _ = fit_f_dist_mle(s2, df)
        else:
            s0_2, d0 = fit_f_dist(s2, df)
        slope, x0, rng = 0.0, 0.0, (-math.inf, math.inf)
    else:
        x = np.broadcast_to(np.asarray(x, dtype=float), s2.shape)
        s0_2, d0, slope, x0 = (fit_f_dist_mle if ESTIMATOR == "mle" else fit_f_dist_trend)(
            s2, df, x)
        used = x[(s2 > 0) & np.isfinite(x)]
        rng = (float(used.min()), float(used.max())) if len(used) else (-math.inf, math.inf)
    if d0 > D0_MAX:     # the scale of the fit with d0 = D0_MAX (limma's moment match)
        d0 = D0_MAX
    return Prior(s0_2, d0, source, int(np.sum(s2 > 0)), slope, x0, rng)
