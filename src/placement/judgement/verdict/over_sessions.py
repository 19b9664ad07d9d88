"""A run's values judged against their baseline's sessions: regressed, improved, unchanged,
undecided, and whether the whole node moved.

**The session is the unit that varies** (Kalibera & Jones). The launches of
one job share that session's node, load and memory layout, so they agree with
each other far more than with another session's: judging three launches
against three launches of one earlier session as if they were independent
draws (pseudo-replication) calls every busy hour a regression. So each value
is reduced to one number per session, the median of its launches on a log
scale, and the question is whether the new session's median lies outside
what the baseline's session medians allow.

**What one value lacks is borrowed from the run** (:mod:`placement.judgement.verdict.moderation`,
limma's moderated statistics). A value's spread between sessions is known
only from its own ``k`` sessions (``k - 1`` degrees of freedom: none with one
session); the run judges a hundred values at once, and their session spreads
together give a prior that each value's own estimate is shrunk towards. The
test is then a Student t with ``d0 + k - 1`` degrees of freedom, where ``d0``
measures how alike the values' spreads are: values that differ a lot give
heavy tails, so an unknown spread is never judged by the quiet values'. With a
baseline of one session the prior comes from the run itself: each value's
difference to its baseline session, after the node's common shift, is one
draw of the spread of such differences (an empirical null, Efron 2004); a
lone change among a hundred values hardly moves it. With two or more
sessions it comes from the baseline alone. The prior's scale follows each
value's launch spread (limma-trend, :func:`placement.moderation.fit_f_dist_trend`):
a value whose launches agree closely borrows the session spread of values like
it. A value's own launches set a floor: a value whose launches spread widely is
never judged by a tighter prior.

**The node's common shift** is the median, over the values printed finely, of
their change (slower positive). When most values moved together the node changed (load,
frequency, memory state), and that is said once (:class:`NodeShift`) instead of
as a hundred separate regressions; each value is then judged on what remains
after the common shift (a placement regression is neither hidden by nor
blamed on a slow node). A shift of at least ``machine_effect`` (default 7 %)
that also stands out from the baseline's own sessions' shifts (with three or
more), or of at least :data:`NODE_AT_ONCE` (50 %) at any baseline size, is flagged
(:mod:`.node_shift`: one or two sessions know nothing of the node's own spread); a
node flagged slower fails the run, and its values are then also judged with the
shift included, so the values that slowed with it are regressed too. With one baseline session the run's own prior no longer holds
on a flagged node (a load slows values unequally), so that judgement uses the
prior passed in (``prior``), else :data:`DEFAULT_PRIOR`.

**Outcomes**, per value, after Benjamini-Hochberg over the run's values (each
direction its own family, one-sided):

* **regressed**: worse beyond the node's shift (or, on a node flagged slower,
  worse with it), q <= ``alpha`` (default 0.05, so an unchanged run has a 5 %
  chance of any false alarm) and by at least ``min_effect`` (3 %);
* **improved**: the same on the better side;
* **unchanged**: the ``EQUIV_CONFIDENCE`` interval of the change lies within
  ``1 ± min_effect`` (an equivalence test);
* **undecided**: neither; the verdict says which change this baseline could
  detect (``detectable``) and more sessions in the baseline narrow it.

**A gross change** (:data:`GROSS_EFFECT`): a value at least 25 % worse than *every*
baseline session, beyond the node's shift when the node ran faster (a slower node's shift
is not taken off: :func:`gross_shift`), whose launches agree within 2 %
(:data:`GROSS_LAUNCHES`) and leave no doubt (the gap against the worst session's launch
noise alone, its own launches' at ``alpha / n``: :func:`gross_noise`). One baseline
session gives no value a spread of its own, and the spread borrowed from a run of unalike
values has tails too heavy to call a lone value 40 % slower; the gross rule does not test
the change against a spread, so it decides nothing alone: the verdict stays ``undecided``
with the change marked ``gross``, and a second session, which did not choose it, tests it
(:mod:`placement.acceptance.confirmation`: the value is regressed when that session
shows it regressed, or gross again: the median of its launches at least 25 % beyond the
worst baseline session and a faster first session's node shift, however its launches spread,
:func:`gross_again`). The worst baseline session is the bar, so a value
with states that its sessions saw is judged by its worst state; values whose launches
or a sibling's spread beyond the cap (:func:`state_prone`) and values printed coarsely
are never gross.

**Values with states** (those just named, and those whose check names its states in
``no_bound``: NPB's short runs, several threads' writes on a virtual node) are never
called regressed or improved: their sessions sit in states up to
x20 apart (NPB class S at 0.01 s) that no handful of baseline sessions shows, so the
session spread fitted over the run's values called them in unchanged reruns. They stay
``undecided`` ("states"), with their change shown, as plain ReFrame gives them no bound.

A value printed coarsely (NPB prints 0.02 s in steps of 0.01 s) carries a
rounding error no number of sessions removes (:func:`resolution`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from ...util import LazyModule, once
from . import moderation, node_shift
from .intervals import entry_name
from .moderation import Prior
from .node_shift import MACHINE_EFFECT, NODE_ALPHA, NODE_AT_ONCE, NodeShift  # noqa: F401
# (MIN_SESSIONS: the baselines' summary reads it here)
from ..rules import (ALPHA, DETECTABLE_MAX, EQUIV_CONFIDENCE, GROSS_EFFECT,  # noqa: F401
                     GROSS_LAUNCHES, LAUNCH_SHARE, MIN_EFFECT, MIN_SESSIONS, MIN_VALUES,
                     REF_ALPHA, REF_CAP)

#: imported at its first use (:mod:`placement.util.lazy_module`)
stats = LazyModule("scipy.stats")

K = TypeVar("K")

#: adaptive repeats: runs before the first verdict and the cap.
MIN_RUNS, MAX_RUNS = 3, 10
#: two-mode detection: the fewest runs, and the smallest share of runs in a mode.
MODES_MIN_RUNS, MODES_MIN_SHARE = 5, 0.2
#: a variance prior where nothing can be fitted (one value, one session): a 5 % spread
#: between sessions, values assumed unalike (heavy tails)
DEFAULT_PRIOR = Prior(0.05 ** 2, 4.0, "default")

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
class Series:
    """One value to judge: its new launches, the baseline's launches per session, direction."""

    new: Sequence[float]
    #: ``(session id, runs)`` per baseline session, oldest first
    sessions: Sequence[tuple[str | None, Sequence[float]]]
    higher_is_better: bool
    key: object = None
    #: ``sessions`` already prepared (:func:`prepare_sessions`), when many runs are judged
    #: against one baseline (a history page): None prepares them here
    baseline: BaselineSessions | None = field(default=None, compare=False, repr=False)

    @once
    def prepared(self) -> _Value:
        """Its launches on the log scale, signed (:func:`_prepare`), taken once: a series
        is read, never changed, and one judged in many runs (the lone changes of the
        regression benchmark) need not be prepared again in each."""
        return _prepare(self)


