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
from functools import cached_property
from pathlib import Path

from typing import TYPE_CHECKING

from ..judgement import RunReport, baselines, verdict
from ..util import PlacementError, atomic, cycles, regular_file

if TYPE_CHECKING:
    from ..acceptance import peer_lines


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
    #: the NODE lines the summary prints for the session (its shift and its load:
    #: :func:`node_lines`); on a node's page, the node's HISTORY shift and its own load
    lines: tuple[str, ...] = ()
    #: the host ReFrame ran on (``session_info.hostname``): a system's sessions may come
    #: from several login nodes of one cluster, or from two machines of one name
    host: str = ""


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
    #: the uuid of the run whose report wrote the page (marked among the sessions)
    reported: str = ""
    #: stored sessions that could not be read as run reports, and why the first could not
    unreadable: int = 0
    unreadable_why: str = ""


def point(r: RunReport, system: str, against: baselines.samples.Against, base_ids: set[str],
          units: dict) -> Point:
    """A session judged against the baseline: its node's shift, the NODE lines its summary
    prints and its values' medians (``units``: each value's unit, updated with this
    session's)."""
    cases_of: dict = {}
    host = str(r.session.get("hostname") or "")
    mine = [c for c in r.cases if c.system == system]
    try:
        new = baselines.store.from_run(r, system, cases_of)
    except PlacementError:      # no value to judge: the load still speaks
        lines = node_lines(system, None, mine)
        return Point(r.uuid, when(r), None, bool(lines), r.uuid in base_ids, {}, lines, host)
    fresh = baselines.samples.run_entries(new)
    node = against.node(new, fresh)
    medians = {e: statistics.median(s.runs) for e, s in fresh.items() if s.runs}
    at = when(r)
    _units(cases_of, at, units)
    lines = node_lines(system, node, mine)
    return Point(r.uuid, at, _signed(node), bool(lines), r.uuid in base_ids, medians, lines,
                 host)


def _signed(node: verdict.over_sessions.NodeShift | None) -> float | None:
    """The node's shift in %, slower positive (None: too few values to judge)."""
    return math.copysign(node.percent * 100, node.shift) if node is not None else None


def _units(cases_of: dict, at: _dt.datetime, units: dict) -> None:
    """Each entry's unit as its case names it, where this session is the newest to."""
    for e, c in cases_of.items():
        unit = c.perf[e[2]].unit if e[2] in c.perf else None
        if unit and (e not in units or units[e][0] <= at):
            units[e] = (at, unit)


def node_lines(system: str, shift: verdict.over_sessions.NodeShift | None,
               cases: list) -> tuple[str, ...]:
    """The NODE lines the acceptance summary prints for a session of ``cases`` whose node
    shift is ``shift``: its own function (:func:`placement.acceptance.summary_lines.node_lines`)
    over the session's shift and load (:func:`placement.acceptance.confirmation.load_fails`),
    so the history's NODE column and the summary never disagree. A stored session is read
    alone, without its confirmation session (listed on the page apart)."""
    from ..acceptance import confirmation, findings, summary_lines
    judgement = baselines.samples.Judgement()
    judgement.run = verdict.over_sessions.RunVerdict([], shift, None)
    load = confirmation.load_fails({i: c.raw for i, c in enumerate(cases)})
    f = findings.Findings(system, [], {}, {}, {}, judgement, load, [], [])
    return tuple(x.line for x in summary_lines.node_lines(f).findings if x.kind == "NODE")


@dataclass
class _Parts:
    """A session's entries (``new``, each one's case in ``cases_of``), the same by node
    (``entries``, ``new_of``) and its cases by node (``cases``)."""

    new: dict
    cases_of: dict
    entries: dict
    new_of: dict
    cases: dict


