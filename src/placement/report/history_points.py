"""A system's stored sessions, each reduced to what its history page draws.

A history can hold thousands of sessions, and a run report held whole is a quarter of a
megabyte: each session is read once, judged against the baseline and kept only as a
:class:`Point` (its date, the node's shift and line, each value's median). The baseline
is read once for all of them (:class:`placement.judgement.baselines.samples.Against`), and
each session is judged for its node line alone, as its run's report judged it
(:func:`placement.judgement.verdict.over_sessions.node_line` takes the same steps as the report's
judgement up to the node's line, without testing each value). The points are kept in the
page's folder (:data:`CACHE`), so the page after the next run judges that run alone; they
are judged again when the baseline or the judgement's code changes (:func:`cache_key`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..judgement import RunReport, baselines
from ..util import PlacementError, atomic, cycles, regular_file


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
    #: each value's unit with the start of the session that named it
    dated: dict = field(default_factory=dict)


def point(r: RunReport, system: str, against: baselines.samples.Against, base_ids: set[str],
          units: dict) -> Point:
    """A session judged against the baseline: its node's shift and its values' medians
    (``units``: each value's unit, updated with this session's)."""
    cases_of: dict = {}
    try:
        new = baselines.store.from_run(r, system, cases_of)
    except PlacementError:
        return Point(r.uuid, when(r), None, False, r.uuid in base_ids)
    fresh = baselines.samples.run_entries(new)
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


class Judge:
    """Each session of one page as its point: the kept one (the same uuid and start), else
    judged against the baseline (read once for all of them)."""

    def __init__(self, system: str, old: dict, where: str,
                 kept: tuple[dict[str, Point], dict] = ({}, {})) -> None:
        self.system, self.kept = system, kept
        self.against = baselines.samples.Against(old, where)
        self.base_ids = {i for s in self.against.stored.values() for i, _ in s.sessions if i}

    def __call__(self, r: RunReport) -> tuple[Point, dict]:
        """``r``'s point and the units it names (none for a kept point)."""
        p = self.kept[0].get(r.uuid)
        if p is not None and p.when == when(r):
            return p, {}
        units: dict = {}
        return point(r, self.system, self.against, self.base_ids, units), units


def assemble(judged: Iterable[tuple[Point, dict]], kept_units: dict) -> History:
    """The history of the points :class:`Judge` gave, in the sessions' order (a value's
    unit: the newest session's that names one, the later of two at one time)."""
    units, pts = dict(kept_units), []
    for p, named in judged:
        pts.append(p)
        for e, (at, unit) in named.items():
            if e not in units or units[e][0] <= at:
                units[e] = (at, unit)
    return History(sorted(pts, key=lambda p: p.when), {e: u for e, (_, u) in units.items()},
                   units)


@cycles.without_cyclic_gc     # thousands of sessions' objects, no cycles: a tenth of the page's time
def history(system: str, old: dict, where: str, sessions: Iterable[RunReport],
            kept: tuple[dict[str, Point], dict] = ({}, {})) -> History:
    """Every session of ``sessions`` (read one at a time, none kept) as a point; ``kept``:
    the points and units a page kept (:func:`read_cache`), used for the sessions they are
    of (the same uuid and start) instead of judging them again."""
    judge = Judge(system, old, where, kept)
    return assemble((judge(r) for r in sessions), kept[1])


# -- the points kept for the next page ------------------------------------------------------

#: the file in a history folder that keeps its sessions' points for the page after the next
#: run: a stored session judged against one baseline by one version of the judgement gives
#: the same point each time, and judging every session again is most of a page's cost
CACHE = ".history-points.json"
#: the most a kept file may hold (ten thousand sessions of 40 values are some 20 MB)
CACHE_BYTES = 256 * 2**20


def cache_key(system: str, baseline_version: str) -> str:
    """What a kept point depends on: the system, the baseline's version and the judgement's
    own code (a new rule judges every session again)."""
    import hashlib
    from .. import judgement
    h = hashlib.sha256(f"{system}\0{baseline_version}\0".encode())
    for p in [*sorted(Path(judgement.__file__).parent.glob("*.py")), Path(__file__)]:
        h.update(p.read_bytes())
    return h.hexdigest()


def read_cache(path: Path, key: str) -> tuple[dict[str, Point], dict]:
    """The points kept at ``path`` for ``key`` by uuid, and their values' units; nothing
    when there are none, they are another key's, or the file is not one this wrote (it is
    then rebuilt: a kept point only saves time)."""
    try:
        data = json.loads(regular_file.read_text(path, "history cache", CACHE_BYTES))
        if data.get("key") != key:
            return {}, {}
        pts = {p[0]: Point(str(p[0]), _dt.datetime.fromisoformat(p[1]), p[2], bool(p[3]),
                           bool(p[4]), {_entry(m): float(m[3]) for m in p[5]})
               for p in data["points"]}
        units = {_entry(u): (_dt.datetime.fromisoformat(u[3]), str(u[4]))
                 for u in data["units"]}
        return pts, units
    except (OSError, PlacementError, ValueError, TypeError, KeyError, IndexError,
            AttributeError):
        return {}, {}


def _entry(m: list) -> tuple:
    return (m[0], tuple(m[1]), m[2])


def write_cache(path: Path, key: str, hist: History) -> None:
    """Keep ``hist``'s points at ``path`` for the next page (an exclusive temporary file
    renamed over it)."""
    pts = [[p.uuid, p.when.isoformat(), p.shift, p.flagged, p.baseline,
            [[e[0], list(e[1]), e[2], v] for e, v in p.medians.items()]] for p in hist.points]
    units = [[e[0], list(e[1]), e[2], at.isoformat(), u] for e, (at, u) in hist.dated.items()]
    atomic.write_text(path, json.dumps({"key": key, "points": pts, "units": units},
                                       separators=(",", ":")))