@dataclass(frozen=True)
class Verdict:
    """One value of a run judged against its baseline's sessions."""

    outcome: str
    #: two-sided p of the change beyond the node's shift (before any correction)
    p: float
    #: median(new) / the baseline sessions' (geometric) mean median, in the value's units
    ratio: float
    #: EQUIV_CONFIDENCE interval of ``ratio``
    ci: tuple[float, float]
    n_new: int
    n_base: int
    higher_is_better: bool
    min_effect: float
    #: baseline sessions
    sessions: int = 1
    #: degrees of freedom of the t (moderated)
    df: float = math.inf
    #: the node's common shift as a ratio in the value's units (1: none removed)
    node_ratio: float = 1.0
    #: the change beyond the node's shift, as a ratio in the value's units
    own_ratio: float = 1.0
    #: the smallest worsening this baseline could call for this value alone
    detectable: float = math.inf
    modes: Modes | None = None  # of the new runs
    q: float | None = None  # the deciding p after Benjamini-Hochberg
    spread: tuple[float, float, float] | None = None  # new runs: CV, lowest, highest
    #: ``with the node``: regressed only with the node's flagged shift included
    why: str = ""
    #: not regressed, but worse than every baseline session by at least
    #: :data:`GROSS_EFFECT` with tight launches: this change beyond the worst session (a
    #: second session decides, module docstring); None otherwise
    gross: float | None = None
    #: judged in a confirmation session: ``gross`` is its median's change (:func:`gross_again`)
    again: bool = False

    @property
    def change(self) -> float:
        """Relative change of the median, signed so that positive is worse."""
        c = self.ratio - 1.0
        return -c if self.higher_is_better else c

    def text(self) -> str:
        ci = f"[{self.ci[0] - 1:+.1%}, {self.ci[1] - 1:+.1%}]"
        node = ""
        if self.node_ratio != 1.0:
            node = (f" (node {self.node_ratio - 1:+.1%}, beyond it "
                    f"{self.own_ratio - 1:+.1%})")
        df = "inf" if not math.isfinite(self.df) or self.df >= moderation.DF_CAP \
            else f"{self.df:.3g}"
        p = f"p={self.p:.3g}" + (f" q={self.q:.3g}" if self.q is not None else "") + f" df={df}"
        base = f"{self.n_base} runs of {self.sessions} session" + \
            ("s" if self.sessions != 1 else "")
        modes = f"; {self.modes.text()}" if self.modes else ""
        extra = ""
        if self.outcome == UNDECIDED:
            if self.detectable < DETECTABLE_MAX:
                extra += (f"; this baseline can call a change beyond "
                          f"x{1 + self.detectable:.2f} alone: add sessions to narrow it")
            else:
                extra += (f"; this baseline can call no change below x{1 + DETECTABLE_MAX:.0f} "
                          "alone: add sessions to narrow it")
            if self.spread is not None:
                cv, lo, hi = self.spread
                extra += f"; new runs spread CV {cv:.1%} ({lo:.4g} to {hi:.4g})"
            if self.gross is not None and self.again:
                extra += (f"; gross again: median {self.gross:+.0%} beyond its worst baseline "
                          "session")
            elif self.gross is not None:
                extra += (f"; gross: {self.gross:+.0%} beyond its worst baseline session with "
                          "tight launches, a second session decides")
        why = f" {self.why}" if self.why else ""
        return (f"{self.outcome}{why}: median {self.ratio - 1:+.1%}{node} {ci}, {p}, "
                f"{self.n_new} vs {base}{modes}{extra}")


@dataclass(frozen=True)
class RunVerdict:
    """Every value of a run, the node's shift, and the prior the values borrowed."""

    verdicts: list[Verdict]
    node: NodeShift | None
    prior: Prior | None
    notes: list[str] = field(default_factory=list)
    #: the common shift of each baseline session (log scale), by session id
    shifts: dict = field(default_factory=dict)
    #: the launches' spread prior the values' launch variances were moderated with
    launch_prior: Prior | None = None


def _clean(values: Sequence[float], what: str) -> np.ndarray:
    a = np.asarray(list(values), dtype=float)
    # the arrays' own methods: NumPy's functions cost more than these checks of a few runs
    if a.ndim != 1 or len(a) == 0 or not np.isfinite(a).all() or (a <= 0).any():
        raise ValueError(f"{what}: runs must be positive finite numbers, at least one")
    return a


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


def two_modes(values: Sequence[float], min_effect: float = MIN_EFFECT) -> Modes | None:
    """Two modes when the widest gap between sorted runs splits them into two real groups.

    A gap counts when each side holds at least :data:`MODES_MIN_SHARE` of the
    runs (two at least), the gap is wider than twice the wider side's range and
    larger than ``min_effect`` of the median. With 5-10 runs a density estimate
    (KDE, dip test) has nothing to work on; a gap that wide is what a share of
    much slower unpinned runs looks like.
    """
    x = np.sort(np.asarray(list(values), dtype=float))
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


