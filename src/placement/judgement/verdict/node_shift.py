"""The node's common shift: the change most of a run's values share (the node, not the placement).

A run is judged against baseline sessions of the same node. When most values moved
together, the node changed (a load, its frequency, its memory state), and that is said
once instead of as a hundred regressions. Whether a shift of a given size is news
depends on how far the node's shift moves between unchanged sessions, and only a
baseline of three or more sessions knows that: there the shift must stand out from the
baseline sessions' own shifts (Student's t, :data:`NODE_ALPHA`) and reach
:data:`MACHINE_EFFECT`. One or two sessions know nothing of it: unchanged sessions of
the tuning sets moved by up to +35% on a machine shared with other work, so there only
a shift of :data:`NODE_AT_ONCE` fails a run (as it does at any size); a smaller one is
said in a note that names what one session cannot call and what to do. A confirmation
session shows a line when its own line fails, or when the line reached NODE_AT_ONCE and the
two sessions' mean shift still does (:func:`shown_again`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ...util import LazyModule
from ..rules import MACHINE_EFFECT, NODE_ALPHA, NODE_AT_ONCE, TESTED_SESSIONS

#: imported at its first use (:mod:`placement.util.lazy_module`)
special = LazyModule("scipy.special")


@dataclass(frozen=True)
class NodeShift:
    """The change most of a run's values share: the node, not the placement."""

    #: median change of all values, log scale, slower positive
    shift: float
    values: int
    #: values that moved the same way by at least half the shift (and the minimum effect)
    moved: int
    #: one-sided p of the shift among the baseline sessions' own shifts (None: < 3 sessions)
    p: float | None
    #: baseline sessions with a shift of their own
    sessions: int
    flagged: bool
    #: the shift a node change needs (``machine_effect``)
    threshold: float = MACHINE_EFFECT
    #: the site's control value (``Test[keys].var``) whose change is the node's shift, when
    #: the site chose one; "" for the median of the values
    control: str = ""

    @property
    def slower(self) -> bool:
        return self.shift > 0

    @property
    def fails(self) -> bool:
        """Whether this node line fails a run: flagged, and slower."""
        return self.flagged and self.slower

    @property
    def at_once(self) -> bool:
        """A shift so large that it fails without a confirmation session
        (:data:`NODE_AT_ONCE`): a node line below it that no second session confirmed
        leaves the run incomplete, never failed."""
        return self.fails and self.percent >= NODE_AT_ONCE

    @property
    def together(self) -> bool:
        """Most values moved with the shift, or the site's control value gives it."""
        return self.moved >= self.values / 2 or bool(self.control)

    @property
    def percent(self) -> float:
        """How much slower (positive) or faster the node is, as a fraction."""
        return math.expm1(abs(self.shift))

    @property
    def untested(self) -> bool:
        """A shift of at least the machine effect that this baseline cannot test: fewer
        than :data:`TESTED_SESSIONS` sessions, below :data:`NODE_AT_ONCE`."""
        return (not self.flagged and self.p is None and self.percent >= self.threshold
                and self.together)

    def text(self) -> str:
        """:meth:`line` when flagged, else the shift as information."""
        if self.flagged:
            return self.line()
        if self.percent < self.threshold:
            why = f"below the {self.threshold:.0%} a node change needs"
        elif self.moved < self.values / 2 and not self.control:
            why = f"only {self.moved} of {self.values} values moved with it"
        elif self.untested:
            why = self.few_sessions()
        else:
            p = f"p={self.p:.2g}, " if self.p is not None else ""
            why = (f"within the baseline's {self.sessions} sessions' own shifts "
                   f"({p}a node change needs {NODE_ALPHA})")
        by = f"by its control value {self.control}" if self.control else \
            f"over {self.values} values"
        return (f"node shift {math.copysign(self.percent, self.shift):+.1%} (slower positive) "
                f"{by}, {why}: not a node change")

    def few_sessions(self) -> str:
        """What a baseline of one or two sessions can and cannot call of the node."""
        n = "one baseline session" if self.sessions < 2 else f"{self.sessions} baseline sessions"
        return (f"{n} cannot tell a shift under {NODE_AT_ONCE:.0%} from the node's ordinary "
                f"variation between sessions (unchanged sessions moved by up to +35% on a "
                f"shared machine); record {TESTED_SESSIONS} or more "
                "(`placement baseline record --add --from latest` after unchanged runs) to "
                "judge smaller shifts")

    def line(self) -> str:
        way = "slower" if self.slower else "faster"
        stand = (f", p={self.p:.2g} among the baseline's {self.sessions} sessions' shifts"
                 if self.p is not None else "")
        cause = (": load, frequency or memory state" if self.slower
                 else ": the baseline may have been recorded on a loaded node")
        if self.control:
            return (f"node {self.percent:.0%} {way} than its baseline by its control value "
                    f"{self.control} ({self.moved} of {self.values} values moved with it)"
                    f"{stand}{cause}")
        return (f"node {self.percent:.0%} {way} than its baseline on {self.moved} of "
                f"{self.values} values{stand}{cause}")


