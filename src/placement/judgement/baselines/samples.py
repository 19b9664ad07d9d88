"""Per-launch samples in a reference file, beside the intervals ReFrame reads, and their verdict.

A reference file keeps ReFrame's ``[value, lower, upper, unit]`` leaves
under the test names, which ReFrame's own interval check reads; the runs
themselves go under one more top-level key, ``_samples`` (ReFrame reads only
its test's own key, so it never sees them), mirroring the same ``$index``
tree down to::

    gbps:
      higher_is_better: true
      sessions:                 # oldest first; one per ReFrame session recorded
      - {session: <uuid>, runs: [9.61, 9.88, 9.70]}
      - {session: <uuid>, runs: [9.42, 9.51, 9.47]}

``placement baseline record`` writes one session; ``--add`` (or several
``--from``) keeps the stored sessions and adds the run's, so the baseline
carries the session-to-session spread the verdict's session-level test needs
(:mod:`placement.judgement.verdict.over_sessions`). The older leaf ``{higher_is_better, runs,
session}`` reads as one session.

Only variables worth judging get samples: a rate (unit ``.../s``, higher is
better) or a time (lower is better); extremes (``max_time``, ``min_time``),
spreads and counts never. A file without ``_samples`` (recorded before, or by
hand) still works: its cases get ReFrame's interval check only.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from typing import Any

from ...util import PlacementError
from . import pool, shape
from .. import verdict
from .shape import cut, short
from ..verdict.intervals import (MEASURABLE, Entry, entries as intervals, measurable,
    read_entry, same_entry, sibling_family, unit_mismatches)
from ..reading.direction import higher_is_better
from ..reading.run_report import Case
from ..rules import KEEP_SESSIONS

SAMPLES_KEY = shape.SAMPLES_KEY
#: the site's control value (``Test[keys].var``): its change is the node's shift
#: (:func:`placement.judgement.verdict.over_sessions.judge_run`, ``control``); set by ``placement baseline
#: control``, kept by ``record``
CONTROL_KEY = "_control"

def leaf(case: Case, var: str) -> dict[str, Any] | None:
    """The samples entry of one variable of one case, or None when it is not judged."""
    pv = case.perf.get(var)
    return directed_leaf(case, var, higher_is_better(var, pv.unit if pv else None))


def directed_leaf(case: Case, var: str, better: bool | None) -> dict[str, Any] | None:
    """:func:`leaf`, its direction (:func:`higher_is_better`) already known."""
    if better is None:
        return None
    # a zero or NaN launch measured nothing: never stored (the reader refuses it); a float
    # (what a run report's launches are read as) compared inline, as measurable() does
    lo, hi = MEASURABLE
    runs = [float(f"{x:.6g}") for x in case.launches.get(var) or ()
            if (lo <= x <= hi if type(x) is float else measurable(x))]
    if not runs:
        return None
    out = {"higher_is_better": better, "sessions": [{"session": case.session, "runs": runs}]}
    raw = case.raw
    if raw.get("contended") is True:
        out["contended"] = True     # judged by the verdict, never bounded for plain ReFrame
    for field in ("no_bound", "no_plain_bound"):
        # the check's own word: states no bound fits (no_bound), or none of one baseline
        # session for plain ReFrame (no_plain_bound)
        if field in raw:
            why = _reason(raw[field], var)
            if why:
                out[field] = why
    return out


def _reason(declared: Any, var: str) -> str:
    """The check's reason for ``var`` in a ``{var: reason}`` it declared, or ""."""
    why = declared.get(var) if isinstance(declared, dict) else None
    return why if isinstance(why, str) else ""


@dataclass(frozen=True)
class Samples:
    """A stored variable's runs, grouped by the session that made them, and its direction."""

    #: ``(session id, runs)``, oldest first
    sessions: list[tuple[str | None, list[float]]]
    higher_is_better: bool
    #: measured under a competing load (``contended: true``): no ReFrame bound is written
    contended: bool = False
    #: why the check says no plain ReFrame bound fits this value (its states), or ""
    no_bound: str = ""
    #: why the check says one baseline session cannot bound this value for plain ReFrame
    #: while the verdict still judges it, or ""
    no_plain_bound: str = ""
    #: a partition's pooled entry (:mod:`.pool`): each stored session as
    #: ``(session id, its nodes, each node's median)``, its runs (in ``sessions``) one per
    #: node; empty for a value of one node
    pooled: tuple = ()

    @property
    def runs(self) -> list[float]:
        """Every stored run, all sessions together."""
        return [x for _, r in self.sessions for x in r]

    @property
    def session_runs(self) -> list[list[float]]:
        return [r for _, r in self.sessions]


