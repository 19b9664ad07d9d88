"""The node line from the node's own evidence: a run measured beside a competing load.

The verdict's node line (:class:`placement.judgement.verdict.NodeShift`) needs
most values to move together; a competing load moves them very unequally (a
kernel reporting the median of short samples hardly feels it), so a node with
two busy loops per core moved the median value of a run by only 4-13% here.
Each timed job also reads the node's CPU pressure (``cpu_wait``,
:mod:`placement.testlib.node_load`): the share of its time with a task waiting
for a CPU. Over a run, the median case's share says whether other work held the
node's CPUs while it measured; from :data:`LIMIT` on, the acceptance run fails on one
node line, whatever its baseline, and its confirmation session runs the whole run
again (:mod:`placement.acceptance.confirmation`); the report leads with the same line.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from .guards import reported
from .rules import value

#: the perfvar every timed job reports (percent)
VAR = "cpu_wait"
#: the median case's share of time with a task waiting for a CPU from which the node is
#: called loaded (:mod:`.rules`). The suite's own work on a quiet node stays far below it:
#: on this project's 2-core machine, where the two-thread kernels and ReFrame share the two
#: CPUs, a quiet quick run gave a median of 4.1% over 39 cases (the highest 59%, a pthread
#: case under its own background load, which now counts nowhere); beside two busy loops per
#: core, 97% (the lowest 64%).
LIMIT = value("LOAD_LIMIT")
#: cases a run needs before its median means anything
MIN_CASES = 5


@dataclass(frozen=True)
class Load:
    """The median case's CPU pressure over a run's timed cases."""

    median: float
    cases: int

    @property
    def loaded(self) -> bool:
        return self.cases >= MIN_CASES and self.median >= LIMIT

    def text(self) -> str:
        return (f"tasks waited for a CPU {self.median:.0%} of the time in the median of "
                f"{self.cases} cases")

    def line(self) -> str:
        return (f"node under a competing load: {self.text()} (from {LIMIT:.0%} the node is "
                "loaded): other work held its CPUs while the run measured")


def of_cases(cases: list[dict[str, Any]]) -> Load | None:
    """The load over a run's final cases (ReFrame run-report dicts); None where no case
    measured it (no PSI on the node, or no timed case). Cases whose own work waits for
    CPUs by design (``waits_by_design``: a background load of their own, more threads than
    PUs) are left out: their waits say nothing of other work on the node."""
    shares = [v / 100.0 for v in (reported(tc, VAR) for tc in cases
                                  if not tc.get("waits_by_design")) if v is not None]
    if not shares:
        return None
    return Load(statistics.median(shares), len(shares))
