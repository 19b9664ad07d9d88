"""The report's verdicts: each case against its baseline's stored runs, and steps in history.

The run is judged with :mod:`placement.judgement.verdict.over_sessions` against ``_samples`` of the
system's reference file (Benjamini-Hochberg over the run); entries without
stored runs are counted as *interval only* (ReFrame's interval check is all
they get). History: over the stored sessions of the same system up to this run,
as :func:`placement.report.history_page.read` takes them from ReFrame's results
storage, per variable the session where a step change started
(:mod:`placement.judgement.verdict.changepoints`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..judgement import Case, RunReport, baselines, reading, verdict
from ..util import PlacementError
from .escape import markdown as md
from .tables import Numbers, Table


def _baseline(system: str) -> tuple[Path, dict]:
    from ..util import baseline_file
    path = baseline_file(system)
    return path, baselines.store.load(path)


@dataclass(frozen=True)
class SystemJudgement:
    """One system's values judged, with the stored and new runs they were judged on."""

    system: str
    judgement: baselines.samples.Judgement
    stored: dict          # entry -> baselines.samples.Samples (the baseline's sessions)
    new: dict             # entry -> baselines.samples.Samples (this run's launches)
    cases_of: dict = field(default_factory=dict)   # entry -> the run's Case
    #: what the verdict leaned on, as the run's record says (None: this judgement's own)
    context: list[str] | None = None


def judgements(cases: list[Case], answer: Any = None) -> list[SystemJudgement]:
    """Each system's values judged against its baseline's sessions (one judgement each:
    a node's shift and a borrowed spread belong to one system). A system the run's
    verdict record (``answer``) judged is read from it, not judged again
    (:func:`recorded_verdicts`): the tables say what the summary said."""
    out = []
    for system in sorted({c.system for c in cases}):
        path, old = _baseline(system)
        if not old:
            continue
        cases_of: dict = {}
        try:
            new = baselines.store.from_run(RunReport(Path("run"), {}, cases), system, cases_of)
        except PlacementError:
            continue
        said = recorded_verdicts(answer, system)
        if said is None:
            judged = baselines.samples.judge_entries(old, new, str(path))
        else:
            judged = baselines.samples.from_verdicts(
                old, new, str(path), lambda e: said.get(value_key(cases_of[e], e)))
        out.append(SystemJudgement(system, judged, judged.stored, judged.fresh, cases_of,
                                   None if said is None else answer.verdicts.get("context", [])))
    return out


def value_key(c: Case, entry: tuple) -> tuple[str, str, str]:
    """How the acceptance summary and its record name a value: the case's display name,
    ``system:partition+environ`` and the variable."""
    return (c.raw.get("display_name", c.test), c.sysenv, entry[2])


def recorded_verdicts(answer: Any, system: str
                      ) -> dict[tuple[str, str, str], verdict.over_sessions.Verdict] | None:
    """The verdicts the run's record keeps for ``system``'s values by :func:`value_key`;
    None when it keeps none (no record, one of schema 1, another system's, nothing
    judged), and the report judges the values itself."""
    said = getattr(answer, "verdicts", None) or {}
    if not said.get("values") or str(said.get("system", "")).split(":")[0] != system:
        return None
    try:
        return {(v["case"], v["sysenv"], v["var"]): verdict.as_data.from_data(v["data"])
                for v in said["values"]}
    except (KeyError, TypeError, ValueError) as exc:
        raise PlacementError(f"verdict record: a value's verdict is not one ({exc!r}); "
                             "judge the run again without --record") from None


#: the outcomes that send a reader to a value's figure (unchanged: nothing to see)
_LOOK = (verdict.over_sessions.REGRESSED, verdict.over_sessions.IMPROVED, verdict.over_sessions.UNDECIDED)