def add_sessions(old: dict[str, Any], new: dict[str, Any], keep: int = KEEP_SESSIONS,
                 where: str = "reference file") -> dict[str, Any]:
    """``new`` (a run's entries) with each sample leaf's stored sessions of ``old`` before it.

    The newest ``keep`` sessions stay; a session recorded again replaces its
    earlier copy; a variable whose direction changed starts afresh. A partition's pooled
    entry keeps sessions too, each with all its nodes (:mod:`.pool`).
    """
    import copy
    stored = entries(old, where)
    out = copy.deepcopy(new)
    for test, keys, var, leaf_ in _leaves(out, "run"):
        before = stored.get((test, keys, var))
        if before is None or before.higher_is_better != leaf_["higher_is_better"]:
            continue
        ids = {s["session"] for s in leaf_["sessions"]}
        if pool.is_pooled(leaf_):
            older = pool.written(g for g in before.pooled if g[0] not in ids)
        else:
            older = [{"session": i, "runs": r} for i, r in before.sessions if i not in ids]
        leaf_["sessions"] = (older + leaf_["sessions"])[-keep:]
    return out


def entries(data: dict[str, Any], where: str = "reference file") -> dict[Entry, Samples]:
    """``{(test, index values, var): Samples}``; a malformed entry is a one-line error."""
    return {(test, keys, var): _check(leaf_, test, keys, var, where)
            for test, keys, var, leaf_ in _leaves(data, where)}


def run_entries(new: dict[str, Any]) -> dict[Entry, Samples]:
    """:func:`entries` of a run's own entries as :func:`placement.judgement.baselines.store.from_run`
    made them (each leaf one :func:`leaf` wrote): read without checking each leaf again,
    which is most of the reading, for a history that reads thousands of runs."""
    return {(test, keys, var): Samples([(None if g["session"] is None else str(g["session"]),
                                         list(g["runs"]))      # floats :func:`leaf` wrote
                                        for g in v["sessions"]],
                                       v["higher_is_better"], v.get("contended", False),
                                       v.get("no_bound", ""), v.get("no_plain_bound", ""))
            for test, keys, var, v in _run_leaves(new)}


def _run_leaves(new: dict[str, Any]) -> list[tuple[str, tuple, str, Any]]:
    """:func:`_leaves` of a tree :func:`placement.judgement.baselines.store.from_run` made, in the
    same order: its shape is known (each test's ``$index`` as deep as its keys, or one
    ``system:partition`` level), so it is walked without checking it (a history reads
    thousands)."""
    out: list[tuple[str, tuple, str, Any]] = []
    for test, node in (new.get(SAMPLES_KEY) or {}).items():
        _collect(out, test, len(node.get("$index") or ()) or 1, node, (), 0)
    return out


def _collect(out: list, test: str, depth: int, n: dict, keys: tuple, level: int) -> None:
    for k, v in n.items():
        if level == depth:
            out.append((test, keys, str(k), v))
        elif not (level == 0 and k == "$index"):
            _collect(out, test, depth, v, keys + (k,), level + 1)


def _leaves(data: dict[str, Any], where: str) -> Iterator[tuple[str, tuple, str, Any]]:
    """``(test, index values, var, leaf)`` of every variable under ``_samples``, walking
    the same ``$index`` tree as the test's references; a malformed node is an error."""
    tree = data.get(SAMPLES_KEY)
    if tree is None:
        return
    if not isinstance(tree, dict):
        raise PlacementError(f"{where}: {SAMPLES_KEY} must be a mapping of test names "
                             "(hand-edited?); fix it or record again, nothing was written")
    for test, node in tree.items():
        at = f"{SAMPLES_KEY}.{shape.test_name(test)}"
        if not isinstance(node, dict):
            raise PlacementError(f"{where}: {at} must be a mapping")
        depth = shape.index_depth(node.get("$index"), where, at)
        yield from _walk(test, at, depth, where, node, (), 0)