def shown_again(first: NodeShift, again: NodeShift | None) -> bool:
    """Whether a confirmation session shows the first session's node line: its own node line
    fails, or the first line reached :data:`NODE_AT_ONCE` and
    the two sessions' mean shift still does, the confirmation slower with most of its values
    (or its control value) moving with it.

    Why: a first line of NODE_AT_ONCE fails a run with no confirmation session, so a
    confirmation must not dismiss it for reading just under the bar against a baseline
    session that was itself in a slow state; it dismisses a line whose slowdown did not
    last (a passing burst of load reads near nothing in the second session)."""
    if again is None:
        return False
    if again.fails:
        return True
    # the mean of both: a baseline session in a slow state must not let a 2x slower node pass
    return (first.at_once and again.slower and again.together
            and (first.shift + again.shift) / 2 >= math.log1p(NODE_AT_ONCE))


def session_shifts(ids: list[list], devs: list[np.ndarray], min_values: int) -> dict:
    """Each baseline session's common shift: the median over values of its deviation from
    the value's mean over the sessions (``ids``/``devs`` per value, values with two or
    more sessions); sessions with fewer than ``min_values`` values have none."""
    dev: dict = {}
    for sids, d in zip(ids, devs):
        if len(sids) < 2:
            continue
        for sid, m in zip(sids, d):
            dev.setdefault(sid, []).append(m)
    return {sid: float(np.median(d)) for sid, d in dev.items() if len(d) >= min_values}


def tested_against(c: float, shifts: dict) -> tuple[float | None, float]:
    """One-sided p of the shift ``c`` among the baseline sessions' own ``shifts`` (a
    prediction interval: Student's t with ``k - 1`` degrees of freedom), and the variance
    their spread adds to each value's change; ``(None, 0)`` below
    :data:`TESTED_SESSIONS` sessions."""
    ks = len(shifts)
    if ks < TESTED_SESSIONS:
        return None, 0.0
    sd, mean = _spread(tuple(shifts.values()))
    if sd <= 0:
        return 0.0, 0.0
    # stats.t.sf's own function (Student's t survival): the same number without its checks
    # of arguments, which cost twenty times the function in a history of thousands
    return float(special.stdtr(ks - 1, -(abs(c - mean) / sd))), sd * sd


@functools.lru_cache(maxsize=256)
def _spread(vals: tuple[float, ...]) -> tuple[float, float]:
    """The baseline sessions' shifts' prediction spread and mean (kept per set of shifts:
    a history tests thousands of runs against the same few)."""
    return (float(np.std(vals, ddof=1)) * math.sqrt(1 + 1 / len(vals)),
            float(np.mean(vals)))


def flagged(c: float, moved: int, values: int, p: float | None, by_control: bool,
            machine_effect: float = MACHINE_EFFECT) -> bool:
    """Whether a common shift ``c`` (log) is a node change: most values moved with it (or
    a control value gives it), and it is either at least :data:`NODE_AT_ONCE`, or at least
    ``machine_effect`` and standing out from three or more baseline sessions' own shifts."""
    together = moved >= values / 2 or by_control
    size = math.expm1(abs(c))
    tested = p is not None and p <= NODE_ALPHA and size >= machine_effect
    return together and (size >= NODE_AT_ONCE or tested)


def moved_with(c: float, d: np.ndarray, min_effect: float) -> int:
    """Values that moved the way of the shift ``c`` by at least half of it (and at least
    the minimum effect)."""
    half = max(abs(c) / 2, math.log1p(min_effect))
    return int(np.sum((np.sign(d) == np.sign(c)) & (np.abs(d) >= half)))