@dataclass
class _Value:
    """One series on the log scale, signed so that positive is worse."""

    sign: float
    ids: list
    medians: np.ndarray          # per baseline session
    new: np.ndarray              # new launches (log, signed)
    n_new: int
    n_base: int
    nbar: float                  # harmonic mean of the baseline sessions' launches
    dfw: int
    rounding: float              # variance of the printing step (log scale)
    #: the baseline sessions' mean median (log scale): the baseline's, taken once for it
    centre: float
    #: the baseline sessions' squared deviations from their own means, summed
    base_ss: float

    @property
    def k(self) -> int:
        return len(self.medians)

    @once
    def w(self) -> float:
        """Pooled variance of launches within a session, the new ones with the baseline's:
        taken when read, as a node's line alone (a history's sessions) never reads it."""
        ss = self.base_ss + float(((self.new - self.new.mean()) ** 2).sum())
        return ss / self.dfw if self.dfw else 0.0

    @once
    def a(self) -> float:
        """The new launches' median (read for every value in several steps: taken once).
        Sorted in Python: a handful of launches, for which NumPy's median costs ten times
        the sort, and the same number (the middle one, or the mean of the two)."""
        x = sorted(self.new.tolist())
        h = len(x) // 2
        return x[h] if len(x) % 2 else (x[h - 1] + x[h]) / 2


@dataclass(frozen=True)
class BaselineSessions:
    """A value's baseline sessions on the log scale, signed (:func:`prepare_sessions`): what
    :func:`_prepare` reads of them, kept apart from the new launches so that a history of
    thousands of sessions judged against one baseline prepares each value's sessions once."""

    sign: float
    ids: list
    medians: np.ndarray
    n_base: int
    nbar: float
    #: the sessions' squared deviations from their own means, summed, and their df
    ss: float
    dfw: int
    rounding: float
    #: the sessions' mean median (log scale)
    centre: float


def prepare_sessions(sessions: Sequence[tuple[str | None, Sequence[float]]],
                     higher_is_better: bool) -> BaselineSessions:
    """A value's baseline sessions prepared for :func:`_prepare` (``Series.baseline``)."""
    sign = -1.0 if higher_is_better else 1.0
    if not sessions:
        raise ValueError("a verdict needs at least one baseline session")
    groups = [sign * np.log(_clean(r, "baseline runs")) for _, r in sessions]
    ids = [sid if sid is not None else f"#{i}" for i, (sid, _) in enumerate(sessions)]
    ss = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    raw = [x for _, r in sessions for x in r]
    q = resolution(raw) / math.exp(float(np.mean(np.log(raw))))
    medians = np.array([np.median(g) for g in groups])
    medians.setflags(write=False)       # shared by every run judged against them
    return BaselineSessions(sign, ids, medians, len(raw),
                            len(groups) / sum(1 / len(g) for g in groups), ss,
                            sum(len(g) - 1 for g in groups), q * q / 12,
                            float(medians.mean()))


def _prepare(s: Series) -> _Value:
    b = s.baseline if s.baseline is not None else \
        prepare_sessions(s.sessions, s.higher_is_better)
    return _value(b, b.sign * np.log(_clean(s.new, "new runs")))


def _value(b: BaselineSessions, new: np.ndarray) -> _Value:
    return _Value(b.sign, b.ids, b.medians, new, len(new), b.n_base, b.nbar,
                  b.dfw + len(new) - 1, b.rounding, b.centre, b.ss)


def _prepared(series: Sequence[Series]) -> list[_Value]:
    """Each series' :attr:`Series.prepared`, those with their baseline already prepared
    (a history's runs, judged against one baseline) in one NumPy call for all their
    launches: a history of thousands of sessions prepares dozens of values in each, and a
    call per value was most of the cost. The same numbers (the logarithm is taken element
    by element); launches that are not all positive finite floats are prepared one series
    at a time, which refuses them as before."""
    todo = [s for s in series if "prepared" not in s.__dict__ and s.baseline is not None]
    if len(todo) > 1:
        flat = [x for s in todo for x in s.new]
        sizes = [len(s.new) for s in todo]
        if set(map(type, flat)) == {float} and all(sizes):
            a = np.array(flat)
            if np.isfinite(a).all() and not (a <= 0).any():
                # each launch's log times its value's sign (+-1: exact), in two calls
                logs = np.log(a) * np.repeat([s.baseline.sign for s in todo], sizes)
                i = 0
                for s, n in zip(todo, sizes):
                    s.__dict__["prepared"] = _value(s.baseline, logs[i:i + n])
                    i += n
    return [s.prepared for s in series]


def _coarse(v: _Value, min_effect: float) -> bool:
    """Printed in steps of at least the minimum effect: its rounding is its spread."""
    return math.sqrt(12 * v.rounding) >= min_effect


#: the smallest launch variance (log scale) the prior's trend reads: identical launches
#: (a value printed coarsely) would otherwise give ``log 0``
W_FLOOR = 1e-8


def covariate(w: float) -> float:
    """The trend's covariate of a value: the log of its launches' variance within a session
    (:mod:`placement.moderation`)."""
    return math.log(max(w, W_FLOOR))


def _launch_var(v: _Value, w: float, m: int | None = None) -> float:
    """Variance of the new median minus a baseline mean median from launch noise alone."""
    m = m or v.n_new
    return math.pi / 2 * w * (1 / m + 1 / (v.k * v.nbar))