class Split:
    """One session's entries split by node, made once for all its nodes' pages (each node
    judging the whole session again would cost nodes x cases a session), on first use: a
    session every page kept a point of is never split."""

    def __init__(self, r: RunReport, system: str) -> None:
        self.r, self.system = r, system

    @cached_property
    def parts(self) -> _Parts:
        from ..acceptance import peer_lines
        cases_of: dict = {}
        try:
            new = baselines.store.from_run(self.r, self.system, cases_of)
        except PlacementError:
            new = {}
        cases: dict[str, list] = {}
        for c in self.r.cases:
            if c.system == self.system:
                cases.setdefault(c.node, []).append(c)
        return _Parts(new, cases_of, peer_lines.entries_by_node(new) if new else {},
                      peer_lines.by_node(new) if new else {}, cases)


def node_point(split: Split, node: str, base: peer_lines.OwnBaseline, base_ids: set[str],
               units: dict) -> Point:
    """A session judged for ``node``'s page as the summary's HISTORY line judges the node:
    the whole session's entries (a distributed run's values are keyed by their node, as
    ``baseline record`` keeps them), the node's own against its own entries of the
    baseline, else its partition's pooled entries in their stead. Its lines: the HISTORY
    line when it names the node's shift, and the NODE line of the node's own load."""
    r, system, s = split.r, split.system, split.parts
    host = str(r.session.get("hostname") or "")
    mine = s.cases.get(node, [])
    at = when(r)
    only = s.entries.get(node)
    if not only:
        lines = node_lines(system, None, mine) if mine else ()
        return Point(r.uuid, at, None, bool(lines), r.uuid in base_ids, {}, lines, host)
    part = next((c.partition for c in mine), "")
    judged, said = base.judge(system, node, part, only, s.new, s.new_of)
    lines = tuple(f.line for f in said if f.data.get("node_percent") is not None)
    lines += node_lines(system, None, mine)
    _units({e: c for e, c in s.cases_of.items() if e in only}, at, units)
    medians = {e: statistics.median(v.runs) for e, v in judged.fresh.items() if v.runs}
    return Point(r.uuid, at, _signed(judged.node), bool(lines), r.uuid in base_ids, medians,
                 lines, host)


class Judge:
    """Each session of one page as its point: the kept one (the same uuid and start), else
    judged against the baseline (read once for all of them); ``node``: a node's page, each
    whole session judged for that node (:func:`node_point`)."""

    def __init__(self, system: str, old: dict, where: str,
                 kept: tuple[dict[str, Point], dict] = ({}, {}), node: str | None = None
                 ) -> None:
        self.system, self.kept, self.node = system, kept, node
        self.against = baselines.samples.Against(old, where)
        self.base_ids = {i for s in self.against.stored.values() for i, _ in s.sessions if i}
        if node is not None:
            from ..acceptance import peer_lines
            self.own = peer_lines.OwnBaseline.of(old, where)
        else:
            self.own = None

    def __call__(self, r: RunReport, split: Split | None = None) -> tuple[Point, dict]:
        """``r``'s point and the units it names (none for a kept point); a node's page
        judges ``split``, ``r`` split by node once for all the nodes' pages."""
        p = self.kept[0].get(r.uuid)
        if p is not None and p.when == when(r):
            return p, {}
        units: dict = {}
        if self.node is not None and self.own is not None:
            split = split if split is not None else Split(r, self.system)
            return node_point(split, self.node, self.own, self.base_ids, units), units
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
    """What a kept point depends on: the system, the baseline's version and the code that
    judges a point (the judgement's, with its subpackages, and the summary's lines a point
    shows): a new rule judges every session again."""
    import hashlib
    from .. import acceptance, judgement
    h = hashlib.sha256(f"{system}\0{baseline_version}\0".encode())
    code = [*sorted(Path(judgement.__file__).parent.rglob("*.py")),
            *sorted(Path(acceptance.__file__).parent.glob("*.py")), Path(__file__)]
    for p in code:
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
                           bool(p[4]), {_entry(m): float(m[3]) for m in p[5]},
                           tuple(map(str, p[6])), str(p[7]))
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
            [[e[0], list(e[1]), e[2], v] for e, v in p.medians.items()], list(p.lines), p.host]
           for p in hist.points]
    units = [[e[0], list(e[1]), e[2], at.isoformat(), u] for e, (at, u) in hist.dated.items()]
    atomic.write_text(path, json.dumps({"key": key, "points": pts, "units": units},
                                       separators=(",", ":")))