def needs_look(cases: list[Case], judged: list[SystemJudgement],
               odd_nodes: Container[tuple[str, str]] = ()) -> set[tuple]:
    """The cases (by :attr:`Case.key`) whose figures a reader needs first: those that
    failed, those on a node its peers set apart (``odd_nodes``: ``(SYSTEM:PART, node)``),
    and those with a value that regressed, improved, stayed undecided or got grossly
    worse. Sections that cannot draw every item draw these first."""
    keys = {c.key for c in cases if c.result == "fail"
            or (f"{c.system}:{c.partition}", c.node) in odd_nodes}
    for sj in judged:
        for j in sj.judgement:
            v = j.verdict
            c = sj.cases_of.get(j.entry)
            if c is not None and v is not None and (v.outcome in _LOOK or v.gross is not None):
                keys.add(c.key)
    return keys


def changes_figure(judged: list[SystemJudgement], out: Path) -> tuple[str, str] | None:
    """One figure of every judged value's change, stacked by verdict: (file, caption),
    None when nothing was judged or matplotlib is missing."""
    from . import plots
    from .lead import worse
    pts = [(100 * (math.exp(worse(j.verdict)) - 1), j.verdict.outcome)
           for sj in judged for j in sj.judgement if j.verdict is not None]
    if not pts or not plots.available():
        return None
    name = plots.changes(out, "verdict-changes.png", pts,
                         f"{len(pts)} values against their baselines' sessions")
    return name, (f"every judged value ({len(pts)}): how much worse its median got against "
                  "the baseline's sessions, stacked by verdict (log count)")


def verdict_table(judged: list[SystemJudgement],
                  numbers: Numbers) -> tuple[Table | None, str]:
    """Verdicts of the run's judged variables, and the summary sentence."""
    rows = [r for sj in judged for r in sj.judgement]
    if not rows:
        return None, ""
    text = (f"Verdict against the baselines' sessions (each session one draw, the session "
            f"spread moderated over the run's values, the node's common shift removed, "
            f"Benjamini-Hochberg at {verdict.over_sessions.ALPHA:g}, minimum effect "
            f"{verdict.over_sessions.MIN_EFFECT:.0%}): {baselines.samples.summary(rows)}.")
    for sj in judged:
        context = sj.context if sj.context is not None else \
            baselines.samples.context_lines(sj.judgement)
        for line in context:
            text += f" {md(sj.system)}: {md(line)}."
    t = Table("verdicts", "Verdict per value against the baseline's sessions",
              ["test", "case", "perfvar", "verdict", "median change", "node / beyond it",
               "interval (90%)", "p", "q (BH)", "runs new/baseline (sessions)",
               "detectable", "modes"],
              note="regressed/improved: q <= 0.05 and moved by at least the minimum effect "
                   "beyond the node's common shift (or with it, on a node flagged slower); "
                   "unchanged: the interval lies within it; undecided: neither, and "
                   "'detectable' is the smallest change this baseline could call; gross: "
                   f"at least {verdict.over_sessions.GROSS_EFFECT:.0%} worse than every baseline session "
                   f"with launches within {verdict.over_sessions.GROSS_LAUNCHES:.0%}, which a second "
                   "session decides. Interval "
                   "only: the baseline file has no stored runs for the entry.")
    order = {verdict.over_sessions.REGRESSED: 0, verdict.over_sessions.UNDECIDED: 1, verdict.over_sessions.IMPROVED: 2,
             verdict.over_sessions.UNCHANGED: 3}
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
               (f"x{1 + v.detectable:.2f}" if v.detectable < verdict.over_sessions.DETECTABLE_MAX
                else f"> x{1 + verdict.over_sessions.DETECTABLE_MAX:.0f}")
               if v.outcome == verdict.over_sessions.UNDECIDED else "",
               v.modes.text() if v.modes else ""],
              "bad" if v.outcome == verdict.over_sessions.REGRESSED else "")
        numbers.add("verdicts", "verdicts", f"{test} {case}", var, "median change %",
                    (v.ratio - 1) * 100, "%")
        numbers.add("verdicts", "verdicts", f"{test} {case}", var, "q", v.q)
    return t, text