@dataclass
class _Run:
    """What a run's values share once prepared: each step of :func:`judge_run` reads it
    and adds its part (the launches' spread, the node's shift, the sessions' prior)."""

    series: Sequence[Series]
    vals: list[_Value]
    min_effect: float
    selected_by: RunVerdict | None
    control: int | None
    #: each value's launch variance, moderated over the run, and the prior that did it
    w: list[float] = field(default_factory=list)
    w_prior: Prior | None = None
    #: values printed finely (the node's shift and the prior are theirs), and the basis
    #: the shift is taken over (the fine ones, or all when too few are fine)
    fine: list[int] = field(default_factory=list)
    basis: list[int] = field(default_factory=list)
    #: each baseline session's common shift, by session id
    shifts: dict = field(default_factory=dict)
    #: those shifts by basis (its values' keys), kept across the runs of one baseline
    shifts_of: dict | None = None
    #: the run's common shift (log, slower positive), each value's change with and without it
    c: float = 0.0
    d_raw: np.ndarray = field(default_factory=lambda: np.zeros(0))
    d_own: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: each value's session spread (k >= 2), its floor, the trend covariate
    s2: list[float] = field(default_factory=list)
    floors: list[float] = field(default_factory=list)
    xs: list[float] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.vals)


def _launch_spread(r: _Run) -> None:
    """Each value's launch variance within a session, moderated over the run's values (a
    confirmation session takes the run's it confirms)."""
    vals = r.vals
    if r.selected_by is not None:
        r.w_prior = r.selected_by.launch_prior
    elif r.n >= MIN_VALUES and sum(v.dfw > 0 and v.w > 0 for v in vals) >= MIN_VALUES:
        r.w_prior = moderation.fit([v.w for v in vals], [max(v.dfw, 1) for v in vals],
                                   "launches")
    r.w = [moderation.squeeze(v.w, v.dfw, r.w_prior) if r.w_prior and v.dfw > 0 else v.w
           for v in vals]


def _basis(r: _Run) -> None:
    """The values the node's shift is taken over: those printed finely (NPB's 0.02 s in
    steps of 0.01 s repeats the same medians, whose exact zeros would pin the shift at 0),
    never the control value itself."""
    if r.control is not None and not 0 <= r.control < r.n:
        raise ValueError(f"control value {r.control} is not one of the {r.n} values")
    r.fine = [i for i, v in enumerate(r.vals)
              if not _coarse(v, r.min_effect) and i != r.control]
    r.basis = r.fine if len(r.fine) >= MIN_VALUES else \
        [i for i in range(r.n) if i != r.control]


def _common_shift(r: _Run) -> None:
    """The baseline sessions' own shifts, then the new session's (``c``), and each value's
    change with it (``d_raw``) and beyond it (``d_own``)."""
    _node_shift(r)
    _changes(r)


def _node_shift(r: _Run) -> None:
    """The baseline sessions' own shifts (``shifts``), each value's change (``d_raw``) and
    the new session's common shift (``c``): all the node's line reads."""
    vals = r.vals
    if r.selected_by is not None:
        r.shifts = dict(r.selected_by.shifts)
    elif r.control is not None:
        cv_ = vals[r.control]
        r.shifts = dict(zip(cv_.ids, (float(m) for m in cv_.medians - cv_.medians.mean()))) \
            if cv_.k >= 2 else {}
    elif r.n >= MIN_VALUES:
        r.shifts = _session_shifts(r)
    r.d_raw = np.array([v.a - v.centre for v in vals])
    if r.selected_by is not None:
        r.c = r.selected_by.node.shift if r.selected_by.node is not None else 0.0
    elif r.control is not None:
        r.c = float(r.d_raw[r.control])
    else:
        r.c = _median([float(x) for x in r.d_raw[r.basis]]) if r.n >= MIN_VALUES else 0.0


def _changes(r: _Run) -> None:
    """Each value's change beyond the node's shift (``d_own``) and the spreads its test
    reads: its sessions' beyond their shifts, their floor, the trend's covariate."""
    vals = r.vals
    resid = [np.array([m - r.shifts.get(sid, 0.0) for sid, m in zip(v.ids, v.medians)])
             for v in vals]
    r.d_own = np.array([v.a - r.c - rm.mean() for v, rm in zip(vals, resid)])
    # each value's session spread (k >= 2), floored at what its launches alone give (a
    # value printed coarsely also carries its rounding: NPB's identical 0.02 s medians
    # would otherwise claim no spread at all and wreck the prior's fit)
    r.floors = [math.pi / 2 * wi / v.nbar + v.rounding for v, wi in zip(vals, r.w)]
    r.s2 = [float(np.var(rm, ddof=1)) + v.rounding if v.k >= 2 else 0.0
            for v, rm in zip(vals, resid)]
    r.xs = [covariate(wi) for wi in r.w]


def _session_prior(r: _Run) -> Prior | None:
    """The session-spread prior fitted on the values printed finely (a coarse value's
    spread is its printing step), its scale following each value's launch spread
    (limma-trend): from the baseline's sessions with two or more, else from the run's own
    differences after the node's shift (one draw each); None when neither fits."""
    multi = [i for i in r.fine if r.vals[i].k >= 2]
    if len(multi) >= MIN_VALUES:
        return moderation.fit([r.s2[i] for i in multi], [r.vals[i].k - 1 for i in multi],
                              "baseline", x=[r.xs[i] for i in multi])
    if len(r.fine) >= MIN_VALUES:
        return moderation.fit([r.d_own[i] ** 2 / 2 + r.vals[i].rounding for i in r.fine], 1,
                              "run", x=[r.xs[i] for i in r.fine])
    return None


def _node(r: _Run, machine_effect: float) -> tuple[NodeShift | None, float]:
    """The node line (:mod:`.node_shift`) and the variance the baseline sessions' shifts add
    to each value's change; none for a confirmation session or too few values."""
    if not (r.n >= MIN_VALUES or r.control is not None) or r.selected_by is not None \
            or not r.basis:
        return None, 0.0
    p, var_c = node_shift.tested_against(r.c, r.shifts)
    moved = node_shift.moved_with(r.c, r.d_raw[r.basis], r.min_effect)
    flag = node_shift.flagged(r.c, moved, len(r.basis), p, r.control is not None,
                              machine_effect)
    return NodeShift(r.c, len(r.basis), moved, p, len(r.shifts), flag, machine_effect,
                     entry_name(r.series[r.control].key) if r.control is not None else ""), \
        var_c


