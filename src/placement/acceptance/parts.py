"""A run's parts read once: each readable ReFrame run report of an acceptance run (one or
more, when ``--resume`` went on after a time box), its cases as their last attempt left them,
and which of them a signal stopped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..judgement import reading
from ..util import PlacementError, regular_file


@dataclass(frozen=True)
class Part:
    """One readable run report of the run, read once: ReFrame's JSON and its cases."""

    path: Path
    #: the report as ReFrame wrote it, fixtures included
    data: dict[str, Any]
    report: reading.run_report.RunReport
    #: the signal that stopped this part's session (:func:`stopped_by`), ``""`` if none did
    stopped: str = ""


#: beside a part's run report, the file naming the signal that stopped its session
STOP_MARK = ".stopped"


def stopped_by(report: Path) -> str:
    """The signal (``SIGINT``...) that stopped the session of ``report``, ``""`` when none did.

    The acceptance script writes the file when a Ctrl-C, SIGTERM or SIGHUP came before the
    time box closed. ReFrame records both stops alike (an abort with ``KeyboardInterrupt``:
    the script hands the signal on through the time box's ``timeout``), so without it a
    case the user stopped would read as hung. A list written before such files existed
    has none: its stops read as the time box's, as they did then."""
    mark = report.with_suffix(STOP_MARK)
    if not os.path.lexists(mark):
        return ""
    try:      # what it says is for people; that it is there is the fact
        text = regular_file.read_text(mark, "stop mark", 256)
    except PlacementError:
        return "a signal"
    return text.split("\n", 1)[0].strip()[:16] or "a signal"


def readable(parts: list[Path]) -> tuple[list[Part], list[str]]:
    """The parts that are ReFrame run reports, in the order given, and one line for each
    that is not."""
    good, dropped = [], []
    for p in parts:
        try:
            data = reading.run_report.read(p)
            good.append(Part(p, data, reading.run_report.from_data(data, p),  # the one shape check
                             stopped_by(p)))
        except PlacementError as err:
            dropped.append(f"dropped part {p}: {err}")
    return good, dropped


def out_of_order(good: list[Part]) -> str:
    """Why the parts' order is in doubt, ``""`` when it is not: a part given after one whose
    session started later. The last attempt of a case decides, so an older session given
    last let its passes stand over a later session's failures; the order given is kept
    (acceptance.sh gives them as they ran, whatever the clock says), and the run is not
    called complete on it."""
    starts = [(p.path, reading.session_info.started(p.data.get("session_info") or {}))
              for p in good]
    for (a, when_a), (b, when_b) in zip(starts, starts[1:]):
        if when_a is not None and when_b is not None and when_b < when_a:
            return (f"part {b.name} was given after {a.name} but its session started "
                    "earlier: give the parts in the order they ran")
    return ""


def final_cases(parts: list[Part]) -> dict[tuple, dict[str, Any]]:
    """Every test case of a run, fixtures included, as its last attempt left it.

    Fixtures count: a failed build skips every case that needs it, and a run
    whose cases were all skipped must not read as passed.
    """
    final: dict[tuple, dict[str, Any]] = {}
    for part in parts:                   # earlier parts, then retries: the last one decides
        for run in part.data["runs"]:
            for tc in run.get("testcases", []):
                final[case_key(tc)] = tc
    return final


def case_key(tc: dict[str, Any]) -> tuple:
    """What names one test case across a run's parts: a case run again has the same key.

    ReFrame's ``unique_name``; a run report without one (written by another tool, or cut)
    is keyed by the case's name with its parameters (its display name) and its partition,
    so a later passing case never stands in for another's failure."""
    name = tc.get("unique_name") or ("", tc.get("name"), tc.get("display_name"),
                                     tc.get("partition"))
    return (name, tc.get("system"), tc.get("environ"))


def by_signal(parts: list[Part]) -> set[tuple]:
    """The keys of :func:`final_cases` whose last attempt was in a part a signal stopped
    (:func:`stopped_by`): a user's stop, which is no hang."""
    keys: set[tuple] = set()
    for part in parts:                   # as final_cases: the last attempt decides
        for run in part.data["runs"]:
            for tc in run.get("testcases", []):
                (keys.add if part.stopped else keys.discard)(case_key(tc))
    return keys
