"""A system's history page: every judged value and the node's shift over its stored sessions.

One report shows one run against its baseline; a weekly schedule makes a run a week, and
only the weeks together tell a slow drift from a step. The page draws each value the
baseline keeps runs for (each session's median) and the node's common shift, dates on
the axis, with the baseline's sessions and their band marked, NODE lines and
confirmation sessions marked, and each value's step, if it has one. Sessions come from
ReFrame's results storage through the functions :mod:`.previous_run` and :mod:`.verdicts`
read it with (no SQL of our own); each session's node line is the one its run's report
drew against today's baseline (:mod:`.history_points`). A history of thousands of sessions
stays bounded: the figure draws groups of sessions beyond a bound (:mod:`.history_bins`),
the page lists the newest :data:`RECENT_ROWS` sessions, and the CSV holds every one; the
page keeps its sessions' points, so the next run's page judges that run alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..judgement import RunReport, baselines, entry_name, verdict
from ..util import PlacementError, one_line
from . import files, history_bins, history_points, plots
from .document import Report, Section
from .folder import claimed
from .history_points import Point
from .numbers_csv import CSV_NAME
from .previous_run import Unreadable
from .tables import Numbers, Table, slug

#: the figure's file in the history folder
FIGURE = "history.png"
#: sessions the page lists, the newest (every session's numbers are in its CSV): a table of
#: ten thousand rows is read by no one and is most of a page's size
RECENT_ROWS = 200


def folder(system: str) -> Path:
    """The history page's folder under the reports' folder: ``history/<system>``, one level
    below the run reports' ``<system>-<date>`` folders, so no glob of those finds it (the
    name a slug: a system's name from a run report never leaves that folder)."""
    return Path("history") / slug(system)


@dataclass(frozen=True)
class Pages:
    """A system's history pages that stored sessions are judged for: the system's
    baseline (read once for all of them) and the reports' folder the pages go under."""

    system: str
    old: dict
    where: str
    version: str
    reports: Path

    @classmethod
    def of(cls, system: str, reports: Path) -> Pages | None:
        """``system``'s pages under ``reports``; None when it has no baseline with stored
        sessions to judge against (or one that is refused: the run's summary says why)."""
        from ..util import baseline_file
        path = baseline_file(system)
        try:
            old = baselines.store.load(path)
        except PlacementError:
            return None
        if not old or not baselines.samples.entries(old, str(path)):
            return None
        return cls(system, old, str(path), baselines.store.version(path), reports)

    def folder(self, node: str | None = None) -> Path:
        """The system's page's folder, or ``node``'s page's beside it."""
        if node is None:
            return self.reports / folder(self.system)
        return self.reports / "history" / f"{slug(self.system)}-{slug(node)}"

    def key(self, node: str | None = None) -> str:
        """What the page's kept points depend on (:func:`.history_points.cache_key`)."""
        name = self.system if node is None else f"{self.system} node {node}"
        return history_points.cache_key(name, self.version)

    def judge(self, node: str | None = None) -> history_points.Judge:
        """The page's judge, with the points it kept (read before its folder is emptied)."""
        return history_points.Judge(self.system, self.old, self.where,
                                    kept(self.folder(node), self.key(node)), node)


def build(system: str, old: dict, where: str, sessions: Iterable[RunReport],
          confirmations: Iterable[RunReport], out: Path, report_link: str = "",
          cache_key: str = "") -> Report:
    """The page of ``system``: the figure, the steps, a row per recent session, every
    session's numbers in the CSV. ``cache_key`` (:func:`.history_points.cache_key`): the
    sessions' points kept in ``out`` for that key are used and all of them kept there again
    (read before the folder is emptied: :func:`kept`)."""
    hist = history_points.history(system, old, where, sessions, kept(out, cache_key))
    rep = _page(system, old, where, hist, confirmations, out, report_link)
    if cache_key:
        history_points.write_cache(out / history_points.CACHE, cache_key, hist)
    return rep