@dataclass
class _Tests:
    """A run's one-sided tests: beyond the node's shift, and with it on a flagged node."""

    var: np.ndarray
    df: np.ndarray
    p_worse: np.ndarray
    p_better: np.ndarray
    q_worse: np.ndarray
    q_better: np.ndarray
    #: with the node's shift included (only on a flagged node): spread, df, p and q
    sd_tot: np.ndarray
    df_tot: np.ndarray
    p_tot: np.ndarray | None = None
    q_tot: np.ndarray | None = None
    #: each value's t quantiles: the equivalence interval's half-width and the lone level
    #: (one SciPy call for all values, as each call costs more than its arithmetic)
    t_half: np.ndarray | None = None
    t_lone: np.ndarray | None = None


def _tests(r: _Run, pr: Prior, prior: Prior | None, node: NodeShift | None,
           var_c: float, alpha: float) -> _Tests:
    """Each value's change tested beyond the node's shift; on a flagged node also with it;
    and the t quantiles each value's verdict reads.

    The run's own differences are draws of the no-change spread only while the node did
    not change: a load slows values unequally and widens them, so on a flagged node the
    values that moved with it are judged by the spread a session normally has (the prior
    passed in, else the default)."""
    var, df = _variances(r.vals, r.w, r.s2, r.floors, r.xs, pr)
    sd = np.sqrt(var)
    p_worse = stats.t.sf(r.d_own / sd, df)
    p_better = stats.t.cdf(r.d_own / sd, df)
    t = _Tests(var, df, p_worse, p_better, _bh(p_worse), _bh(p_better),
               np.sqrt(var + var_c), df)
    if node is not None and node.flagged:
        if pr.source == "run":
            var_n, t.df_tot = _variances(r.vals, r.w, r.s2, r.floors, r.xs,
                                         prior or DEFAULT_PRIOR)
            t.sd_tot = np.sqrt(var_n + var_c)
        t.p_tot = (stats.t.sf(r.d_raw / t.sd_tot, t.df_tot) if node.slower
                   else stats.t.cdf(r.d_raw / t.sd_tot, t.df_tot))
        t.q_tot = _bh(t.p_tot)
    t.t_half = stats.t.ppf(0.5 + EQUIV_CONFIDENCE / 2, t.df_tot)
    t.t_lone = stats.t.ppf(1 - alpha / r.n, t.df)
    return t


def _outcome(i: int, r: _Run, t: _Tests, node: NodeShift | None, alpha: float,
             t_half: float, states: bool) -> tuple[str, str, float | None, float | None]:
    """One value's outcome, why, and the p and q that decided it (None: undecided).

    A value with ``states`` is called neither way: its sessions sit in states further apart
    than any spread its baseline sessions show."""
    # never called: unchanged values with states sat far beyond their worst baseline session
    if states:
        return UNDECIDED, "states", None, None
    eff = math.log1p(r.min_effect)
    d_own, d_raw = r.d_own[i], r.d_raw[i]
    with_node = node is not None and node.flagged
    if t.q_worse[i] <= alpha and d_own >= eff:
        return REGRESSED, "", t.p_worse[i], t.q_worse[i]
    if with_node and node.slower and t.q_tot[i] <= alpha and d_raw >= eff:
        return REGRESSED, "with the node", t.p_tot[i], t.q_tot[i]
    if t.q_better[i] <= alpha and -d_own >= eff:
        return IMPROVED, "", t.p_better[i], t.q_better[i]
    if with_node and not node.slower and t.q_tot[i] <= alpha and -d_raw >= eff:
        return IMPROVED, "with the node", t.p_tot[i], t.q_tot[i]
    if abs(d_raw) + t_half * t.sd_tot[i] < eff:
        return UNCHANGED, "", None, None
    return UNDECIDED, "", None, None


def _verdict(i: int, r: _Run, t: _Tests, node: NodeShift | None, alpha: float,
             prone: Collection[int]) -> Verdict:
    """One value's verdict: its outcome, interval, detectable change and gross mark."""
    v, s = r.vals[i], r.series[i]
    t_half = float(t.t_half[i])
    states = i in prone
    outcome, why, p_dec, q_dec = _outcome(i, r, t, node, alpha, t_half, states)
    p2 = float(min(1.0, 2 * min(t.p_worse[i], t.p_better[i])))
    # (clipped: with a heavy-tailed t the interval can run past any float)
    lo, hi = (float(np.clip(r.d_raw[i] + z * t_half * t.sd_tot[i], -50, 50)) for z in (-1, 1))
    nat = sorted((math.exp(v.sign * lo), math.exp(v.sign * hi)))
    raw_new = np.exp(v.sign * v.new)
    cv = float(np.std(raw_new, ddof=1) / np.mean(raw_new)) if v.n_new > 1 else 0.0
    t_lone = float(t.t_lone[i])
    # the gross rule's level: the run's values, a confirmation's those of the run it confirms
    n_gross = len(r.selected_by.verdicts) if r.selected_by is not None else r.n
    never_gross = outcome == REGRESSED or states or i == r.control or \
        _coarse(v, r.min_effect)
    return Verdict(
        outcome, p2 if p_dec is None else float(p_dec), math.exp(v.sign * r.d_raw[i]),
        (nat[0], nat[1]), v.n_new, v.n_base, s.higher_is_better, r.min_effect,
        sessions=v.k, df=float(t.df[i]), node_ratio=math.exp(v.sign * r.c),
        own_ratio=math.exp(v.sign * r.d_own[i]),
        detectable=max(r.min_effect, math.expm1(min(t_lone * math.sqrt(t.var[i]), 50.0))),
        modes=two_modes(raw_new, r.min_effect),
        q=float(t.q_worse[i] if q_dec is None else q_dec),
        spread=(cv, float(raw_new.min()), float(raw_new.max())), why=why,
        again=r.selected_by is not None,
        gross=None if never_gross else _gross(v, r, alpha / n_gross))


