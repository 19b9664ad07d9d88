"""The report's verdicts: each case against its baseline's stored runs, and steps in history.

The run is judged with :mod:`placement.verdict` against ``_samples`` of the
system's reference file (Benjamini-Hochberg over the run); entries without
stored runs are counted as *interval only* (ReFrame's interval check is all
they get). History comes from ReFrame's results storage: every stored session
of the same host up to this run (``reframe --describe-stored-sessions``, one
call), and per variable the session where a step change started
(:mod:`placement.changepoints`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .. import baseline_samples, baselines, changepoints, runreport, verdict
from ..errors import PlacementError
from ..runreport import Case, RunReport
from .previous_run import reframe_cmd, run_reframe
from .tables import Numbers, Table


def _baseline(system: str) -> tuple[Path, dict]:
    from ..testlib.paths import baseline_file
    path = baseline_file(system)
    return path, baselines.load(path)


def verdict_table(cases: list[Case], numbers: Numbers) -> tuple[Table | None, str]:
    """Verdicts of the run's judged variables, and the summary sentence."""
    rows: list[baseline_samples.Judged] = []
    for system in sorted({c.system for c in cases}):
        path, old = _baseline(system)
        if not old:
            continue
        try:
            new = baselines.from_run(RunReport(Path("run"), {}, cases), system)
        except PlacementError:
            continue
        rows += baseline_samples.judge_run(old, new, str(path))
    if not rows:
        return None, ""
    # one correction over the whole run, every system together
    judged = [r for r in rows if r.verdict]
    fixed = verdict.correct([r.verdict for r in judged])
    rows = [baseline_samples.Judged(r.entry, v) for r, v in zip(judged, fixed)] + \
        [r for r in rows if not r.verdict]
    text = (f"Verdict against the baselines' stored runs (min of Kolmogorov-Smirnov and "
            f"Mann-Whitney U, minimum effect {verdict.MIN_EFFECT:.0%}, Benjamini-Hochberg over "
            f"the run's {len(judged)} values; with {verdict.MIN_SESSIONS} or more baseline "
            f"sessions also the new session's median among the baseline's session medians): "
            f"{baseline_samples.summary(rows)}.")
    note = baseline_samples.sessions_note(fixed)
    if note:
        text += f" Note: {note}."
    t = Table("verdicts", "Verdict per case against the baseline's runs",
              ["test", "case", "perfvar", "verdict", "median change", "interval (90%)", "p",
               "q (BH)", "runs new/baseline (sessions)", "modes"],
              note="regressed/improved: q <= 0.01 and the median moved by at least the minimum "
                   "effect; unchanged: the interval of the median ratio lies within it; "
                   "undecided: neither (more runs would tell). Interval only: the baseline "
                   "file has no stored runs for the entry.")
    order = {verdict.REGRESSED: 0, verdict.UNDECIDED: 1, verdict.IMPROVED: 2,
             verdict.UNCHANGED: 3}
    for r in sorted(rows, key=lambda r: (order.get(r.verdict.outcome, 4) if r.verdict else 5,
                                         r.entry[0], tuple(map(str, r.entry[1])), r.entry[2])):
        test, keys, var = r.entry
        case = ",".join(map(str, keys))
        v = r.verdict
        if v is None:
            t.add([test, case, var, "interval only", "", "", "", "", "", ""])
            continue
        t.add([test, case, var, v.outcome, f"{v.ratio - 1:+.1%}",
               f"{v.ci[0] - 1:+.1%} .. {v.ci[1] - 1:+.1%}", f"{v.p:.3g}", f"{v.q:.3g}",
               f"{v.n_new}/{v.n_base} ({v.sessions})", v.modes.text() if v.modes else ""],
              "bad" if v.outcome == verdict.REGRESSED else "")
        numbers.add("verdicts", "verdicts", f"{test} {case}", var, "median change %",
                    (v.ratio - 1) * 100, "%")
        numbers.add("verdicts", "verdicts", f"{test} {case}", var, "q", v.q)
    return t, text


def stored_sessions(report: RunReport, root: Path) -> list[RunReport]:
    """Every stored session of this host up to this run, oldest first (one ReFrame call)."""
    base = reframe_cmd(root)
    end = report.session.get("time_end") or report.session.get("time_start")
    if not base or not end:
        return []
    query = f"19700101T0000+0000:{end}"
    if report.session.get("hostname"):
        query += f"?hostname=={report.session['hostname']!r}"
    data = json.loads(run_reframe([a for a in base if a != "--table-format=csv"]
                           + [f"--describe-stored-sessions={query}"], root) or "[]")
    out = [runreport.from_data(d, Path(f"stored session {d['session_info'].get('uuid')}"))
           for d in data if isinstance(d, dict) and "session_info" in d]
    return sorted(out, key=lambda r: r.session.get("time_start", ""))


def history_table(sessions: list[RunReport], numbers: Numbers) -> tuple[Table | None, str]:
    """Step changes over the stored sessions, per judged variable."""
    if len(sessions) < 2 * changepoints.MIN_SESSIONS:
        return None, (f"History: {len(sessions)} stored session(s) of this host; a step "
                      f"change needs at least {2 * changepoints.MIN_SESSIONS}.")
    series: dict[tuple, dict[str, list[float]]] = {}
    better: dict[tuple, bool] = {}
    for r in sessions:
        for c in r.cases:
            for var in c.primary_vars():
                pv = c.perf[var]
                hib = baseline_samples.higher_is_better(var, pv.unit)
                if hib is None or not c.launches.get(var):
                    continue
                series.setdefault((c.key, c.test, c.label(), var), {})[r.uuid] = c.launches[var]
                better[(c.key, c.test, c.label(), var)] = hib
    uuids = [r.uuid for r in sessions]
    t = Table("history", "Step changes over the stored sessions",
              ["test", "case", "perfvar", "first session after the step", "verdict"],
              note="The single most likely step in the session medians (ruptures, dynamic "
                   "programming), kept when the runs after it differ from the runs before "
                   "(the same verdict, minimum effect 3%), q <= 0.01 after Benjamini-Hochberg "
                   "over every value's candidate step.")
    found: list[tuple[tuple, changepoints.Step]] = []
    for key in sorted(series, key=lambda k: (k[1], k[2], k[3])):
        got = series[key]
        ids = [u for u in uuids if u in got]
        s = changepoints.step(ids, [got[u] for u in ids], better[key], candidates=True)
        if s:
            found.append((key, s))
    # one correction over every value's candidate step: many series, few false steps
    for (key, s), v in zip(found, verdict.correct([s.verdict for _, s in found])):
        if v.outcome in (verdict.REGRESSED, verdict.IMPROVED):
            s = changepoints.Step(s.index, s.session, v)
            t.add([key[1], key[2], key[3], s.session[:8], s.verdict.text()],
                  "bad" if s.verdict.outcome == verdict.REGRESSED else "")
            numbers.add("history", "history", f"{key[1]} {key[2]}", key[3],
                        "step change %", (s.verdict.ratio - 1) * 100, "%")
    text = (f"History: {len(sessions)} stored sessions of this host, "
            f"{len(t.rows)} step change(s) found.")
    return (t if t.rows else None), text


def history(report: RunReport, root: Path, numbers: Numbers) -> tuple[Table | None, str]:
    """:func:`history_table` over ReFrame's stored sessions; a failure is a note."""
    try:
        return history_table(stored_sessions(report, root), numbers)
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError,
            PlacementError) as exc:
        return None, f"History: ReFrame's stored sessions could not be read ({exc})."
