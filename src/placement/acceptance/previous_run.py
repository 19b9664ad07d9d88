"""ReFrame's comparison with the previous run (``--performance-compare``): its rows read, and
the values worse than that run by more than a percentage, as information only.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ..judgement import reading
from .record import Finding


def compare_rows(path: Path | None) -> list[dict[str, str]]:
    """Rows of ReFrame's ``--performance-compare`` CSV (empty when absent or unreadable)."""
    if path is None:
        return []
    try:        # ReFrame's output, whatever bytes a test name put in it
        rows = list(csv.reader(path.read_text(errors="replace").splitlines()))
    except OSError:
        return []
    start = next((i for i, row in enumerate(rows) if row[:1] == ["name"]), None)
    if start is None:
        return []
    head = rows[start]
    return [dict(zip(head, row)) for row in rows[start + 1:] if len(row) == len(head)]


def previous_run_info(rows: list[dict[str, str]], max_slowdown: float) -> list[str]:
    """The INFO line of :func:`previous_run_finding` (none when no value got worse)."""
    return [f.line for f in previous_run_finding(rows, max_slowdown)]


def previous_run_finding(rows: list[dict[str, str]], max_slowdown: float) -> list[Finding]:
    """Values worse than the previous run by more than ``max_slowdown`` percent: information.

    Two sessions are one draw each of a node's state, so a percentage between
    them is no verdict (that is the baseline's sessions' job); extremes
    (``max_time``, ``min_time``: one outlier moves them) are left out. Which way is
    worse is the variable's own direction, as the verdict reads it
    (:func:`~placement.judgement.reading.direction.higher_is_better`); a value without
    one (a percentage such as ``cpu_wait``) is not called worse either way.
    """
    worse = []
    for r in rows:
        higher = reading.direction.higher_is_better(r.get("pvar", ""), r.get("punit"))
        if higher is None:
            continue
        pdiff = next((k for k in r if k.startswith("pdiff")), None)
        try:
            diff = float(r[pdiff]) if pdiff else None
        except ValueError:
            continue
        if diff is None:
            continue
        if (-diff if higher else diff) > max_slowdown:
            worse.append(f"{r.get('name', '?')} {r.get('pvar', '?')} {diff:+.1f}%")
    if not worse:
        return []
    return [Finding("PREVIOUS",
                    f"INFO {len(worse)} value(s) worse than the previous run by more than "
                    f"{max_slowdown:g}% (information only; judged against the baseline's "
                    "sessions): " + "; ".join(worse[:5]) + (" ..." if len(worse) > 5 else ""),
                    data={"worse": len(worse), "max_slowdown": max_slowdown,
                          "values": worse})]
