"""The time box's plumbing: a cut run's earlier parts and the checks that need not run again
(``placement acceptance resume``), its hung cases, and ReFrame's filter selecting the sessions
of a run's parts (``placement acceptance sessions``).

A case a signal interrupted (the part's ``.stopped`` file, :func:`.parts.stopped_by`) runs
again, as does one whose job was still waiting on the scheduler (:func:`.waiting.by_queue`);
one that hung in the time box (:func:`.case_kinds.is_hung`) does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..judgement import reading
from ..util import PlacementError, regular_file
from .case_kinds import is_hung
from .parts import by_signal, final_cases, readable
from .waiting import by_queue


def resume_plan(unfinished: Path) -> tuple[list[Path], list[str], list[str]]:
    """Readable earlier parts, ReFrame's ``-x /HASH`` options for finished checks, dropped lines.

    A check with a finished case is excluded by its hash; one with an aborted case
    runs again, unless it hung in the time box (:func:`is_hung`): that one is excluded
    too, and the summary keeps its ``HUNG`` line. One a signal stopped runs again.
    """
    if not unfinished.is_file() or not regular_file.read_text(unfinished, "run list",
                                                              2**20).strip():
        raise PlacementError(f"nothing to resume: {unfinished} is missing or empty")
    good, dropped = readable(reading.run_report.run_list(unfinished))
    done, aborted = set(), set()
    signalled, queued = by_signal(good), by_queue(good)
    for key, tc in final_cases(good).items():
        if not tc.get("fixture") and tc.get("hashcode"):
            runs_again = tc.get("result") == "abort" and not is_hung(tc, key in signalled,
                                                                    key in queued)
            (aborted if runs_again else done).add(tc["hashcode"])
    skip = [opt for h in sorted(done - aborted) for opt in ("-x", f"/{h}")]
    return [p.path for p in good], skip, dropped


def hung_cases(parts: list[Path]) -> list[dict[str, Any]]:
    """The cases of a run's parts that hung (:func:`is_hung`), as their last attempt left them."""
    good, _ = readable(parts)
    signalled, queued = by_signal(good), by_queue(good)
    return [tc for key, tc in final_cases(good).items()
            if is_hung(tc, key in signalled, key in queued)]


def session_filter(parts: list[Path]) -> str:
    """ReFrame's filter selecting the sessions of one run: ``?uuid in ('...',)``.

    None of the parts readable is an error: an empty filter would compare with nothing
    and read as a clean comparison.
    """
    good, dropped = readable(parts)
    if not good:
        raise PlacementError("no readable run report among "
                             + (", ".join(map(str, parts)) or "no parts")
                             + (f" ({dropped[0]})" if dropped else ""))
    return "?uuid in (%s,)" % ",".join(repr(p.report.uuid) for p in good)