def _page(system: str, old: dict, where: str, hist: history_points.History,
          confirmations: Iterable[RunReport], out: Path, report_link: str,
          panels: int | None = None) -> Report:
    pts = hist.points
    conf = sorted(history_points.when(r) for r in confirmations)
    stored = baselines.samples.entries(old, where)
    rep = Report(f"History: {system}", _subtitle(hist, stored),
                 provenance=[("baseline", where), ("sessions", "ReFrame's results storage "
                              "(reframe --describe-stored-sessions)")])
    groups = history_bins.groups(len(pts))
    drawn = _drawn(pts, stored)
    found = history_bins.steps(pts, groups, drawn, stored)
    values = len(drawn)
    if panels is not None and values > panels:      # the values with a step first
        drawn = sorted(drawn, key=lambda e: e not in found)[:panels]
    sec = _figure_section(system, hist, groups, conf, stored, drawn, found, out)
    if len(drawn) < values:
        sec.text += (f" The figure draws {len(drawn)} of the {values} values (those with a "
                     f"step first); every value's medians are in {CSV_NAME}.")
    if report_link:
        sec.text += f" Back to [the run's report]({report_link})."
    note = history_bins.steps_note(groups, len(pts))
    rep.sections += [sec, Section("steps", "Step changes", "", [_steps_table(found, note)]),
                     Section("session-list", "Sessions", "",
                             [_table(pts, conf, rep.numbers, hist.reported)])]
    return rep


def page(pages: Pages, hist: history_points.History, confirmations: Iterable[RunReport],
         out: Path, report_link: str = "", panels: int | None = None) -> Report:
    """The page of ``hist``, its sessions judged for ``pages`` (its figure drawn in ``out``,
    with at most ``panels`` value panels where given)."""
    return _page(pages.system, pages.old, pages.where, hist, confirmations, out, report_link,
                 panels)


def kept(out: Path, key: str) -> tuple[dict, dict]:
    """The points and units the page in ``out`` kept for ``key`` (none without a key, or
    when ``out`` is no folder of its own: a link is never followed)."""
    import os
    import stat
    try:
        if key and stat.S_ISDIR(os.lstat(out).st_mode):
            return history_points.read_cache(out / history_points.CACHE, key)
    except OSError:
        pass
    return {}, {}


def _figure_section(system: str, hist: history_points.History, groups: list[range],
                    conf: list, stored: dict, drawn: list, found: dict, out: Path) -> Section:
    """The figure of every session (its groups beyond the bound) and what it shows."""
    pts = hist.points
    sec = Section("history", "Every stored session",
                  "Top: the node's common shift per session (the median change of all "
                  "values against the baseline, slower positive), NODE lines circled, "
                  "confirmation sessions dotted, the baseline's sessions shaded. Below: "
                  "each value the baseline keeps runs for, one point per session (its "
                  "median), squares for the baseline's sessions, the grey band from their "
                  "lowest to their highest median; a value's step, if it has one, in its "
                  "title." + history_bins.caption(groups, len(pts)))
    if pts and plots.available():
        sec.images.append((_figure(system, pts, groups, conf, stored, hist.units, drawn, found,
                                   out), f"{system}: the node's shift and each judged value "
                                         "per session"))
    return sec


def _subtitle(hist: history_points.History, stored: dict) -> str:
    """How many sessions, from when to when, on which hosts, the run this page was written
    with, and how many stored sessions could not be read (none dropped without a word)."""
    pts = hist.points
    unread = Unreadable(hist.unreadable, hist.unreadable_why).note()
    if not pts:
        return " ".join(filter(None, ["No stored session of this system in ReFrame's results "
                                      "storage yet.", unread and unread + "."]))
    n_base = len({i for s in stored.values() for i, _ in s.sessions if i})
    text = (f"{len(pts)} stored session(s) from {pts[0].when:%Y-%m-%d} to "
            f"{pts[-1].when:%Y-%m-%d}; {len(stored)} judged value(s); the baseline has "
            f"{n_base} session(s), {sum(p.baseline for p in pts)} of them stored here.")
    hosts = sorted({p.host for p in pts if p.host})
    if len(hosts) > 1:
        text += (f" Sessions of {len(hosts)} hosts ({one_line.first_of(hosts, 5, ', ')}): "
                 "a system is named by the site's configuration, not its host, so check the "
                 "host column before reading two hosts' sessions as one machine's.")
    mine = next((p for p in pts if hist.reported and p.uuid == hist.reported), None)
    if mine is not None:
        text += (f" Written with the report of session {mine.uuid[:8]} "
                 f"({mine.when:%Y-%m-%d %H:%M}), marked below; every stored session is shown, "
                 "later ones included.")
    return text + (f" {unread}." if unread else "")


def _drawn(pts: list[Point], stored: dict) -> list:
    """The values drawn (the baseline's, measured in one stored session at least), in the
    order of their names."""
    seen = {e for p in pts for e in p.medians}
    return [e for e in sorted(stored, key=lambda e: (e[0], tuple(map(str, e[1])), e[2]))
            if e in seen]


