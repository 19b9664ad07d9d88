"""The system a run is judged as: its baseline, its line's name and its record follow from it.

One definition for the acceptance summary and the report, which judges a run without a
record as the summary would: a report that judged an empty run under no system at all
answered ``NOTHING RAN`` (exit 4) where the summary answered ``FAIL`` (exit 1).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..judgement import reading
from ..util import PlacementError, system_name

#: the system acceptance.sh passes when ReFrame's configuration names none, and the one a
#: run holding no case is judged as
UNKNOWN = "unknown"


def judged_system(system: str | None, parts: Iterable[reading.run_report.RunReport]) -> str:
    """``system``, which must name one whose cases the readable ``parts`` hold (when they
    hold any), or the one system they hold (:data:`UNKNOWN` when they hold none). A run
    judged under another system's name would read its baseline and print its name over
    the run."""
    held = {s for r in parts for s in r.systems}
    if system in (None, UNKNOWN):    # acceptance.sh's word when ReFrame named no system
        if len(held) == 1:
            return held.pop()
        if system is None and held:
            raise PlacementError(f"the run holds cases of {', '.join(sorted(held))}: give "
                                 "--system; nothing was judged")
        return UNKNOWN
    system_name(system, "--system")
    if held and system not in held:
        raise PlacementError(f"--system {system}: no case of that system in the run (it "
                             f"holds: {', '.join(sorted(held))}); nothing was judged")
    return system