def _walk(test: str, at: str, depth: int, where: str, n: dict, keys: tuple,
          level: int) -> Iterator[tuple[str, tuple, str, Any]]:
    """:func:`_leaves`' walk down one test's tree (a function of its own: a nested one that
    calls itself is a reference cycle, which keeps each run's entries until a collection);
    ``at``: the test's place in the file, for the error line."""
    for k, v in n.items():
        if k == "$index" and level == 0:
            continue
        if level == depth:
            yield test, keys, str(k), v
        elif isinstance(v, dict):
            yield from _walk(test, at, depth, where, v, keys + (k,), level + 1)
        else:
            path = '.'.join(map(str, keys + (k,)))
            raise PlacementError(f"{where}: {cut(f'{at}.{path}')} must be a mapping")


def _check(v: Any, test: str, keys: tuple, var: str, where: str) -> Samples:
    name = cut(f"{SAMPLES_KEY}.{shape.test_name(test)}."
               f"{'.'.join(map(str, keys + (var,)))}")
    accepted = ("expected {higher_is_better: true|false, sessions: [{session: id, "
                "runs: [numbers > 0]}, ...]}")
    if not isinstance(v, dict) or not isinstance(v.get("higher_is_better"), bool):
        raise PlacementError(f"{where}: {name}: {accepted}; nothing was written")
    if "sessions" in v:
        groups = v["sessions"]
        if not isinstance(groups, list) or not groups or not all(
                isinstance(g, dict) and "runs" in g for g in groups):
            raise PlacementError(f"{where}: {name}: sessions {short(groups)} is not a list of "
                                 f"{{session, runs}} mappings; {accepted}; nothing was written")
    else:                       # the older one-session leaf
        groups = [{"session": v.get("session"), "runs": v.get("runs")}]
    sessions = []
    for g in groups:
        runs = g["runs"]
        if not isinstance(runs, list) or not runs or not all(map(measurable, runs)):
            raise PlacementError(f"{where}: {name}: runs {short(runs)} are not a list of measured "
                                 f"values (numbers from {MEASURABLE[0]:g} to "
                                 f"{MEASURABLE[1]:g}); {accepted}; nothing was written")
        sid = g.get("session")
        sessions.append((None if sid is None else str(sid), [float(x) for x in runs]))
    pooled = pool.groups(groups, sessions, f"{where}: {name}")
    if not isinstance(v.get("contended", False), bool):
        raise PlacementError(f"{where}: {name}: contended {short(v['contended'])} is not true or "
                             f"false; {accepted}; nothing was written")
    for field in ("no_bound", "no_plain_bound"):
        if not isinstance(v.get(field, ""), str):
            raise PlacementError(f"{where}: {name}: {field} {short(v[field])} is not a reason "
                                 f"(text); {accepted}; nothing was written")
    return Samples(sessions, v["higher_is_better"], v.get("contended", False),
                   v.get("no_bound", ""), v.get("no_plain_bound", ""), pooled)


@dataclass(frozen=True)
class Judged:
    """One variable of a new run against the stored file: a verdict, or why there is none."""

    entry: Entry
    verdict: verdict.over_sessions.Verdict | None
    note: str = ""


class Judgement(list):
    """A run's :class:`Judged` values (a list), with the node's common shift and the prior
    the values borrowed their session spread from (:func:`placement.judgement.verdict.over_sessions.judge_run`)."""

    #: the whole run's verdict (a confirmation session is judged with its prior and shifts)
    run: verdict.over_sessions.RunVerdict | None = None
    #: why the file's control value could not give the node's shift ("" when it did, or
    #: when the file names none)
    control_note: str = ""
    #: values not judged because the file's reference is in another unit than the check
    #: reports: ``{entry: (the reference's unit, the check's unit)}``
    units: dict = {}
    #: the entries judged against (:func:`entries` of the baseline) and those judged (of
    #: the run): a report draws from them without reading 100k entries again
    stored: dict = {}
    fresh: dict = {}

    @property
    def node(self) -> verdict.over_sessions.NodeShift | None:
        return self.run.node if self.run is not None else None

    @property
    def prior(self) -> Any:
        return self.run.prior if self.run is not None else None

    @property
    def notes(self) -> list[str]:
        return self.run.notes if self.run is not None else []