def _figure(system: str, pts: list[Point], groups: list[range], conf: list, stored: dict,
            units: dict, drawn: list, found: dict, out: Path) -> str:
    base = [p.when for p in pts if p.baseline]
    node = history_bins.node_series(pts, groups)
    node.update(confirmations=conf, baseline=(min(base), max(base)) if base else None)
    panels = []
    for e in drawn:
        meds = [statistics.median(r) for r in stored[e].session_runs if r]
        title = entry_name(e)
        if e in found:
            title += f" (step {found[e].step.ratio - 1:+.0%} from {found[e].when:%Y-%m-%d})"
        panels.append({"title": title, "unit": units.get(e, ""),
                       **history_bins.value_series(pts, groups, e),
                       "band": (min(meds), max(meds)) if meds else None})
    return plots.history(out, FIGURE, f"{system}: the node's shift per session", node, panels)


def _steps_table(found: dict, note: str) -> Table:
    t = Table("steps", "Step changes over the stored sessions",
              ["value", "first session after the step", "step"],
              note=note + ("" if found else " No value has one."))
    for e, s in found.items():
        t.add([entry_name(e), f"{s.when:%Y-%m-%d %H:%M} {s.step.session[:8]}", s.step.text()],
              "bad" if s.step.outcome == verdict.over_sessions.REGRESSED else "")
    return t


def _lines(p: Point) -> str:
    """The session's NODE lines as its row shows them ("NODE" for a kept point that has
    one but not its words)."""
    return " | ".join(p.lines) if p.lines else ("NODE" if p.flagged else "")


def _table(pts: list[Point], conf: list, numbers: Numbers, reported: str = "") -> Table:
    """The newest :data:`RECENT_ROWS` sessions as rows (``reported``: the run whose report
    wrote the page, marked); every session's numbers in the CSV."""
    shown = pts[-RECENT_ROWS:]
    t = Table("sessions", "Sessions, oldest first",
              ["date", "session", "host", "node's shift", "NODE line", "baseline's session",
               "values"],
              note=(f"The newest {len(shown)} of {len(pts)} sessions; every session's shift, "
                    f"NODE line and medians are in {CSV_NAME}. " if len(shown) < len(pts)
                    else "") +
                   "NODE line: each NODE line the acceptance summary prints for the session "
                   "read alone (its shift, its load). " +
                   f"{len(conf)} confirmation session(s) in the storage" +
                   (": " + ", ".join(f"{d:%Y-%m-%d %H:%M}" for d in conf[-RECENT_ROWS:])
                    if conf else "."))
    for p in shown:
        t.add([f"{p.when:%Y-%m-%d %H:%M}",
               p.uuid[:8] + (" (this report's run)" if reported and p.uuid == reported else ""),
               p.host, "" if p.shift is None else f"{p.shift:+.1f}%", _lines(p),
               "yes" if p.baseline else "", str(len(p.medians))], "bad" if p.flagged else "")
    names: dict = {}
    for p in pts:
        if p.shift is not None:
            numbers.add("history", "sessions", p.uuid, "node", "node shift", p.shift, "%")
        if p.flagged:
            numbers.add("history", "sessions", p.uuid, "node", "NODE line", 1)
        for e, v in p.medians.items():
            name = names.setdefault(e, entry_name(e))
            numbers.add("history", "values", p.uuid, name, "session median", v)
    return t


def write(system: str, sessions: Iterable[RunReport], confirmations: Iterable[RunReport],
          out: Path, report_link: str = "") -> Path | None:
    """The history page of ``system`` in ``out`` (its files replaced), or None when the
    system has no baseline with stored sessions to judge against (or one that is refused)."""
    pages = Pages.of(system, out.parent.parent)
    if pages is None:
        return None
    hist = history_points.history(system, pages.old, pages.where, sessions,
                                  kept(out, pages.key()))
    return write_judged(pages, hist, confirmations, out, report_link)


def write_judged(pages: Pages, hist: history_points.History,
                 confirmations: Iterable[RunReport], out: Path, report_link: str = "") -> Path:
    """The page of ``hist`` (its sessions judged for ``pages``) in ``out``, its files
    replaced, its points kept there for the next page."""
    # the reports' folder is the caller's; no link below it (history/, the page's own) is followed
    with claimed(out, out.parent.parent):
        files.write(_page(pages.system, pages.old, pages.where, hist, confirmations, out,
                          report_link), out)
        history_points.write_cache(out / history_points.CACHE, pages.key(), hist)
    return out
