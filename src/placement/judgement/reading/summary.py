"""Means, confidence intervals and significance for repeated timings.

The studies report means of at least five runs; a difference between two
placements (or between a run and its baseline) only means something when it is
larger than the spread of those runs. Everything here works from either the
per-run values or (mean, standard deviation, n), because a test may expose
only its summary. scipy gives exact Student-t quantiles and p-values when it is
installed; without it a table of 95 % quantiles keeps reports working (the
p-value is then left out, the significant/not-significant verdict is the same).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec

from ...util import LazyModule

#: optional, imported at its first use: exact quantiles and p-values
_sps = LazyModule("scipy.stats") if find_spec("scipy") is not None else None

#: Confidence level of every interval and test in the reports.
CONFIDENCE = 0.95

# two-sided 95 % Student-t quantiles for 1..30 degrees of freedom (no-scipy fallback)
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def number(x, kind: type = float, default=None):
    """``x`` as a ``kind`` (float or int), else ``default``: absent, a bool, or not a number
    (NPB prints ``******`` when a value overflows its field)."""
    if x is None or isinstance(x, bool):
        return default
    try:
        return kind(x)
    except (TypeError, ValueError):
        return default


def t_quantile(df: float) -> float:
    """Two-sided 95 % Student-t quantile for ``df`` degrees of freedom."""
    if df <= 0:
        return math.inf
    if _sps is not None:
        return float(_sps.t.ppf(0.5 + CONFIDENCE / 2, df))
    i = int(math.floor(df))
    return _T95[i - 1] if i <= len(_T95) else 1.960 + 2.4 / df  # close for df > 30


@dataclass(frozen=True)
class Summary:
    """Mean of ``n`` runs with its sample standard deviation and 95 % CI half-width."""

    mean: float
    sd: float | None = None
    n: int = 1

    @property
    def half_width(self) -> float | None:
        """Half-width of the 95 % CI of the mean; None with fewer than two runs."""
        if self.sd is None or self.n < 2:
            return None
        return t_quantile(self.n - 1) * self.sd / math.sqrt(self.n)

    @property
    def cv(self) -> float | None:
        """Coefficient of variation (sd / mean)."""
        if self.sd is None or not self.mean:
            return None
        return self.sd / abs(self.mean)

    def text(self, digits: int = 3, decimals: int | None = None) -> str:
        """``mean ± half-width``: ``digits`` significant figures, or ``decimals`` places
        (the studies print times and speedups with two decimals)."""
        hw = self.half_width
        if decimals is not None and abs(self.mean) >= 10 ** -decimals * 10:
            m = f"{self.mean:.{decimals}f}"
            return m if hw is None else f"{m} ± {hw:.{decimals}f}"
        m = fmt(self.mean, digits)
        return m if hw is None else f"{m} ± {fmt(hw, 2)}"


def fmt(x: float | None, digits: int = 3) -> str:
    """A number to ``digits`` significant figures, without exponent for usual magnitudes."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if x == 0:
        return "0"
    if math.isinf(x):       # a run report may hold one (a time of 0 makes a rate infinite)
        return "∞" if x > 0 else "-∞"
    mag = math.floor(math.log10(abs(x)))
    if -4 <= mag < 7:
        return f"{x:.{max(digits - 1 - mag, 0)}f}"
    return f"{x:.{digits - 1}e}"


def summarize(values: Sequence[float]) -> Summary:
    """Summary of per-run values."""
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("no values to summarize")
    n = len(vals)
    mean = sum(vals) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1)) if n > 1 else None
    return Summary(mean, sd, n)


def ratio(num: Summary, den: Summary) -> Summary:
    """num / den with a delta-method spread, for speedups (time without / time with affinity).

    The returned ``sd``/``n`` reproduce the ratio's approximate CI through
    :attr:`Summary.half_width`: the relative standard errors add in quadrature.
    """
    r = num.mean / den.mean
    if num.half_width is None or den.half_width is None or num.mean == 0:
        return Summary(r)   # no relative spread of a zero (e.g. NPB's 0.00 s timer reading)
    n = min(num.n, den.n)
    rel = math.sqrt((num.sd / num.mean) ** 2 / num.n + (den.sd / den.mean) ** 2 / den.n)
    return Summary(r, abs(r) * rel * math.sqrt(n), n)


@dataclass(frozen=True)
class Verdict:
    """Whether a measured mean differs from a reference beyond its run-to-run spread."""

    method: str
    significant: bool | None  # None: not decidable (a single run)
    p_value: float | None = None


def against_value(s: Summary, ref: float) -> Verdict:
    """One-sample t-test of the mean against a fixed baseline value.

    Equivalent to asking whether ``ref`` lies outside the 95 % CI of the mean:
    a baseline file stores one value per case, not its runs.
    """
    hw = s.half_width
    if hw is None:
        return Verdict("single run: not testable", None)
    se = s.sd / math.sqrt(s.n)
    if se == 0:
        return Verdict("one-sample t-test", s.mean != ref, 0.0 if s.mean != ref else 1.0)
    t = (s.mean - ref) / se
    p = float(2 * _sps.t.sf(abs(t), s.n - 1)) if _sps is not None else None
    return Verdict("one-sample t-test", abs(s.mean - ref) > hw, p)


def welch(a: Summary, b: Summary) -> Verdict:
    """Welch's unequal-variance t-test between two means (two placements, two runs)."""
    if a.half_width is None or b.half_width is None:
        return Verdict("single run: not testable", None)
    va, vb = a.sd ** 2 / a.n, b.sd ** 2 / b.n
    se = math.sqrt(va + vb)
    if se == 0:
        return Verdict("Welch t-test", a.mean != b.mean, None)
    df = (va + vb) ** 2 / ((va ** 2 / (a.n - 1)) + (vb ** 2 / (b.n - 1)))
    t = (a.mean - b.mean) / se
    p = float(2 * _sps.t.sf(abs(t), df)) if _sps is not None else None
    return Verdict("Welch t-test", abs(t) > t_quantile(df), p)
