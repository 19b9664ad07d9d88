"""Guards: performance variables judged against fixed limits, never against a baseline.

NPB's checks set them on every system (:mod:`placement.testlib.npb`): a case
whose runs vary too much is *unstable*, a run the watchdog ended is *stopped*,
and an oversubscribed run far slower than the same job's full-count run has
*collapsed*. They say whether a measurement can be trusted, not how fast the
machine is, so ``placement baseline record`` never stores them and the report
lists them apart from the baseline comparison: only the ones that tripped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..reading.run_report import Case, PerfValue

#: perfvar -> what it means when it trips (the limit is the case's own reference).
MEANINGS = {
    "time_cv": "unstable: run times vary more than the limit (coefficient of variation)",
    "stopped": "stopped: the watchdog ended runs over their time budget",
    "slowdown": "collapsed: an oversubscribed run slower than the limit times the full-count run",
    # no limit of its own: the acceptance summary reads it over the whole run
    "cpu_wait": "loaded: share of the job's time with a task on the node waiting for a CPU",
}
GUARD_VARS = frozenset(MEANINGS)


def reported(tc: dict[str, Any], var: str) -> float | None:
    """A case's value of ``var`` as ReFrame's run report holds it (``system:part:var``),
    None when it has none or none that is a finite number."""
    for key, tup in (tc.get("perfvalues") or {}).items():
        if key.rsplit(":", 1)[-1] == var and tup and isinstance(tup[0], (int, float)) \
                and math.isfinite(tup[0]):
            return float(tup[0])
    return None


def stopped_runs(tc: dict[str, Any]) -> int:
    """Runs of a case the watchdog ended (its ``stopped`` guard), 0 without one."""
    return int(reported(tc, "stopped") or 0)


@dataclass(frozen=True)
class Trip:
    """One guard of one case that ReFrame judged outside its limit."""

    case: Case
    var: str
    value: PerfValue

    @property
    def meaning(self) -> str:
        return MEANINGS[self.var]


def guarded(cases: list[Case]) -> list[Case]:
    """Cases that carry at least one judged guard (a guard with a limit)."""
    return [c for c in cases if any(v in c.perf and c.perf[v].ref is not None
                                    for v in GUARD_VARS)]


def trips(cases: list[Case]) -> list[Trip]:
    """Every guard ReFrame failed, in test and case order."""
    out = []
    for c in sorted(cases, key=lambda c: (c.test, c.label())):
        for var in sorted(GUARD_VARS & c.perf.keys()):
            pv = c.perf[var]
            if pv.result == "fail":
                out.append(Trip(c, var, pv))
    return out