def session_medians(r: RunReport) -> dict[tuple, tuple[float, bool]]:
    """Each judged variable of a session's cases with launches: ``(case key, test, case,
    var)`` -> (the launches' median, higher is better); what :class:`StepSeries` keeps of
    the session."""
    out = {}
    for c in r.cases:
        label = None
        for var in c.primary_vars():
            hib = reading.direction.higher_is_better(var, c.perf[var].unit)
            runs = c.launches.get(var)
            if hib is None or not runs:
                continue
            label = c.label() if label is None else label     # once a case
            out[(c.key, c.test, label, var)] = (_median(runs), hib)
    return out


def _median(runs: list[float]) -> float:
    """numpy's median of the launches (the step search's), at Python's cost where every
    launch is finite: both take the middle value, or the two middle ones' sum halved."""
    if all(map(math.isfinite, runs)):
        return statistics.median(runs)
    return float(np.median(runs))


class StepSeries:
    """Every stored session's medians per judged variable, in the sessions' order: the
    history's step table is searched over them (a session held whole is a quarter of a
    megabyte; its medians are a few hundred bytes)."""

    def __init__(self) -> None:
        self.uuids: list[str] = []
        self.series: dict[tuple, dict[str, float]] = {}
        self.better: dict[tuple, bool] = {}

    def add(self, uuid: str, medians: dict[tuple, tuple[float, bool]]) -> None:
        """The next (later) session's :func:`session_medians`."""
        self.uuids.append(uuid)
        for key, (median, hib) in medians.items():
            self.series.setdefault(key, {})[uuid] = median
            self.better[key] = hib

    def table(self, numbers: Numbers) -> tuple[Table | None, str]:
        """Step changes over the sessions, per judged variable."""
        if len(self.uuids) < 2 * verdict.changepoints.MIN_SESSIONS:
            return None, (f"History: {len(self.uuids)} stored session(s) of this system; a "
                          f"step change needs at least {2 * verdict.changepoints.MIN_SESSIONS}.")
        t = Table("history", "Step changes over the stored sessions",
                  ["test", "case", "perfvar", "first session after the step", "step"],
                  note="The single most likely step in the session medians (the split "
                       "removing the most squared error), kept when a permutation test of the "
                       f"whole procedure ({verdict.changepoints.PERMUTATIONS} shuffles of the sessions) "
                       f"gives p <= {verdict.changepoints.ALPHA} and the median moved by at least "
                       f"{verdict.over_sessions.MIN_EFFECT:.0%}: at most 1 in 100 series without a change "
                       "shows a step.")
        keys = sorted(self.series, key=lambda k: (k[1], k[2], k[3]))
        series = []
        for key in keys:
            got = self.series[key]
            ids = [u for u in self.uuids if u in got]
            series.append((ids, [got[u] for u in ids], self.better[key]))
        # searched together: values over the same sessions share their shuffles
        for key, s in zip(keys, verdict.changepoints.steps_of_medians(series)):
            if s:
                t.add([key[1], key[2], key[3], s.session[:8], s.text()],
                      "bad" if s.outcome == verdict.over_sessions.REGRESSED else "")
                numbers.add("history", "history", f"{key[1]} {key[2]}", key[3],
                            "step change %", (s.ratio - 1) * 100, "%")
        text = (f"History: {len(self.uuids)} stored sessions of this system, "
                f"{len(t.rows)} step change(s) found.")
        return (t if t.rows else None), text


def history_table(sessions: list[RunReport], numbers: Numbers) -> tuple[Table | None, str]:
    """Step changes over the stored sessions, per judged variable."""
    series = StepSeries()
    for r in sessions:
        series.add(r.uuid, session_medians(r))
    return series.table(numbers)