def judge_entries(old: dict[str, Any], new: dict[str, Any], where: str = "reference file",
              min_effect: float = verdict.over_sessions.MIN_EFFECT, alpha: float = verdict.over_sessions.ALPHA,
              machine_effect: float = verdict.over_sessions.MACHINE_EFFECT,
              selected_by: Judgement | None = None,
              only: Container[Entry] | None = None) -> Judgement:
    """Every judged variable of ``new`` (a run's entries) against ``old``'s stored sessions.

    The values are judged together (:func:`placement.judgement.verdict.over_sessions.judge_run`: the
    node's common shift, a session-spread prior fitted over them,
    Benjamini-Hochberg over the run). Variables whose stored entry has no runs
    are listed with the note ``interval only``; new variables with no stored
    entry at all are left out. ``selected_by``: ``new`` is a confirmation session of
    values that judgement selected (:func:`placement.judgement.verdict.over_sessions.judge_run`);
    ``only``: the entries to judge (a confirmation tests the values it reran for, no others).
    """
    stored, fresh = entries(old, where), entries(new, "run")
    units = {e: u for e, u in unit_mismatches(old, new).items() if only is None or e in only}
    keys, series, rest = _series(stored, fresh, units, intervals(old), only)
    control, note = control_of(old, keys) if only is None else (None, "")
    prone = verdict.over_sessions.state_prone({e: s.session_runs for e, s in stored.items()},
                                lambda e: sibling_family(old, e)) | declared_states(stored, fresh)
    rv = verdict.over_sessions.judge_run(series, alpha, min_effect, machine_effect,
                           selected_by=selected_by.run if selected_by is not None else None,
                           control=control, prone={i for i, e in enumerate(keys) if e in prone})
    out = Judgement([Judged(e, v) for e, v in zip(keys, rv.verdicts)] + rest)
    out.run = rv
    out.control_note = note
    out.units = units
    out.stored, out.fresh = stored, fresh
    return out


def from_verdicts(old: dict[str, Any], new: dict[str, Any], where: str,
                  verdict_of: Callable[[Entry], verdict.over_sessions.Verdict | None]
                  ) -> Judgement:
    """The :class:`Judgement` :func:`judge_entries` would list, each value's verdict given
    (``verdict_of``: a run judged once, its verdicts read back from its record) rather
    than judged again: the same entries, the same values listed unjudged, and the stored
    and new runs a report draws; no run verdict (node, prior) of its own."""
    stored, fresh = entries(old, where), entries(new, "run")
    units = unit_mismatches(old, new)
    keys, _, rest = _series(stored, fresh, units, intervals(old))
    out = Judgement([Judged(e, verdict_of(e)) for e in keys] + rest)
    out.units = units
    out.stored, out.fresh = stored, fresh
    return out


def _series(stored: dict[Entry, Samples], fresh: dict[Entry, Samples], units: dict,
            old_iv: Container[Entry], only: Container[Entry] | None = None,
            prepared: Callable[[Entry], verdict.over_sessions.BaselineSessions] | None = None
            ) -> tuple[list[Entry], list[verdict.over_sessions.Series], list[Judged]]:
    """The run's entries to judge (in the order of their names), each as a
    :class:`~placement.judgement.verdict.over_sessions.Series` against its stored sessions, and those
    listed unjudged (another unit, or a baseline without runs). ``prepared``: each entry's
    stored sessions already prepared (:class:`Against`)."""
    keys, series, rest = [], [], []
    for e, s in sorted(fresh.items(), key=lambda it: (it[0][0], tuple(map(str, it[0][1])),
                                                      it[0][2])):
        if only is not None and e not in only:
            continue
        if e in units:      # a number in 's' against one in 'GB/s' means nothing
            rest.append(Judged(e, None, f"not judged: the reference is in {units[e][0]!r}, "
                                        f"the check reports {units[e][1]!r}"))
        elif e in stored:
            b = stored[e]
            keys.append(e)
            series.append(verdict.over_sessions.Series(s.runs, b.sessions, b.higher_is_better, e,
                                         prepared(e) if prepared else None))
        elif e in old_iv:
            rest.append(Judged(e, None, "interval only (baseline without runs)"))
    return keys, series, rest


