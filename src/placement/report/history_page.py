"""A system's history page: every judged value and the node's shift over its stored sessions.

One report shows one run against its baseline; a weekly schedule makes a run a week, and
only the weeks together tell a slow drift from a step. The page draws each value the
baseline keeps runs for (each session's median) and the node's common shift, dates on
the axis, with the baseline's sessions and their band marked, NODE lines and
confirmation sessions marked. Sessions come from ReFrame's results storage through the
functions :mod:`.previous_run` and :mod:`.verdicts` read it with (no SQL of our own);
each session is judged as its run's report judged it
(:func:`placement.judgement.baseline_samples.judge_run` against today's baseline).
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..judgement import (CONFIRMATION_EXTRA, RunReport, baseline_samples, baselines,
                         entry_name)
from ..util import PlacementError
from . import files, plots
from .document import Report, Section
from .folder import claimed
from .previous_run import sessions_of, stored_sessions
from .tables import Numbers, Table, slug

#: the figure's file in the history folder
FIGURE = "history.png"


def folder(system: str) -> Path:
    """The history page's folder under the reports' folder: ``history/<system>``, one level
    below the run reports' ``<system>-<date>`` folders, so no glob of those finds it (the
    name a slug: a system's name from a run report never leaves that folder)."""
    return Path("history") / slug(system)


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
    #: entry -> its unit as the session's run report gave it
    units: dict = field(default_factory=dict)


def _when(r: RunReport) -> _dt.datetime:
    ts = r.session.get("time_start_unix")
    if ts:
        return _dt.datetime.fromtimestamp(float(ts), _dt.timezone.utc)
    return _dt.datetime.strptime(r.session.get("time_start", ""), "%Y%m%dT%H%M%S%z")


def point(r: RunReport, system: str, old: dict, where: str, base_ids: set[str]) -> Point:
    """A session judged against the baseline: its node's shift and its values' medians."""
    cases_of: dict = {}
    try:
        new = baselines.from_run(r, system, cases_of)
    except PlacementError:
        return Point(r.uuid, _when(r), None, False, r.uuid in base_ids)
    node = baseline_samples.judge_run(old, new, where).node
    medians = {e: statistics.median(s.runs)
               for e, s in baseline_samples.entries(new, "run").items() if s.runs}
    shift = math.copysign(node.percent * 100, node.shift) if node is not None else None
    units = {e: c.perf[e[2]].unit or "" for e, c in cases_of.items() if e[2] in c.perf}
    return Point(r.uuid, _when(r), shift, node is not None and node.flagged,
                 r.uuid in base_ids, medians, units)


def points(system: str, old: dict, where: str, sessions: Sequence[RunReport]) -> list[Point]:
    """Every session of ``sessions`` as a :class:`Point`, oldest first."""
    stored = baseline_samples.entries(old, where)
    base_ids = {i for s in stored.values() for i, _ in s.sessions if i}
    return sorted((point(r, system, old, where, base_ids) for r in sessions),
                  key=lambda p: p.when)


def confirmation_sessions(report: RunReport, root: Path) -> list[RunReport]:
    """The confirmation sessions of this run's system (the whole runs' query leaves them
    out: :func:`.previous_run.sessions_query`), up to now: this run's own starts after it
    ends."""
    key, value = CONFIRMATION_EXTRA
    return sessions_of(f"19700101T0000+0000:now?locals().get({key!r}) == {value!r}",
                       set(report.systems), root)


def read(report: RunReport, root: Path) -> tuple[list[RunReport], list[RunReport], str]:
    """The whole runs and the confirmation sessions of this host from ReFrame's storage,
    and "" or why they could not be read."""
    try:
        return stored_sessions(report, root), confirmation_sessions(report, root), ""
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError,
            PlacementError) as exc:
        return [], [], f"ReFrame's stored sessions could not be read ({exc})"


