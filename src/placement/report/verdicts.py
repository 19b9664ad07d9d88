"""The report's verdicts: each case against its baseline's stored runs, and steps in history.

The run is judged with :mod:`placement.judgement.verdict` against ``_samples`` of the
system's reference file (Benjamini-Hochberg over the run); entries without
stored runs are counted as *interval only* (ReFrame's interval check is all
they get). History comes from ReFrame's results storage: every stored session
of the same system up to this run (``reframe --describe-stored-sessions``, one
call), and per variable the session where a step change started
(:mod:`placement.judgement.changepoints`).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..judgement import (Case, RunReport, baseline_samples, baselines, changepoints,
                         entry_name, node_load, verdict)
from ..util import PlacementError
from .previous_run import stored_sessions
from .tables import Numbers, Table


def _baseline(system: str) -> tuple[Path, dict]:
    from ..util import baseline_file
    path = baseline_file(system)
    return path, baselines.load(path)


@dataclass(frozen=True)
class SystemJudgement:
    """One system's values judged, with the stored and new runs they were judged on."""

    system: str
    judgement: baseline_samples.Judgement
    stored: dict          # entry -> baseline_samples.Samples (the baseline's sessions)
    new: dict             # entry -> baseline_samples.Samples (this run's launches)


def judgements(cases: list[Case]) -> list[SystemJudgement]:
    """Each system's values judged against its baseline's sessions (one judgement each:
    a node's shift and a borrowed spread belong to one system)."""
    out = []
    for system in sorted({c.system for c in cases}):
        path, old = _baseline(system)
        if not old:
            continue
        try:
            new = baselines.from_run(RunReport(Path("run"), {}, cases), system)
        except PlacementError:
            continue
        out.append(SystemJudgement(system, baseline_samples.judge_run(old, new, str(path)),
                                   baseline_samples.entries(old, str(path)),
                                   baseline_samples.entries(new, "run")))
    return out


#: regressed values drawn in the lead section (the table lists them all)
MAX_FIGURES = 12


#: the word of an acceptance summary's last line (``ACCEPTANCE generic quick: PASS ...``)
_ACCEPTANCE = re.compile(r"^ACCEPTANCE \S+ \S+: ([A-Z]+) ")


