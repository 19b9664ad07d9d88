"""A system's stored sessions, each reduced to what its history page draws.

A history can hold thousands of sessions, and a run report held whole is a quarter of a
megabyte: each session is read once, judged against the baseline and kept only as a
:class:`Point` (its date, the node's shift and line, each value's median). The baseline
is read once for all of them (:class:`placement.judgement.baseline_samples.Against`), and
each session is judged for its node line alone, as its run's report judged it
(:func:`placement.judgement.verdict.node_line` takes the same steps as the report's
judgement up to the node's line, without testing each value).
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..judgement import RunReport, baseline_samples, baselines
from ..util import PlacementError


@dataclass(frozen=True)
class Point:
    """One stored session as the history draws it."""

    uuid: str
    when: _dt.datetime
    #: the node's common shift, %, slower positive (None: too few values to judge)
    shift: float | None
    #: the session's report had a NODE line (the node flagged slower or faster)
    flagged: bool
    #: one of the baseline's sessions
    baseline: bool
    #: entry -> the session's median
    medians: dict = field(default_factory=dict)


def when(r: RunReport) -> _dt.datetime:
    """A session's start, from its run report."""
    ts = r.session.get("time_start_unix")
    if ts:
        return _dt.datetime.fromtimestamp(float(ts), _dt.timezone.utc)
    return _dt.datetime.strptime(r.session.get("time_start", ""), "%Y%m%dT%H%M%S%z")


@dataclass
class History:
    """Every session of a system as a :class:`Point`, oldest first, and each value's unit
    as the newest session giving one named it."""

    points: list[Point]
    units: dict


def point(r: RunReport, system: str, against: baseline_samples.Against, base_ids: set[str],
          units: dict) -> Point:
    """A session judged against the baseline: its node's shift and its values' medians
    (``units``: each value's unit, updated with this session's)."""
    cases_of: dict = {}
    try:
        new = baselines.from_run(r, system, cases_of)
    except PlacementError:
        return Point(r.uuid, when(r), None, False, r.uuid in base_ids)
    fresh = baseline_samples.entries(new, "run")
    node = against.node(new, fresh)
    medians = {e: statistics.median(s.runs) for e, s in fresh.items() if s.runs}
    shift = math.copysign(node.percent * 100, node.shift) if node is not None else None
    at = when(r)
    for e, c in cases_of.items():
        unit = c.perf[e[2]].unit if e[2] in c.perf else None
        if unit and (e not in units or units[e][0] <= at):
            units[e] = (at, unit)
    return Point(r.uuid, at, shift, node is not None and node.flagged, r.uuid in base_ids,
                 medians)


def history(system: str, old: dict, where: str, sessions: Iterable[RunReport]) -> History:
    """Every session of ``sessions`` (read one at a time, none kept) as a point."""
    against = baseline_samples.Against(old, where)
    base_ids = {i for s in against.stored.values() for i, _ in s.sessions if i}
    units: dict = {}
    pts = [point(r, system, against, base_ids, units) for r in sessions]
    return History(sorted(pts, key=lambda p: p.when), {e: u for e, (_, u) in units.items()})