class Against:
    """One baseline read once for the node lines of many runs (a history page's sessions):
    its entries, intervals and each value's prepared sessions are the same for every run,
    so thousands of sessions cost one reading of the baseline, not one each."""

    def __init__(self, old: dict[str, Any], where: str = "reference file") -> None:
        self.old = old
        self.stored = entries(old, where)
        self._intervals = intervals(old)
        self._prepared: dict[Entry, verdict.over_sessions.BaselineSessions] = {}
        #: the baseline sessions' shifts by basis (:func:`verdict.node_line`)
        self._shifts: dict = {}

    def prepared(self, e: Entry) -> verdict.over_sessions.BaselineSessions:
        if e not in self._prepared:
            b = self.stored[e]
            self._prepared[e] = verdict.over_sessions.prepare_sessions(b.sessions, b.higher_is_better)
        return self._prepared[e]

    def node(self, new: dict[str, Any], fresh: dict[Entry, Samples] | None = None,
             min_effect: float = verdict.over_sessions.MIN_EFFECT,
             machine_effect: float = verdict.over_sessions.MACHINE_EFFECT) -> verdict.over_sessions.NodeShift | None:
        """The node line :func:`judge_entries` gives ``new`` (a run's entries; ``fresh``: their
        :func:`entries`, when the caller has them), without testing each value."""
        fresh = entries(new, "run") if fresh is None else fresh
        keys, series, _ = _series(self.stored, fresh,
                                  unit_mismatches(self.old, new, self._intervals),
                                  self._intervals, prepared=self.prepared)
        control, _ = control_of(self.old, keys)
        return verdict.over_sessions.node_line(series, min_effect, machine_effect, control, self._shifts)


def declared_states(*sets: dict[Entry, Samples]) -> set[Entry]:
    """The values whose check says they have states between sessions (``no_bound``, in the
    baseline file or in the run): never gross. Why: their launches agree within a session,
    so the gross rule, which one baseline session leaves to launch noise, would call a
    state a change; the sessions' own spread judges them."""
    return {e for entries_ in sets for e, s in entries_.items() if s.no_bound}


def control_of(data: dict[str, Any], keys: list[Entry]) -> tuple[int | None, str]:
    """The index among ``keys`` of the file's control value (:data:`CONTROL_KEY`), and a
    note when the file names one that this run cannot use (then the median decides)."""
    name = data.get(CONTROL_KEY)
    if name is None:
        return None, ""
    e = read_entry(str(name), data)     # a hand edit may give the `baseline diff` form
    i = next((i for i, k in enumerate(keys) if e is not None and same_entry(k, e)), None)
    if i is None:
        return None, (f"control value {name} not judged in this run (not run, or no stored "
                      "runs): the node's shift is the median of the values")
    return i, ""


def file_prior(data: dict[str, Any], where: str = "reference file"):
    """The session-spread prior of a reference file's stored runs (:func:`verdict.file_prior`)."""
    return verdict.over_sessions.file_prior([s.session_runs for s in entries(data, where).values()])


def summary(judged: list[Judged]) -> str:
    """``N regressed, M improved, K unchanged, U undecided`` (+ interval-only count)."""
    c = verdict.over_sessions.counts([j.verdict for j in judged if j.verdict])
    text = ", ".join(f"{c[o]} {o}" for o in verdict.over_sessions.OUTCOMES)
    only = sum(j.verdict is None for j in judged)
    return text + (f", {only} interval only" if only else "")


def context_lines(judged: Judgement) -> list[str]:
    """What the verdict leaned on: the node's shift, the borrowed spread, and notes."""
    out = []
    if judged.node is not None:
        out.append(("NODE " if judged.node.flagged else "node: ") + judged.node.text())
    if judged.prior is not None:
        out.append(f"borrowed: {judged.prior.text()}")
    out += [f"note: {n}" for n in judged.notes]
    if judged.control_note:
        out.append(f"note: {judged.control_note}")
    few = sessions_note([j.verdict for j in judged if j.verdict])
    if few:
        out.append(f"note: {few}")
    return out


def sessions_note(verdicts: list[verdict.over_sessions.Verdict]) -> str:
    """A warning when values were judged against one session only, else ``""``.

    The launches of one session share its load; against a single session a
    quiet or busy hour looks like a change (see :mod:`placement.judgement.verdict.over_sessions`).
    """
    few = sum(1 for v in verdicts if v.sessions < verdict.over_sessions.MIN_SESSIONS)
    if not few:
        return ""
    return (f"{few} value(s) judged against fewer than {verdict.over_sessions.MIN_SESSIONS} baseline "
            "sessions: their spread between sessions is borrowed from the other values, so "
            "only large changes can be called; add sessions recorded at other times with "
            "`placement baseline record --add`")
