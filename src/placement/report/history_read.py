"""One reading of a system's stored sessions for all that a report takes from them.

A report compares its run with the previous one, searches the stored sessions for step
changes and writes the system's history page (and each node's, for a distributed
system). Ten thousand stored sessions held whole as run reports are gigabytes, so each
is read once (:func:`.previous_run.stored_runs`, a period at a time), reduced at once to
what each of those needs (its start and uuid, its values' medians:
:func:`.verdicts.session_medians`, its points on the pages: :class:`.history_points.Judge`)
and dropped. The reductions are then put together in the sessions' recorded order, as
when the sessions were read whole: the same comparison, table and pages.
"""

from __future__ import annotations

import datetime as _dt
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..judgement import CONFIRMATION_EXTRA, RunReport, peers, reading
from ..util import PlacementError, cycles
from . import history_page, history_points
from .history_points import History, Point
from .previous_run import Unreadable, is_confirmation, reframe_cmd, sessions_of, stored_runs
from .verdicts import StepSeries, session_medians


@dataclass(frozen=True)
class Seen:
    """A stored whole run as the reading keeps it."""

    uuid: str
    order: _dt.datetime
    path: Path
    session: dict
    medians: dict
    #: its point on the system's page and the units it names (None: no page)
    point: tuple[Point, dict] | None
    #: the same on each page of a node its cases ran on
    nodes: dict[str, tuple[Point, dict]]


@dataclass
class Reading:
    """What a report takes from the stored sessions, and "" or why they could not be read."""

    #: each stored whole run's start and uuid, oldest first
    sessions: list[tuple[_dt.datetime, str]] = field(default_factory=list)
    confirmations: list[RunReport] = field(default_factory=list)
    steps: StepSeries = field(default_factory=StepSeries)
    #: the system page's points (None: no page)
    history: History | None = None
    #: each node's page's points, when the whole runs ran on more than one node
    nodes: dict[str, History] = field(default_factory=dict)
    error: str = ""


def read(report: RunReport, root: Path, pages: history_page.Pages | None) -> Reading:
    """The stored sessions of ``report``'s systems, read once (``pages``: the history pages
    to judge them for, None for none)."""
    try:
        return _read(report, root, pages)
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError,
            PlacementError) as exc:
        return Reading(error=f"ReFrame's stored sessions could not be read ({exc})")


@cycles.without_cyclic_gc     # millions of short-lived objects, no cycles
def _read(report: RunReport, root: Path, pages: history_page.Pages | None) -> Reading:
    systems = set(report.systems)
    end = reading.session_info.ended(report.session)
    judges = _Judges(pages, report.uuid)
    key, value = CONFIRMATION_EXTRA
    after = f"?locals().get({key!r}) == {value!r}"
    if end is None or reframe_cmd(root) is None:
        return judges.reading([], sessions_of(f"19700101T0000+0000:now{after}", systems, root,
                                              judges.unreadable), end)
    periods: list[tuple[list[Seen], list[RunReport]]] = []
    for period in stored_runs(until(end), systems, root, judges.unreadable):
        seen, confirming = [], []
        for r in period:
            if is_confirmation(r):
                confirming.append(r)
            else:
                seen.append(judges.seen(r))
        periods.append((seen, confirming))
    periods.reverse()       # oldest first, as one query over them all gives them
    ordered = sorted((s for seen, _ in periods for s in seen), key=lambda s: s.order)
    return judges.reading(ordered, [r for _, c in periods for r in c], end)


def until(end: _dt.datetime) -> _dt.datetime:
    """How far the stored sessions are read: to now (or the run's end, were it later).
    The history pages are shared by every report of the system, so they always show every
    stored session: a report of an older run read to its own end would shrink the page the
    newer reports link to. What belongs to the run alone (the previous run, the step
    search) is cut at its end by :meth:`_Judges.reading`."""
    return max(end, _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=1))


def node_histories(pages: history_page.Pages, sessions: Sequence[RunReport]
                   ) -> dict[str, History]:
    """Each node's history of ``sessions`` (oldest first), judged as a report's reading
    judges them (:class:`_Judges`); ``{}`` when they ran on one node."""
    judges = _Judges(pages)
    return judges.reading([judges.seen(r) for r in sessions], []).nodes


class _Judges:
    """The pages' judges: the system's, and each node's as its cases are first met."""

    def __init__(self, pages: history_page.Pages | None, reported: str = "") -> None:
        self.pages, self.reported = pages, reported
        self.system = pages.judge() if pages else None
        self.nodes: dict[str, history_points.Judge] = {}
        #: the stored sessions that could not be read (the pages say how many, and why)
        self.unreadable = Unreadable()

    def node(self, name: str) -> history_points.Judge:
        if name not in self.nodes:
            assert self.pages is not None
            self.nodes[name] = self.pages.judge(name)
        return self.nodes[name]

    def seen(self, r: RunReport) -> Seen:
        point, nodes = None, {}
        if self.system is not None:
            point = self.system(r)
            # each node's page judges the whole session for its node (the baseline keys a
            # distributed run's values by node: history_points.node_point)
            split = history_points.Split(r, self.system.system)
            ran_on = dict.fromkeys(c.node for c in r.cases if c.node is not None)
            nodes = {n: self.node(n)(r, split) for n in ran_on}
        return Seen(r.uuid, reading.session_info.order(r.session), r.path, r.session,
                    session_medians(r), point, nodes)

    def reading(self, seen: list[Seen], confirmations: list[RunReport],
                end: _dt.datetime | None = None) -> Reading:
        """The reading of ``seen`` (every stored whole run, oldest first): the previous run
        and the step search of the sessions up to ``end`` (the reported run's), the pages
        of every one."""
        own = [s for s in seen if end is None or s.order < end]
        out = Reading([(s.order, s.uuid) for s in own], confirmations)
        for s in own:
            out.steps.add(s.uuid, s.medians)
        if self.system is None:
            return out
        out.history = self._told(history_points.assemble(
            (s.point for s in seen if s.point), self.system.kept[1]))
        names = sorted(self.nodes, key=peers.partition.node_order)
        if len(names) > 1:     # one node's page would be the system's again
            out.nodes = {n: self._told(history_points.assemble(
                (s.nodes.get(n) or self.nodes[n](RunReport(s.path, s.session, []))
                 for s in seen), self.nodes[n].kept[1])) for n in names}
        return out

    def _told(self, hist: History) -> History:
        """``hist`` with the reported run and the unreadable sessions, for its page to say."""
        hist.reported = self.reported
        hist.unreadable, hist.unreadable_why = self.unreadable.count, self.unreadable.first
        return hist