def judge_run(series: Sequence[Series], alpha: float = ALPHA, min_effect: float = MIN_EFFECT,
              machine_effect: float = MACHINE_EFFECT, prior: Prior | None = None,
              selected_by: RunVerdict | None = None,
              control: int | None = None, prone: Collection[int] = ()) -> RunVerdict:
    """Every value of one run judged against its baseline's sessions (module docstring).

    ``control``: the index in ``series`` (whose keys are then entries, ``(test, index
    values, var)``: the node line names it) of the site's *control value* (Chromium's
    reference build: a case the placement under test does not touch, run beside the
    others). Its change is then the node's shift, and each baseline session's shift is
    its deviation in that session, instead of the median over the values; the node is
    flagged on its shift alone (:func:`placement.judgement.verdict.node_shift.flagged`), however
    many values moved with it. The control is left out of the run's own prior (its change
    beyond itself is zero by construction).

    ``prior``: the session-spread prior to use when the run cannot fit one
    (one value, as the adaptive loop inside a job asks); by default fitted.

    ``selected_by``: this run is a *confirmation session* of values that run's
    verdict selected (regressed there). Selected values are its extremes, so
    their own differences are no sample of the no-change spread, and a handful
    of them has no common shift: the priors (sessions' and launches' spread), the
    node's shift and the baseline sessions' shifts are the selecting run's, fitted
    on all its values, and Benjamini-Hochberg runs over the selected values alone (the
    family this session tests). No node line is drawn from a confirmation.

    ``prone``: the indices of values with states (:func:`state_prone`, or their check
    says so): never gross, never called regressed or improved (:func:`_outcome`).
    """
    r = _shifted(series, min_effect, selected_by, control)
    if r.n == 0:
        return RunVerdict([], None, None)
    fitted = None if selected_by is not None else _session_prior(r)
    pr = (selected_by.prior if selected_by is not None else fitted) or prior or DEFAULT_PRIOR
    node, var_c = _node(r, machine_effect)
    t = _tests(r, pr, prior, node, var_c, alpha)
    out = [_verdict(i, r, t, node, alpha, prone) for i in range(r.n)]
    notes = [] if fitted is not None or selected_by is not None else \
        [f"too few values to fit a session-spread prior: {pr.text()}"]
    return RunVerdict(out, node, pr, notes, r.shifts, r.w_prior)


def _shifted(series: Sequence[Series], min_effect: float, selected_by: RunVerdict | None,
             control: int | None) -> _Run:
    """A run's values prepared, their launch spread, the shift's basis and the common shift:
    the steps both :func:`judge_run` and :func:`node_line` take."""
    r = _Run(series, _prepared(series), min_effect, selected_by, control)
    if r.n:
        _launch_spread(r)
        _basis(r)
        _common_shift(r)
    return r


def _session_shifts(r: _Run) -> dict:
    """The baseline sessions' own shifts over the run's basis, from ``r.shifts_of`` when it
    holds them for the same basis (the values' keys), and kept there."""
    base = [r.vals[i] for i in r.basis]
    key = tuple(r.series[i].key for i in r.basis) if r.shifts_of is not None else None
    if key is not None and key in r.shifts_of:
        return dict(r.shifts_of[key])
    shifts = node_shift.session_shifts([v.ids for v in base],
                                       [v.medians - v.medians.mean() for v in base], MIN_VALUES)
    if key is not None:
        r.shifts_of[key] = dict(shifts)
    return shifts


def _median(x: list[float]) -> float:
    """``np.median`` of a few finite numbers at a tenth of its cost: the middle one, or the
    two middle ones' sum halved, as NumPy takes them. NumPy's own for none, one not finite,
    or a zero (which of 0.0 and -0.0 is the middle one is its partition's choice)."""
    if not x or not all(map(math.isfinite, x)) or 0.0 in x:
        return float(np.median(x))
    x = sorted(x)
    h = len(x) // 2
    return x[h] if len(x) % 2 else (x[h - 1] + x[h]) / 2


def _node_only(series: Sequence[Series], min_effect: float, control: int | None,
               shifts_of: dict | None = None) -> _Run:
    """The steps of :func:`_shifted` the node's line reads, no more."""
    r = _Run(series, _prepared(series), min_effect, None, control)
    r.shifts_of = shifts_of
    if r.n:
        _basis(r)
        _node_shift(r)
    return r


def node_line(series: Sequence[Series], min_effect: float = MIN_EFFECT,
              machine_effect: float = MACHINE_EFFECT,
              control: int | None = None, shifts_of: dict | None = None) -> NodeShift | None:
    """The node's line of a run as :func:`judge_run` draws it, without testing each value:
    a history page of thousands of sessions reads only each session's node line, and the
    values' tests are most of a judgement's cost. ``shifts_of``: the baseline sessions'
    shifts by basis, kept between runs judged against one baseline whose series carry their
    entries as keys (:class:`placement.judgement.baselines.samples.Against`)."""
    r = _node_only(series, min_effect, control, shifts_of)
    return _node(r, machine_effect)[0] if r.n else None


def _gross(v: _Value, r: _Run, level: float) -> float | None:
    """The gross mark of value ``v``: in a confirmation session (``selected_by``) the
    median alone (:func:`gross_again`), else the first session's rule (:func:`gross_change`)
    against the launch noise :func:`gross_noise` gives; both beyond the node's shift as
    :func:`gross_shift` takes it."""
    c = gross_shift(r.c)
    # the median alone: asking a confirmation's launches to be tight again lost lasting changes
    if r.selected_by is not None:
        return gross_again(v, c)
    return gross_change(v, c, *gross_noise(v), level)


