"""What an acceptance run found: its final cases, its regressions and its one summary line.

``scripts/acceptance.sh`` runs ReFrame within a time box and keeps the run
reports of one run (one or more parts, when ``--resume`` went on after a time
box); everything it concludes from them is here, behind ``placement
acceptance``:

* ``resume LIST``: the earlier parts that can be read (a corrupt one is dropped
  with one line) and the checks that already finished (``-x /HASH`` for ReFrame);
  a case a signal interrupted (the part's ``.stopped`` file, :func:`stopped_by`) runs
  again, one that hung in the time box (:func:`is_hung`) does not;
* ``sessions PART...``: ReFrame's session filter selecting a run's parts;
* ``confirm PART...``: the checks a confirmation session runs (:mod:`.confirmation`);
* ``summary PART... --compare CSV --confirm REPORT``: a ``FAIL`` line per failed case, ``SKIP``
  lines counting skipped cases by reason, then the ``ACCEPTANCE`` line; exit 0
  (pass), 1 (failures or regressions) or 3 (the time box cut the run).

The regression rule is :func:`find_regressions`, one function. A value whose
baseline keeps its sessions' runs (``_samples``) is judged by the verdict
(:mod:`placement.judgement.verdict.over_sessions`: each session one draw, a spread borrowed from the
run's other values, the node's common shift, Benjamini-Hochberg over the
run): ``regressed`` fails, ``improved`` and ``unchanged`` pass, ``undecided``
is counted on its own with what this baseline can detect. A case ReFrame
failed against its reference fails whatever the verdict says: no verdict turns
a failure into a pass (the references ``record`` writes are one-sided and as
wide as the sessions' spread, so they fail only what is clearly worse). A
node flagged slower than its baseline (:mod:`placement.judgement.verdict.node_shift`), or
loaded (its jobs' CPU pressure, :mod:`placement.judgement.verdict.node_load`), fails the run
on its own line. With ``--confirm``, each of those failures stands only if the
confirmation session shows it too (:mod:`.confirmation`); a node line no second session
saw fails only from :data:`placement.judgement.verdict.node_shift.NODE_AT_ONCE`, and below it
leaves the run incomplete. The comparison with the previous run is information only,
and extremes (``max_time``, ``min_time``) are judged nowhere. A run the watchdog stopped (``stopped`` > 0) is a failure
to finish, never a performance regression.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..judgement import baselines, entry_name, verdict, reading
from ..util import PlacementError, regular_file
from . import comparison_health, confirmation, peer_lines

@dataclass(frozen=True)
class Regression:
    """One value judged worse: which case, which variable, and why."""

    case: str
    sysenv: str
    var: str
    why: str
    against: str = "previous run"

    def line(self) -> str:
        return f"regression vs {self.against}: {self.case} @{self.sysenv} {self.var} {self.why}"


#: (display name, system:partition+environ, perfvar) -> the value's verdict
Judged = dict[tuple[str, str, str], verdict.over_sessions.Verdict]


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


def judge_values(parts: list[Part], system: str,
                 selected_by: baselines.samples.Judgement | None = None,
                 only: set[confirmation.ValueKey] | None = None
                 ) -> tuple[Judged, baselines.samples.Judgement | None]:
    """Verdicts of the run's values that the system's baseline keeps runs for, and the
    whole judgement (the node's shift, the borrowed spread).

    ``selected_by`` and ``only``: the parts are a confirmation session of the values
    ``only`` that judgement selected (:mod:`.confirmation`)."""
    from ..util import baseline_file
    path = baseline_file(system)
    if baselines.store.refusal(path):
        return {}, None       # nothing judged against it: the summary says why
    old = baselines.store.load(path)
    if not old or not parts:
        return {}, None
    report = reading.run_report.pool([p.report for p in parts])
    cases_of: dict = {}
    try:
        new = baselines.store.from_run(report, system.split(":")[0], cases_of)
    except PlacementError:
        return {}, None       # no values of this system in the run

    def key(e) -> tuple[str, str, str]:
        c = cases_of[e]
        return (c.raw.get("display_name", c.test), c.sysenv, e[2])
    keep = None if only is None else {e for e in cases_of if key(e) in only}
    out: Judged = {}
    judgement = baselines.samples.judge_entries(old, new, str(path), selected_by=selected_by,
                                           only=keep)
    for j in judgement:
        if j.verdict is not None:
            out[key(j.entry)] = j.verdict
    return out, judgement


def readable(parts: list[Path]) -> tuple[list[Part], list[str]]:
    """The parts that are ReFrame run reports, and one line for each that is not."""
    good, dropped = [], []
    for p in parts:
        try:
            data = reading.run_report.read(p)
            good.append(Part(p, data, reading.run_report.from_data(data, p),  # the one shape check
                             stopped_by(p)))
        except PlacementError as err:
            dropped.append(f"dropped part {p}: {err}")
    return good, dropped


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
    """What names one test case across a run's parts: a case run again has the same key."""
    return (tc.get("unique_name"), tc.get("system"), tc.get("environ"))


def by_signal(parts: list[Part]) -> set[tuple]:
    """The keys of :func:`final_cases` whose last attempt was in a part a signal stopped
    (:func:`stopped_by`): a user's stop, which is no hang."""
    keys: set[tuple] = set()
    for part in parts:                   # as final_cases: the last attempt decides
        for run in part.data["runs"]:
            for tc in run.get("testcases", []):
                (keys.add if part.stopped else keys.discard)(case_key(tc))
    return keys


def is_hung(tc: dict[str, Any], signalled: bool = False) -> bool:
    """Still running when the time box interrupted ReFrame (``SIGINT``), with no time limit
    of its own: only the box ended it, and running it again would spend the next window
    the same way, so ``--resume`` skips it (:func:`resume_plan`).

    ``signalled``: a Ctrl-C, SIGTERM or SIGHUP stopped its part (:func:`by_signal`), which
    leaves the same record; that case was stopped, not hung, and runs again."""
    return (not signalled and tc.get("result") == "abort" and tc.get("fail_phase") == "run"
            and not tc.get("time_limit") and "KeyboardInterrupt" in str(tc.get("fail_reason")))


def hung_line(tc: dict[str, Any]) -> str:
    """The line naming a hung case: what it is, how long it ran, where its files are."""
    ran = tc.get("time_run")
    after = f" after {ran:.0f}s" if isinstance(ran, (int, float)) else ""
    return (f"HUNG {tc.get('display_name')} @{tc.get('system')}+{tc.get('environ')} "
            f"[no time limit of its own, still running when the time box ended it{after}; "
            f"--resume skips it: give the check a time_limit] stage={tc.get('stagedir')}")


def classify(tc: dict[str, Any], cut_short: bool, signalled: bool = False) -> str:
    """``pass``, ``skip``, ``fail``, ``unfinished`` (a hang the watchdog ended), ``hung``
    (:func:`is_hung`, a failure to finish) or ``interrupted``.

    A case the time box interrupted before its own time limit, or a signal stopped
    (``signalled``, :func:`by_signal`), is ``interrupted``: ``--resume`` runs it again. A
    case ReFrame failed stays failed: no verdict turns a failure into a pass.
    """
    result = tc.get("result")
    if result in ("pass", "skip"):
        return result
    if is_hung(tc, signalled):
        return "hung"
    if result == "abort" and cut_short:
        return "interrupted"
    if tc.get("fail_phase") == "performance" and verdict.guards.stopped_runs(tc) > 0:
        return "unfinished"
    return "fail"


def compare_rows(path: Path | None) -> list[dict[str, str]]:
    """Rows of ReFrame's ``--performance-compare`` CSV (empty when absent or unreadable)."""
    if path is None:
        return []
    try:
        rows = list(csv.reader(path.open()))
    except OSError:
        return []
    start = next((i for i, row in enumerate(rows) if row[:1] == ["name"]), None)
    if start is None:
        return []
    head = rows[start]
    return [dict(zip(head, row)) for row in rows[start + 1:] if len(row) == len(head)]


def find_regressions(cases: list[dict[str, Any]], judged: Judged | None = None
                     ) -> list[Regression]:
    """The regression rule, in one place.

    * a value with a verdict (its baseline keeps runs): ``regressed``;
    * a case that failed its performance check against a reference (not a
      watchdog stop: that is a failure to finish), whatever its verdict.
    """
    judged = judged or {}
    out = [Regression(name, sysenv, var, v.text(), "baseline sessions")
           for (name, sysenv, var), v in sorted(judged.items()) if v.outcome == verdict.over_sessions.REGRESSED]
    for tc in cases:
        if confirmation.is_reference_failure(tc):
            out.append(Regression(tc.get("display_name", "?"),
                                  f"{tc.get('system')}+{tc.get('environ')}", "reference",
                                  " ".join((tc.get("fail_reason") or "").split())[:200]))
    return out


def previous_run_info(rows: list[dict[str, str]], max_slowdown: float) -> list[str]:
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
    return [f"INFO {len(worse)} value(s) worse than the previous run by more than "
            f"{max_slowdown:g}% (information only; judged against the baseline's sessions): "
            + "; ".join(worse[:5]) + (" ..." if len(worse) > 5 else "")]


#: ReFrame's line for a skipped case: ``[     SKIP ] (  5/125) NAME /HASH @SYS:PART+ENV [reason]``
#: (the case's number padded to the width of the total)
_SKIP_LINE = re.compile(r"^\[\s*SKIP\s*\] \(\s*\d+/\d+\) .*? /([0-9a-f]{8}) @(\S+) \[(.*)\]\s*$",
                        re.M)
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def skip_reasons(parts: list[Part]) -> dict[tuple[str, str], str]:
    """Why each case was skipped, keyed by (hash, system:partition+environ).

    ReFrame's run report does not keep the message a test skipped with; its
    output does, and acceptance.sh keeps that output beside each report (``.out``).
    """
    out: dict[tuple[str, str], str] = {}
    for part in parts:
        log = part.path.with_suffix(".out")
        if log.is_file():
            text = _COLOUR.sub("", log.read_text(errors="replace"))
            for m in _SKIP_LINE.finditer(text):
                out[(m.group(1), m.group(2))] = m.group(3)
    return out


def _skip_reason(tc: dict[str, Any], reasons: dict[tuple[str, str], str]) -> str:
    """A skip reason with case-specific names folded (``bt.A.x`` -> ``*.x``), for counting."""
    key = (tc.get("hashcode", ""), f"{tc.get('system')}:{tc.get('partition')}+{tc.get('environ')}")
    reason = reasons.get(key) or tc.get("fail_reason") or "reason not recorded"
    reason = re.sub(r"\b\w+\.[A-Z]\.x\b", "*.x", reason.splitlines()[0], count=1)
    return reason[:300]


@dataclass
class _Findings:
    """What the summary concludes from a run, built step by step by :func:`summary`."""

    system: str
    good: list[Part]
    #: every case as its last attempt left it, and what each counts as
    final: dict[tuple, dict[str, Any]]
    kinds: dict[tuple, str]
    judged: Judged
    judgement: baselines.samples.Judgement | None
    #: the node's load when it fails the first session
    load: verdict.node_load.Load | None
    #: said in the ACCEPTANCE line; gaps also make it INCOMPLETE (missing evidence)
    notes: list[str]
    gaps: list[str]
    conf: confirmation.Confirmation | None = None

    @property
    def node(self) -> verdict.over_sessions.NodeShift | None:
        return self.judgement.node if self.judgement is not None else None


@dataclass(frozen=True)
class _NodeLines:
    """The node's lines and whether the node (its shift, its load) fails the run."""

    lines: list[str]
    node_fails: bool
    load_fails: bool
    #: a node line that fails only when a second session shows it, which none did
    unconfirmed: bool = False


def _first_session(good: list[Part], system: str, cut_short: bool, notes: list[str],
                   gaps: list[str]) -> _Findings:
    """The first session's cases, their kinds, its values' verdicts and its load."""
    final = final_cases(good)
    judged, judgement = judge_values(good, system)
    signalled = by_signal(good)
    kinds = {key: classify(tc, cut_short, key in signalled) for key, tc in final.items()}
    return _Findings(system, good, final, kinds, judged, judgement,
                     confirmation.load_fails(final), notes, gaps)


def _apply_confirmation(f: _Findings, confirm: Path) -> None:
    """What the confirmation session decided: dismissed cases pass, values as it judged."""
    f.conf, f.judged, conf_notes = confirmed(confirm, f.system, f.final, f.judged,
                                             f.judgement, f.load)
    f.notes += conf_notes
    for key in f.conf.dismissed_cases:
        f.kinds[key] = "pass"       # failed the first session, passed the one that tests


def _node_lines(f: _Findings) -> _NodeLines:
    """The NODE lines: the node's shift and its load, each failing the run only when its
    confirmation session showed it too; a node line no second session saw stands as
    :func:`.confirmation.node_standing` says (below NODE_AT_ONCE the run is incomplete). A
    shift that one or two baseline sessions cannot test is a NOTE saying what to do."""
    node, conf, lines = f.node, f.conf, []
    shown = None if conf is None else not conf.node_dismissed
    standing = confirmation.node_standing(node, shown)
    if node is not None and node.flagged and shown is not False:
        line = f"NODE {f.system}: {node.line()}"
        if standing == confirmation.NODE_UNCONFIRMED:
            line += (" (not confirmed: no confirmation session ran; a shift under "
                     f"{verdict.over_sessions.NODE_AT_ONCE:.0%} fails only when a second session shows "
                     "it too)")
            f.gaps.append("a node line that no confirmation session decided")
        lines.append(line)
    if node is not None and node.untested:
        lines.append(f"NOTE {f.system}: {node.text()}")
    load_fails = f.load is not None and not (conf is not None and conf.load_dismissed)
    if load_fails:
        lines.append(f"NODE {f.system}: {f.load.line()}")
    return _NodeLines(lines, standing == confirmation.NODE_FAILS, load_fails,
                      standing == confirmation.NODE_UNCONFIRMED)


def _undecided_with_node(judged: Judged) -> Judged:
    """The verdicts with the values regressed only with the node's shift made undecided: the
    node line they rest on was not confirmed, so neither are they."""
    return {k: replace(v, outcome=verdict.over_sessions.UNDECIDED,
                       why="with a node line no second session confirmed")
            if v.outcome == verdict.over_sessions.REGRESSED and v.why == "with the node" else v
            for k, v in judged.items()}


def _case_lines(f: _Findings, failed: list[tuple], skipped: list[dict]) -> list[str]:
    """A FAIL line per failed case, then SKIP lines counting skipped cases by reason."""
    lines = []
    for key in failed:
        tc = f.final[key]
        if f.kinds[key] == "hung":
            lines.append(hung_line(tc))
            continue
        what = (f"did not finish: the watchdog stopped {verdict.guards.stopped_runs(tc)} run(s)"
                if f.kinds[key] == "unfinished" else fail_text(tc))
        lines.append(f"FAIL {tc.get('display_name')} @{tc.get('system')}+{tc.get('environ')} "
                     f"[{what}] stage={tc.get('stagedir')}")
    reasons = skip_reasons(f.good)
    for reason, n in Counter(_skip_reason(tc, reasons) for tc in skipped).most_common():
        lines.append(f"SKIP {n} case(s): {reason}")
    return lines


def _note_lines(f: _Findings) -> list[str]:
    """NOTE lines: a baseline of few sessions, a control value not judged; and, each also a
    gap, a baseline recorded for another system, refused, or in another unit."""
    lines = []
    few = baselines.samples.sessions_note(list(f.judged.values()))
    if few:
        lines.append(f"NOTE {few}")
    if f.judgement is not None and f.judgement.control_note:
        lines.append(f"NOTE {f.judgement.control_note}")
    other = foreign_baseline(f.system)
    if other:
        lines.append(f"NOTE {other}")
        f.gaps.append("baseline of another system")
    refused, units = baseline_gaps(f.system, f.judgement)
    mixed = mixed_versions(f.good, f.system)
    if mixed.startswith("baseline changed"):
        f.gaps.append("baseline changed during the run")
    lines += [f"NOTE {mixed}"] if mixed else []
    lines += [f"NOTE {line}" for line in refused + units]
    f.gaps += (["baseline refused: nothing judged against it"] if refused else []) + \
        ([f"{len(units)} value(s) with a reference in another unit"] if units else [])
    return lines


def _acceptance_line(f: _Findings, mode: str, outcome: str, passed: int, failed: int,
                     regressions: int, skipped: int, node: _NodeLines) -> str:
    """The one line a scheduled run ends with."""
    counts = verdict.over_sessions.counts(list(f.judged.values()))
    notes = f.notes + f.gaps
    extra = (f" skipped={skipped}" + (f" parts={len(f.good)}" if len(f.good) > 1 else "") +
             (" node=slower" if node.node_fails else "") +
             (" node=loaded" if node.load_fails else "") +
             (f.conf.text() if f.conf is not None else "") +
             (f" verdict: {counts[verdict.over_sessions.REGRESSED]} regressed, {counts[verdict.over_sessions.IMPROVED]} "
              f"improved, {counts[verdict.over_sessions.UNCHANGED]} unchanged, {counts[verdict.over_sessions.UNDECIDED]} "
              f"undecided of {len(f.judged)}" if f.judged else "") +
             (f" ({'; '.join(notes)})" if notes else ""))
    return (f"ACCEPTANCE {f.system} {mode}: {outcome} {passed} passed, {failed} failed "
            f"({regressions} perf regressions) report={f.good[-1].path}{extra}")


#: the exit status of each outcome of the ACCEPTANCE line
EXIT_STATUS = {"PASS": 0, "FAIL": 1, "UNFINISHED": 3, "INCOMPLETE": 4}


def summary(parts: list[Path], system: str, mode: str, compare: Path | None,
            max_slowdown: float, cut_short: bool, notes: list[str],
            not_compared: list[str] = (), confirm: Path | None = None,
            not_confirmed: list[str] = ()) -> tuple[list[str], int]:
    """The lines to print and the exit status (0 pass, 1 fail, 3 unfinished, 4 incomplete).

    ``compare`` is None when no comparison was made (a first run); ``not_compared``
    are comparisons that could not even start (the previous run's reports gone).
    ``confirm`` is the run report of the confirmation session (:mod:`.confirmation`);
    ``not_confirmed``: why a confirmation that was due did not run (its failures stand).
    The system's reference file is read once for all of it (:func:`baselines.read_once`).
    """
    with baselines.store.read_once():
        return _summary(parts, system, mode, compare, max_slowdown, cut_short, notes,
                        not_compared, confirm, not_confirmed)


def _summary(parts: list[Path], system: str, mode: str, compare: Path | None,
             max_slowdown: float, cut_short: bool, notes: list[str],
             not_compared: list[str], confirm: Path | None,
             not_confirmed: list[str]) -> tuple[list[str], int]:
    good, dropped = readable(parts)
    notes = dropped + list(notes) + comparison_health.not_stored([p.path for p in good])
    gaps = list(not_compared) + (comparison_health.comparison_gaps(compare, compare_rows(compare))
                                 if compare is not None and not cut_short else [])
    if not good:
        return [f"ACCEPTANCE {system} {mode}: FAIL no readable run report "
                f"({'; '.join(notes)})"], 1
    f = _first_session(good, system, cut_short, notes, gaps)
    if confirm is not None:
        _apply_confirmation(f, confirm)
    f.notes += [f"not confirmed: {why}" for why in not_confirmed]
    gross = gross_values(f.judged)  # (confirmed ones are regressed, dismissed ones not gross)
    if gross:       # only a second session decides them: the run is not a plain PASS
        f.gaps.append(f"{len(gross)} grossly worse value(s) that no confirmation session "
                      "decided")
    failed = [k for k, v in f.kinds.items() if v in ("fail", "unfinished", "hung")]
    skipped = [f.final[k] for k, v in f.kinds.items() if v == "skip"]
    passed = sum(v == "pass" for v in f.kinds.values())
    ran = sum(v in ("pass", "fail", "unfinished", "hung") and not f.final[k].get("fixture")
              for k, v in f.kinds.items())
    node = _node_lines(f)
    peer = peer_lines.of_parts(good, system)
    f.notes += peer.notes
    if node.unconfirmed:
        f.judged = _undecided_with_node(f.judged)
    regressions = find_regressions([tc for k, tc in f.final.items() if f.kinds[k] != "pass"],
                                   f.judged)
    lines = node.lines + peer.lines + [r.line() for r in regressions if r.var != "reference"]
    lines += _case_lines(f, failed, skipped)
    lines += f.conf.lines() if f.conf is not None else []
    lines += undecided_lines(f.judged)
    lines += previous_run_info(compare_rows(compare), max_slowdown)
    lines += _note_lines(f)
    if not ran:
        f.notes.insert(0, "no case ran")      # all skipped: covered nothing, never a pass
    ok = ran > 0 and not failed and not regressions and not node.node_fails \
        and not node.load_fails and not peer.fails
    outcome = ("UNFINISHED" if cut_short else "FAIL" if not ok else
               "INCOMPLETE" if f.gaps else "PASS")
    lines.append(_acceptance_line(f, mode, outcome, passed, len(failed), len(regressions),
                                  len(skipped), node))
    return lines, EXIT_STATUS[outcome]


def selected_values(judged: Judged) -> set[confirmation.ValueKey]:
    """The values a confirmation session tests (:func:`.confirmation.selected`)."""
    return {k for k, v in judged.items() if confirmation.selected(v)}


def gross_values(judged: Judged) -> set[confirmation.ValueKey]:
    """Values the first session found grossly worse, which a second session decides
    (:data:`placement.judgement.verdict.over_sessions.GROSS_EFFECT`)."""
    return {k for k, v in judged.items()
            if v.gross is not None and v.outcome == verdict.over_sessions.UNDECIDED}


def to_confirm(parts: list[Path], system: str) -> tuple[list[str], str]:
    """The hashes of the checks a confirmation session runs, and what it confirms: the
    failed and regressed checks, or every check that ran when the node line fails the
    run (a node line is a property of a whole session); ``[]`` when nothing failed."""
    good, _ = readable(parts)
    if not good:
        return [], "no readable run report"
    final = final_cases(good)
    judged, judgement = judge_values(good, system)
    if confirmation.node_fails(judgement) or confirmation.load_fails(final):
        return confirmation.every_check(final), "the node line: the whole run"
    hashes = confirmation.candidates(final, selected_values(judged))
    return hashes, "the failed, regressed and grossly worse checks" if hashes else ""


def confirmed(confirm: Path, system: str, final: dict, judged: Judged,
              judgement: baselines.samples.Judgement | None, load: verdict.node_load.Load | None
              ) -> tuple[confirmation.Confirmation, Judged, list[str]]:
    """The first session's failures against the confirmation session ``confirm``: what
    it decided, the verdicts with the dismissed values as the confirmation judged them and
    the confirmed gross ones regressed, and a note when it could not be read (then every failure stands). ``load``:
    the first session's load when it fails the run."""
    again, dropped = readable([confirm])
    if not again:
        return confirmation.Confirmation(), judged, [
            f"confirmation session unreadable, the first session's failures stand "
            f"({dropped[0] if dropped else confirm})"]
    picked = {k: judged[k] for k in selected_values(judged)}
    judged_again: Judged = {}
    node_again = None
    node_fails = confirmation.node_fails(judgement)
    again_cases = final_cases(again)
    if node_fails or load is not None:
        # the whole run again: a session of its own, with its own node line and spread
        judged_again, whole = judge_values(again, system)
        node_again = whole.node if whole is not None else None
    elif picked and judgement is not None:
        judged_again, _ = judge_values(again, system, selected_by=judgement, only=set(picked))
    conf = confirmation.decide(final, again_cases, picked, judged_again, fail_text)
    if node_fails:
        conf.judge_node(judgement.node, node_again, system)
    if load is not None:
        conf.judge_load(load, verdict.node_load.of_cases(list(again_cases.values())), system)
    judged = {**judged, **{k: judged_again[k] for k in conf.dismissed_values},
              **{k: confirmation.gross_confirmed(judged[k]) for k in conf.gross_confirmed}}
    return conf, judged, []


def foreign_baseline(system: str) -> str:
    """The system's reference file, when its provenance names another system."""
    from ..util import baseline_file
    path = baseline_file(system.split(":")[0])
    try:
        return baselines.store.foreign(baselines.store.load(path), system, str(path))
    except PlacementError:
        return ""


def mixed_versions(parts: list[Part], system: str) -> str:
    """The version of the system's reference file the run was judged against, or why two
    were (ReFrame's bounds from one, the verdict from another: a ``baseline record`` during
    the run); ``""`` when its cases read none."""
    from ..util import baseline_file
    path = baseline_file(system.split(":")[0])
    seen = sorted({str(tc.get("baseline_version")) for p in parts for r in p.data["runs"]
                   for tc in r.get("testcases", []) if tc.get("baseline_version")})
    now = baselines.store.version(path) or "none"
    if not seen:
        return ""
    if seen == [now]:
        return f"judged against {path} {now}: ReFrame's bounds and the verdict read this version"
    return (f"baseline changed during the run: ReFrame's bounds came from {path} "
            f"{', '.join(seen)}, the verdict from {now}: judged against two versions; run "
            "again with the file left as it is")


def baseline_gaps(system: str, judgement: baselines.samples.Judgement | None
                  ) -> tuple[list[str], list[str]]:
    """Why the run could not be judged against the system's baseline (its one-line
    refusal: damaged, cut short, values no measurement can be), and each value whose
    reference is in another unit than the check reports (not judged: never a pass)."""
    from ..util import baseline_file
    path = baseline_file(system.split(":")[0])
    refused = baselines.store.refusal(path)
    units = judgement.units if judgement is not None else {}
    return ([f"baseline refused: {refused}"] if refused else [],
            [f"{entry_name(e)}: the check reports {unit!r}, its reference in {path} is in "
             f"{was!r}: not judged; give the reference in {unit!r}, or record it again with "
             "--replace" for e, (was, unit) in sorted(units.items(), key=str)])


def undecided_lines(judged: Judged) -> list[str]:
    """Undecided values on their own line: how many, and the change this baseline detects.

    Undecided is neither a pass nor a failure: the baseline's sessions leave a
    change of that size possible; more sessions in the baseline narrow it.
    """
    und = [v for v in judged.values() if v.outcome == verdict.over_sessions.UNDECIDED]
    if not und:
        return []
    det = sorted(v.detectable for v in und)
    mid = det[len(det) // 2]
    sessions = sorted(v.sessions for v in und)[len(und) // 2]
    size = (f"beyond a change of x{1 + mid:.2f}" if mid < verdict.over_sessions.DETECTABLE_MAX
            else f"at no change below x{1 + verdict.over_sessions.DETECTABLE_MAX:.0f}")
    return [f"UNDECIDED {len(und)} value(s): against a baseline of {sessions} session(s) "
            f"the median value could be called alone {size}; "
            "record more sessions at other times with `placement baseline record --add`"]


#: ReFrame's words before the values of a performance failure, left out of the FAIL line
_PERF_PREFIX = "performance error: failed to meet reference(s):"


def fail_text(tc: dict) -> str:
    """The phase a case failed in and ReFrame's reason, on one line: a site sees at once which
    value missed its reference and by how much (``performance: gbps=82.7 GB/s, expected
    200.358 (l=100.179, u=inf)``) without opening ReFrame's failure report."""
    phase = tc.get("fail_phase") or "failed"
    # several references missed: ReFrame puts its words and each value on lines of their own
    lines = [ln.strip() for ln in str(tc.get("fail_reason") or "").splitlines() if ln.strip()]
    reason = " ".join(lines)
    if reason.startswith(_PERF_PREFIX):
        reason = "; ".join(lines[2:]) if lines[0] == "performance error:" else \
            reason[len(_PERF_PREFIX):].strip()
    if len(reason) > 200:
        reason = reason[:197] + "..."
    return f"{phase}: {reason}" if reason else phase


def resume_plan(unfinished: Path) -> tuple[list[Path], list[str], list[str]]:
    """Readable earlier parts, ReFrame's ``-x /HASH`` options for finished checks, dropped lines.

    A check with a finished case is excluded by its hash; one with an aborted case
    runs again, unless it hung in the time box (:func:`is_hung`): that one is excluded
    too, and the summary keeps its ``HUNG`` line. One a signal stopped runs again.
    """
    if not unfinished.is_file() or not unfinished.read_text().strip():
        raise PlacementError(f"nothing to resume: {unfinished} is missing or empty")
    good, dropped = readable(reading.run_report.run_list(unfinished))
    done, aborted = set(), set()
    signalled = by_signal(good)
    for key, tc in final_cases(good).items():
        if not tc.get("fixture") and tc.get("hashcode"):
            runs_again = tc.get("result") == "abort" and not is_hung(tc, key in signalled)
            (aborted if runs_again else done).add(tc["hashcode"])
    skip = [opt for h in sorted(done - aborted) for opt in ("-x", f"/{h}")]
    return [p.path for p in good], skip, dropped


def hung_cases(parts: list[Path]) -> list[dict[str, Any]]:
    """The cases of a run's parts that hung (:func:`is_hung`), as their last attempt left them."""
    good, _ = readable(parts)
    signalled = by_signal(good)
    return [tc for key, tc in final_cases(good).items() if is_hung(tc, key in signalled)]


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


def cmd_acceptance(args: argparse.Namespace) -> int:
    if args.action == "resume":
        good, skip, dropped = resume_plan(Path(args.paths[0]))
        for line in dropped:
            print(f"acceptance: {line}", file=sys.stderr)
        for p in good:
            print(f"part {p}")
        for opt in skip:
            print(f"skip {opt}")
        for tc in hung_cases(good):
            print(f"hung {tc.get('display_name')}")
        return 0
    parts = [Path(p) for p in args.paths]
    if args.action == "confirm":
        try:
            hashes, what = to_confirm(parts, args.system)
        except Exception:       # noqa: BLE001 - the summary names the cause, once
            hashes, what = [], ""
        if what:
            print(f"acceptance: confirmation session: {what}", file=sys.stderr)
        for h in hashes:
            print(h)
        return 0
    if args.action == "sessions":
        print(session_filter(parts))
        return 0
    try:
        lines, status = summary(parts, args.system, args.mode,
                                Path(args.compare) if args.compare else None,
                                args.max_slowdown, args.cut_short, args.note, args.not_compared,
                                Path(args.confirm) if args.confirm else None,
                                args.not_confirmed)
    except Exception as exc:    # noqa: BLE001 - any failure: still the run's one line
        lines, status = unjudged(parts, args.system, args.mode, args.cut_short,
                                 args.note + args.not_compared, exc)
    print("\n".join(lines))
    return status


def failure_cause(exc: BaseException) -> str:
    """One line for an exception the summary met: a user error's own message, else its
    type, message and the innermost place it was raised (``verdict.py:591``)."""
    if isinstance(exc, PlacementError):
        text = str(exc)
    else:
        where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        text = f"{type(exc).__name__}: {exc}" + "".join(
            f" ({Path(f.filename).name}:{f.lineno} {f.name})" for f in where)
    text = " ".join(text.split())
    return text if len(text) <= 400 else text[:397] + "..."


def unjudged(parts: list[Path], system: str, mode: str, cut_short: bool, notes: list[str],
             exc: BaseException) -> tuple[list[str], int]:
    """The ACCEPTANCE line of a run the summary could not judge (a baseline it cannot read,
    a value the verdict cannot take): ReFrame's own results counted, the cause named once.

    Never a PASS: ``INCOMPLETE`` (exit 4) when ReFrame passed every case, ``FAIL`` (1)
    when it failed one (no judgement turns a failure into a pass), ``UNFINISHED`` (3)
    when the time box cut the run."""
    cause = f"the summary could not judge the run: {failure_cause(exc)}"
    try:
        good, _ = readable(parts)
        signalled = by_signal(good)
        kinds = [classify(tc, cut_short, key in signalled)
                 for key, tc in final_cases(good).items()]
        failed = sum(k in ("fail", "unfinished", "hung") for k in kinds)
        counts = (f"{kinds.count('pass')} passed, {failed} failed "
                  f"report={good[-1].path if good else '(none readable)'}")
    except Exception as again:   # noqa: BLE001 - the reports themselves: say so too
        failed, counts = 0, f"results not counted ({failure_cause(again)})"
    outcome = "UNFINISHED" if cut_short else "FAIL" if failed else "INCOMPLETE"
    why = "; ".join([*notes, cause])
    return ([f"ACCEPTANCE {system} {mode}: {outcome} {counts} ({why})"],
            {"UNFINISHED": 3, "FAIL": 1, "INCOMPLETE": 4}[outcome])


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:      # also NaN
        raise argparse.ArgumentTypeError(f"expected a percentage of 0 or more, got {text!r}")
    return value


def register(sub) -> None:
    p = sub.add_parser("acceptance", help="conclusions of an acceptance run (for acceptance.sh)")
    p.add_argument("action", choices=("summary", "resume", "sessions", "confirm"),
                   help="summary: FAIL/SKIP lines and the ACCEPTANCE line; resume: the "
                        "readable parts and finished checks of an unfinished run list; "
                        "sessions: ReFrame's filter for the parts' sessions; confirm: the "
                        "hashes of the checks a confirmation session runs, one a line")
    p.add_argument("paths", nargs="+", help="run reports (resume: the unfinished .run list)")
    p.add_argument("--system", default="unknown")
    p.add_argument("--mode", default="acceptance")
    p.add_argument("--compare", help="ReFrame --performance-compare CSV against the previous run")
    p.add_argument("--max-slowdown", type=_percent, default=10.0,
                   help="percent worse than the previous run that is a regression (default 10)")
    p.add_argument("--cut-short", action="store_true", help="the time box ended the run")
    p.add_argument("--note", action="append", default=[], help="added to the summary line")
    p.add_argument("--not-compared", action="append", default=[], metavar="WHY",
                   help="a comparison with the previous run that could not be made: named in "
                        "the summary line, which is then not a plain PASS")
    p.add_argument("--confirm", metavar="REPORT",
                   help="run report of the confirmation session: a first-session failure "
                        "or regression stands only if it shows there too")
    p.add_argument("--not-confirmed", action="append", default=[], metavar="WHY",
                   help="a confirmation that was due and did not run: its failures stand")
    p.set_defaults(func=cmd_acceptance)
