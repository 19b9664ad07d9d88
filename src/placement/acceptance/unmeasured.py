"""Values a case reported without measuring them: its value NaN, infinite or none.

Why a line and a gap: the verdict judges the values it can read, so such a value
dropped out of its count (``of 37`` where the run has 38) and the run read PASS with
nothing said, though part of what it should have measured was never measured. A
case whose values are missing is as much missing evidence as a case that did not run,
so the run is INCOMPLETE, never passed. The guards are spared: ``cpu_wait`` is NaN by
design on a node without CPU pressure accounting (:mod:`placement.testlib.node_load`).
"""

from __future__ import annotations

import math

from ..judgement import reading, verdict
from ..util import one_line

#: the values a line names before it says how many more
SHOWN = 5


def values(report: reading.run_report.RunReport, system: str) -> list[str]:
    """``case @system:partition+environ var`` for each primary value of a measured case
    (passed, or failed only against a reference) of ``system`` (every case where none is
    of it, as the summary counts them) that holds no finite number; guards left out."""
    out = []
    mine = [c for c in report.cases if c.system == system] or report.cases
    for c in mine:
        if not c.measured:
            continue
        for var in c.primary_vars():
            v = c.perf[var].value
            if var not in verdict.guards.GUARD_VARS and (v is None or math.isnan(v)):
                out.append(f"{c.raw.get('display_name', c.test)} @{c.where} {var}")
    return sorted(out)


def line(names: list[str]) -> str:
    """The NOTE's text: how many, and the first :data:`SHOWN` of them."""
    return (f"{len(names)} value(s) reported but not measured (NaN, infinite or none), "
            f"left out of the verdict: {one_line.first_of(names, SHOWN)}")