def gross_noise(v: _Value) -> tuple[float, float]:
    """The launch variance (log scale) and prior degrees of freedom the first session's gross
    gap is tested against: the value's own launches, not their variance moderated over the run.

    Why its own: the gross rule asks for tight launches of the value itself (at most
    :data:`GROSS_LAUNCHES`), and its second session tests the change again. The run's launch
    prior is fitted over every value, most of them on a virtual machine with states and
    launches 5-20 % apart, so values unlike each other (a prior of about one degree of
    freedom) pulled a value whose launches agreed within 1-2 % to a launch spread of 4-10 %:
    a value 36 % beyond its only baseline session then read as launch noise (p 0.0007 against
    a level of 0.0004), so the change was never sent to a second session."""
    # its own launches: a spread moderated over unalike values took tight values for wide ones
    return v.w, 0.0


def gross_shift(c: float) -> float:
    """The part of the node's common shift ``c`` (log, slower positive) the gross bar is
    taken beyond: a faster node's, never a slower node's.

    Why not a slower one's: the median change of a run's values does not tell a session in
    which the node ran slower as a whole from one in which most values did and a few did not
    (and one or two baseline sessions cannot even tell it from the node's own spread); taking
    the shift off a value that did not slow with the others hid a value 40 % slower than
    every baseline session behind a session 19 % slower (it stood 14-19 % beyond the shift,
    under the bar). The gross rule only selects a value for a second session, which tests
    whether the change lasted, so a slower session's values are judged against their worst
    baseline session itself. A faster node's shift is still taken off: a value that did not
    speed up with the others stands out by it (the rule as it was)."""
    # a faster node's only: values that did not slow with a slower node hid behind its shift
    return c if c < 0 else 0.0


def gross_again(v: _Value, c: float) -> float | None:
    """In a confirmation session: the change of the median of ``v``'s launches beyond its
    worst baseline session and the first session's node shift ``c`` (as :func:`gross_shift`
    takes it), relative, when it is
    at least :data:`GROSS_EFFECT`, else None.

    Why the median alone: the first session already asked for tight launches and a gap
    beyond launch noise, to choose which values a second session looks at. The second
    session only asks whether the change lasted; asking its launches to be tight again
    lost the change whenever one of its three launches fell into a slow state of the node
    (its median still 40 % off), and did not spare an unchanged rerun.
    """
    d = v.a - c - float(v.medians.max())
    return math.expm1(d) if d >= math.log1p(GROSS_EFFECT) else None


def gross_change(v: _Value, c: float, w: float, w_df: float, level: float) -> float | None:
    """The change of ``v`` beyond its worst baseline session and the node's shift ``c`` (as
    :func:`gross_shift` takes it), relative, when it is gross (module docstring), else None.

    Gross: at least :data:`GROSS_EFFECT`, its launches tight (their own spread within a
    session at most :data:`GROSS_LAUNCHES`: a value whose launches spread widely has
    sessions that spread wider still, and 25 % is no news for it), and the change beyond
    launch noise (the launches' variance ``w`` with ``w_df`` prior degrees of freedom, as
    :func:`gross_noise` gives them; one-sided Student's t at ``level``). This is no test of
    the change against the sessions' spread (one session has none): it only selects what a
    second session tests.
    """
    d = v.a - c - float(v.medians.max())
    df = min(w_df + v.dfw, moderation.DF_CAP)
    # (single launches: no launch spread to be tight against)
    if d < math.log1p(GROSS_EFFECT) or not df > 0 or math.sqrt(v.w) > GROSS_LAUNCHES:
        return None
    se = math.sqrt(math.pi / 2 * w * (1 / v.n_new + 1 / v.nbar))
    if se > 0 and float(stats.t.sf(d / se, df)) > level:
        return None
    return math.expm1(d)