def lead_section(cases: list[Case], judged: list[SystemJudgement], out: Path,
                 summary: Sequence[str] = ()):
    """The run's answer first: failed cases, the node's line, the regressed values each
    drawn against the baseline's sessions, and what stayed undecided.

    ``summary``: the lines ``placement acceptance summary`` printed for this run. They
    are the answer (a confirmation session may have dismissed what the first session
    failed), so the section opens with them and words the rest as the first session's.
    """
    from . import plots
    from .document import Section
    failed = [c for c in cases if c.result == "fail"]
    ran = [c for c in cases if c.result in ("pass", "fail")]
    verdicts = [j.verdict for sj in judged for j in sj.judgement if j.verdict]
    counts = verdict.counts(verdicts)
    node_slow = [sj for sj in judged
                 if sj.judgement.node is not None and sj.judgement.node.fails]
    loads = {system: node_load.of_cases([c.raw for c in cases if c.system == system])
             for system in sorted({c.system for c in cases})}
    loaded = {system: load for system, load in loads.items() if load is not None and load.loaded}
    bad = failed or counts[verdict.REGRESSED] or node_slow or loaded
    word = "FAIL" if bad else ("PASS" if ran else "NOTHING RAN")
    facts = (f"{len(ran) - len(failed)} case(s) passed, {len(failed)} failed"
             + (f"; verdict: {counts[verdict.REGRESSED]} regressed, "
               f"{counts[verdict.IMPROVED]} improved, {counts[verdict.UNCHANGED]} unchanged, "
               f"{counts[verdict.UNDECIDED]} undecided of {len(verdicts)} values"
               if verdicts else "; no baseline with stored sessions: nothing judged") + ".")
    accept = next((m for ln in reversed(summary) if (m := _ACCEPTANCE.match(ln))), None)
    if accept is None:
        lines = [f"**{word}**: {facts}"]
    else:
        lines = [f"**{accept.group(1)}**: the acceptance run's answer, its confirmation "
                 "session included (its summary, as printed, in the table below).",
                 "First session (build fixtures not counted, the acceptance line counts "
                 f"them): {facts}"]
    for sj in judged:
        node = sj.judgement.node
        if node is not None and node.flagged:
            lines.append(f"**Node {sj.system}**: {node.line()}.")
    for system, load in loaded.items():
        lines.append(f"**Node {system}**: {load.line()}.")
    for c in failed[:20]:
        lines.append(f"Failed{' in the first session' if accept else ''}: {c.label()} "
                     f"({c.fail_phase}).")
    sec = Section("verdict", "Verdict", "\n\n".join(lines))
    if accept is not None:
        t = Table("acceptance", "The acceptance summary", ["line"],
                  note="NODE, FAIL and regressed lines fail the run; UNCONFIRMED: a failure of "
                       "the first session that its confirmation session did not show.")
        for ln in summary:
            t.add([ln], "bad" if ln.startswith(("FAIL", "NODE")) else "")
        sec.tables.append(t)
    regressed = "Regressed in the first session" if accept is not None else "Regressed"
    # a gross change is undecided in one session: a confirmation session decides it
    gross = "Grossly worse in the first session (a second session decides)"
    drawn = 0
    for sj in judged:
        for j in sj.judgement:
            v = j.verdict
            if v is None or (v.outcome != verdict.REGRESSED and v.gross is None):
                continue
            name = entry_name(j.entry)
            sec.text += (f"\n\n{regressed if v.outcome == verdict.REGRESSED else gross}: "
                         f"{name}: {v.text()}")
            if drawn < MAX_FIGURES and plots.available() and j.entry in sj.stored:
                fig = plots.sessions_strip(
                    out, f"regressed-{drawn + 1}.png", name,
                    sj.stored[j.entry].session_runs, sj.new[j.entry].runs)
                sec.images.append((fig, f"{name}: each baseline session's launches and the "
                                        "new session's (red); bars are medians"))
                drawn += 1
    und = [v for v in verdicts if v.outcome == verdict.UNDECIDED]
    if und:
        det = sorted(v.detectable for v in und)[len(und) // 2]
        size = (f"beyond a change of x{1 + det:.2f}" if det < verdict.DETECTABLE_MAX
                else f"at no change below x{1 + verdict.DETECTABLE_MAX:.0f}")
        sec.text += (f"\n\nUndecided: {len(und)} value(s); against these baselines the median "
                     f"value could be called alone {size}. Record "
                     "more sessions at other times (`placement baseline record --add`).")
    return sec


def verdict_table(judged: list[SystemJudgement],
                  numbers: Numbers) -> tuple[Table | None, str]:
    """Verdicts of the run's judged variables, and the summary sentence."""
    rows = [r for sj in judged for r in sj.judgement]
    if not rows:
        return None, ""
    text = (f"Verdict against the baselines' sessions (each session one draw, the session "
            f"spread moderated over the run's values, the node's common shift removed, "
            f"Benjamini-Hochberg at {verdict.ALPHA:g}, minimum effect "
            f"{verdict.MIN_EFFECT:.0%}): {baseline_samples.summary(rows)}.")
    for sj in judged:
        for line in baseline_samples.context_lines(sj.judgement):
            text += f" {sj.system}: {line}."
    t = Table("verdicts", "Verdict per value against the baseline's sessions",
              ["test", "case", "perfvar", "verdict", "median change", "node / beyond it",
               "interval (90%)", "p", "q (BH)", "runs new/baseline (sessions)",
               "detectable", "modes"],
              note="regressed/improved: q <= 0.05 and moved by at least the minimum effect "
                   "beyond the node's common shift (or with it, on a node flagged slower); "
                   "unchanged: the interval lies within it; undecided: neither, and "
                   "'detectable' is the smallest change this baseline could call; gross: "
                   f"at least {verdict.GROSS_EFFECT:.0%} worse than every baseline session "
                   f"with launches within {verdict.GROSS_LAUNCHES:.0%}, which a second "
                   "session decides. Interval "
                   "only: the baseline file has no stored runs for the entry.")
    order = {verdict.REGRESSED: 0, verdict.UNDECIDED: 1, verdict.IMPROVED: 2,
             verdict.UNCHANGED: 3}
    for r in sorted(rows, key=lambda r: (order.get(r.verdict.outcome, 4) if r.verdict else 5,
                                         r.entry[0], tuple(map(str, r.entry[1])), r.entry[2])):
        test, keys, var = r.entry
        case = ",".join(map(str, keys))
        v = r.verdict
        if v is None:
            t.add([test, case, var, "interval only"] + [""] * 8)
            continue
        why = v.why or (f"gross {v.gross:+.0%}" if v.gross is not None else "")
        t.add([test, case, var, (v.outcome + f" ({why})" if why else v.outcome),
               f"{v.ratio - 1:+.1%}", f"{v.node_ratio - 1:+.1%} / {v.own_ratio - 1:+.1%}",
               f"{v.ci[0] - 1:+.1%} .. {v.ci[1] - 1:+.1%}", f"{v.p:.3g}", f"{v.q:.3g}",
               f"{v.n_new}/{v.n_base} ({v.sessions})",
               (f"x{1 + v.detectable:.2f}" if v.detectable < verdict.DETECTABLE_MAX
                else f"> x{1 + verdict.DETECTABLE_MAX:.0f}")
               if v.outcome == verdict.UNDECIDED else "",
               v.modes.text() if v.modes else ""],
              "bad" if v.outcome == verdict.REGRESSED else "")
        numbers.add("verdicts", "verdicts", f"{test} {case}", var, "median change %",
                    (v.ratio - 1) * 100, "%")
        numbers.add("verdicts", "verdicts", f"{test} {case}", var, "q", v.q)
    return t, text


def history_table(sessions: list[RunReport], numbers: Numbers) -> tuple[Table | None, str]:
    """Step changes over the stored sessions, per judged variable."""
    if len(sessions) < 2 * changepoints.MIN_SESSIONS:
        return None, (f"History: {len(sessions)} stored session(s) of this system; a step "
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
              ["test", "case", "perfvar", "first session after the step", "step"],
              note="The single most likely step in the session medians (the split removing "
                   "the most squared error), kept when a permutation test of the whole "
                   f"procedure ({changepoints.PERMUTATIONS} shuffles of the sessions) gives "
                   f"p <= {changepoints.ALPHA} and the median moved by at least "
                   f"{verdict.MIN_EFFECT:.0%}: at most 1 in 100 series without a change "
                   "shows a step.")
    for key in sorted(series, key=lambda k: (k[1], k[2], k[3])):
        got = series[key]
        ids = [u for u in uuids if u in got]
        s = changepoints.step(ids, [got[u] for u in ids], better[key])
        if s:
            t.add([key[1], key[2], key[3], s.session[:8], s.text()],
                  "bad" if s.outcome == verdict.REGRESSED else "")
            numbers.add("history", "history", f"{key[1]} {key[2]}", key[3],
                        "step change %", (s.ratio - 1) * 100, "%")
    text = (f"History: {len(sessions)} stored sessions of this system, "
            f"{len(t.rows)} step change(s) found.")
    return (t if t.rows else None), text


def history(report: RunReport, root: Path, numbers: Numbers) -> tuple[Table | None, str]:
    """:func:`history_table` over ReFrame's stored sessions; a failure is a note."""
    try:
        return history_table(stored_sessions(report, root), numbers)
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError,
            PlacementError) as exc:
        return None, f"History: ReFrame's stored sessions could not be read ({exc})."