def build(system: str, old: dict, where: str, sessions: Sequence[RunReport],
          confirmations: Sequence[RunReport], out: Path, report_link: str = "") -> Report:
    """The page of ``system``: the figure, a row per session, every median in the CSV."""
    pts = points(system, old, where, sessions)
    conf = sorted(_when(r) for r in confirmations)
    stored = baseline_samples.entries(old, where)
    rep = Report(f"History: {system}", _subtitle(pts, stored),
                 provenance=[("baseline", where), ("sessions", "ReFrame's results storage "
                              "(reframe --describe-stored-sessions)")])
    sec = Section("history", "Every stored session",
                  "Top: the node's common shift per session (the median change of all "
                  "values against the baseline, slower positive), NODE lines circled, "
                  "confirmation sessions dotted, the baseline's sessions shaded. Below: "
                  "each value the baseline keeps runs for, one point per session (its "
                  "median), squares for the baseline's sessions, the grey band from their "
                  "lowest to their highest median.")
    if report_link:
        sec.text += f" Back to [the run's report]({report_link})."
    if pts and plots.available():
        sec.images.append((_figure(system, pts, conf, stored, out),
                           f"{system}: the node's shift and each judged value per session"))
    rep.sections += [sec, Section("session-list", "Sessions", "",
                                  [_table(pts, conf, rep.numbers)])]
    return rep


def _subtitle(pts: list[Point], stored: dict) -> str:
    if not pts:
        return "No stored session of this system in ReFrame's results storage yet."
    n_base = len({i for s in stored.values() for i, _ in s.sessions if i})
    return (f"{len(pts)} stored session(s) from {pts[0].when:%Y-%m-%d} to "
            f"{pts[-1].when:%Y-%m-%d}; {len(stored)} judged value(s); the baseline has "
            f"{n_base} session(s), {sum(p.baseline for p in pts)} of them stored here.")


def _figure(system: str, pts: list[Point], conf: list, stored: dict, out: Path) -> str:
    base = [p.when for p in pts if p.baseline]
    node = {"dates": [p.when for p in pts], "shift": [p.shift for p in pts],
            "flagged": [p.flagged for p in pts], "confirmations": conf,
            "baseline": (min(base), max(base)) if base else None}
    panels = []
    for e in sorted(stored, key=lambda e: (e[0], tuple(map(str, e[1])), e[2])):
        mine = [p for p in pts if e in p.medians]
        if not mine:
            continue
        meds = [statistics.median(r) for r in stored[e].session_runs if r]
        unit = next((p.units[e] for p in reversed(mine) if p.units.get(e)), "")
        panels.append({"title": entry_name(e), "unit": unit, "dates": [p.when for p in mine],
                       "values": [p.medians[e] for p in mine],
                       "baseline": [p.baseline for p in mine],
                       "band": (min(meds), max(meds)) if meds else None})
    return plots.history(out, FIGURE, f"{system}: the node's shift per session", node, panels)


def _table(pts: list[Point], conf: list, numbers: Numbers) -> Table:
    t = Table("sessions", "Sessions, oldest first",
              ["date", "session", "node's shift", "NODE line", "baseline's session",
               "values"],
              note=f"{len(conf)} confirmation session(s) in the storage" +
                   (": " + ", ".join(f"{d:%Y-%m-%d %H:%M}" for d in conf) if conf else "."))
    for p in pts:
        t.add([f"{p.when:%Y-%m-%d %H:%M}", p.uuid[:8],
               "" if p.shift is None else f"{p.shift:+.1f}%", "NODE" if p.flagged else "",
               "yes" if p.baseline else "", str(len(p.medians))], "bad" if p.flagged else "")
        if p.shift is not None:
            numbers.add("history", "sessions", p.uuid, "node", "node shift", p.shift, "%")
        for e, v in p.medians.items():
            numbers.add("history", "values", p.uuid, entry_name(e), "session median", v)
    return t


def write(system: str, sessions: Sequence[RunReport], confirmations: Sequence[RunReport],
          out: Path, report_link: str = "") -> Path | None:
    """The history page of ``system`` in ``out`` (its files replaced), or None when the
    system has no baseline with stored sessions to judge against (or one that is refused)."""
    from ..util import baseline_file
    path = baseline_file(system)
    try:
        old = baselines.load(path)
    except PlacementError:
        return None     # a refused baseline judges nothing: the run's summary says why
    if not old or not baseline_samples.entries(old, str(path)):
        return None
    # the reports' folder is the caller's; no link below it (history/, the page's own) is followed
    with claimed(out, out.parent.parent):
        files.write(build(system, old, str(path), sessions, confirmations, out, report_link), out)
    return out