def _variances(vals: list[_Value], w: list[float], s2: list[float], floors: list[float],
               xs: list[float], pr: Prior) -> tuple[np.ndarray, np.ndarray]:
    """Each value's variance of its change and the t's degrees of freedom under prior ``pr``:
    its own session spread shrunk to the prior, then the new median's fewer launches."""
    var, df = [], []
    for v, wi, s2i, fl, xi in zip(vals, w, s2, floors, xs):
        # the prior's fit is on the raw spreads (a floor there would bias it); the floor
        # is each value's own: never judged tighter than its launches allow
        t2 = max(moderation.squeeze(s2i, v.k - 1, pr, xi), fl)
        vi = t2 * (1 + 1 / v.k) + math.pi / 2 * wi * max(0.0, 1 / v.n_new - 1 / v.nbar)
        var.append(max(vi, _launch_var(v, wi) + v.rounding * (1 + 1 / v.k)))
        df.append(min(pr.df + v.k - 1, moderation.DF_CAP))
    return np.array(var), np.array(df)


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (SciPy)."""
    if len(p) == 0:
        return p
    return stats.false_discovery_control(np.clip(p, 0, 1), method="bh")


def judge_value(new: Sequence[float], sessions: Sequence[Sequence[float]],
          higher_is_better: bool = False, alpha: float = ALPHA,
          min_effect: float = MIN_EFFECT, prior: Prior | None = None,
          values: int = 1) -> Verdict:
    """One value alone against its baseline's sessions (the adaptive loop in a job).

    ``prior``: the session-spread prior of the value's reference file
    (:func:`file_prior`); ``values``: how many values the run will judge, so
    that a lone value is called at the level the run-wide correction will use.
    """
    s = Series(new, [(None, r) for r in sessions], higher_is_better)
    rv = judge_run([s], alpha / max(1, values), min_effect, prior=prior)
    return rv.verdicts[0]


def file_prior(groups: Sequence[Sequence[Sequence[float]]]) -> Prior:
    """The session-spread prior of a reference file's stored values (each a list of sessions).

    Exactly the prior :func:`judge_run` fits from a baseline of two or more sessions (the
    baseline alone decides it, whatever the new runs), else :data:`DEFAULT_PRIOR`.
    """
    multi = [g for g in groups if sum(1 for r in g if len(r)) >= 2]
    if len(multi) < MIN_VALUES:
        return DEFAULT_PRIOR
    series = [Series(g[-1], [(f"s{i}", r) for i, r in enumerate(g)], False) for g in multi]
    prior = judge_run(series).prior
    return prior if prior is not None and prior.source == "baseline" else DEFAULT_PRIOR


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


def judge_repeats(sessions: Sequence[Sequence[float]], runs: Sequence[float],
                  higher_is_better: bool = False, min_runs: int = MIN_RUNS,
                  max_runs: int = MAX_RUNS, alpha: float = ALPHA,
                  min_effect: float = MIN_EFFECT, prior: Prior | None = None,
                  values: int = 1) -> Decision:
    """Adaptive repeats: after each run, stop once decided, at the cap, or when more
    launches cannot decide.

    A case starts with ``min_runs`` runs and runs again while its verdict is
    undecided, up to ``max_runs``: clear cases stay cheap and only ambiguous
    ones cost more, as the studies' measurement loop did for samples. More
    launches of one session only narrow the launches' part of the variance;
    once that is below :data:`LAUNCH_SHARE` of it, the baseline's sessions
    decide and the loop stops.
    """
    if min_runs < 1 or max_runs < min_runs:
        raise ValueError(f"repeats: need 1 <= min ({min_runs}) <= max ({max_runs})")
    n = len(runs)
    if n < min_runs:
        return Decision(False, f"{n} of at least {min_runs} runs", None)
    if not sessions or not any(len(r) for r in sessions):
        return Decision(True, "no baseline runs: nothing to judge against", None)
    sessions = [r for r in sessions if len(r)]
    v = judge_value(runs, sessions, higher_is_better, alpha, min_effect, prior, values)
    if v.outcome != UNDECIDED:
        return Decision(True, v.text(), v)
    if n >= max_runs:
        return Decision(True, f"cap of {max_runs} runs reached, {v.text()}", v)
    if _launch_share(runs, sessions, higher_is_better, prior) < LAUNCH_SHARE:
        return Decision(True, f"the baseline's {len(sessions)} session(s) leave more than "
                              f"more launches can narrow; {v.text()}", v)
    return Decision(False, v.text(), v)


def _launch_share(runs, sessions, higher_is_better: bool, prior: Prior | None) -> float:
    """The share of a value's variance that more launches of this session could remove."""
    v = _prepare(Series(runs, [(None, r) for r in sessions], higher_is_better))
    pr = prior or DEFAULT_PRIOR
    launch = math.pi / 2 * v.w / v.n_new
    s2 = float(np.var(v.medians, ddof=1)) if v.k >= 2 else 0.0
    total = moderation.squeeze(s2, v.k - 1, pr, covariate(v.w)) * (1 + 1 / v.k) + launch
    return launch / total if total > 0 else 0.0


def launches_beyond_cap(sessions: Sequence[Sequence[float]]) -> bool:
    """Whether a value's launches within one stored session already spread wider than
    :data:`REF_CAP`: a bound at the cap would fail its unchanged reruns."""
    return any(len(r) and max(r) > REF_CAP * min(r) for r in sessions)


def state_prone(sessions: Mapping[K, Sequence[Sequence[float]]],
                family: Callable[[K], Hashable]) -> set[K]:
    """The values whose launches, or a sibling's (the same ``family``), spread wider than
    :data:`REF_CAP` within one stored session: the kernel has states further apart than the
    cap on this node, so ``record`` writes none of them a bound.

    Why the siblings: such a state is one of the node. Two threads writing a cache-sized
    buffer on a 2-core virtual machine gave 82-100 or 145-200 GB/s, case by case a minute
    apart; one sibling showed both within its launches, and the others, each in one state
    in the baseline session, failed their x2 bound in the other state in the next session.
    """
    prone = {family(k) for k, runs in sessions.items() if launches_beyond_cap(runs)}
    return {k for k in sessions if family(k) in prone}


def reference_bound(sessions: Sequence[Sequence[float]], higher_is_better: bool,
                    prior: Prior | None = None, values: int = 1, launches: int = MIN_RUNS,
                    alpha: float = REF_ALPHA) -> tuple[float, float | None]:
    """``(centre, bound)`` for plain ReFrame: the baseline sessions' (geometric) mean median
    and how far, as a fraction of it, a new session's value may move the worse way.

    The bound is the one-sided prediction bound of one new session of
    ``launches`` launches against the baseline's sessions (the same moderated
    variance as the verdict), at ``alpha / values`` (:data:`REF_ALPHA`) so that a
    plain ``reframe -r`` over all ``values`` fails nothing on an unchanged node with
    probability ``1 - alpha`` under that model. It never exceeds :data:`REF_CAP`: a value
    more than twice as slow always fails (one exactly twice as slow sits on the bound). Improvements never fail (ReFrame reads
    ``None`` as no bound on that side). A value whose launches already spread
    wider than the cap within a stored session (:func:`launches_beyond_cap`) gets
    no bound at all (``None``): the cap would fail its unchanged reruns.
    """
    groups = [r for r in sessions if len(r)]
    v = _prepare(Series(groups[-1], [(None, r) for r in groups], higher_is_better))
    centre = math.exp(v.sign * float(v.medians.mean()))
    if launches_beyond_cap(groups):
        return centre, None
    v.n_new = launches
    pr = prior or DEFAULT_PRIOR
    s2 = float(np.var(v.medians, ddof=1)) if v.k >= 2 else 0.0
    s2 = max(s2, math.pi / 2 * v.w / v.nbar + v.rounding)
    var = moderation.squeeze(s2, v.k - 1, pr, covariate(v.w)) * (1 + 1 / v.k) + \
        math.pi / 2 * v.w * max(0.0, 1 / launches - 1 / v.nbar)
    var = max(var, _launch_var(v, v.w) + v.rounding * (1 + 1 / v.k))
    df = min(pr.df + v.k - 1, moderation.DF_CAP)
    b = min(float(stats.t.ppf(1 - alpha / max(1, values), df)) * math.sqrt(var),
            math.log(REF_CAP))
    bound = -math.expm1(-b) if higher_is_better else math.expm1(b)
    return centre, bound
