"""The run's values judged against the system's baseline, and the regression rule.

The regression rule is :func:`find_regressions`, one function. A value whose
baseline keeps its sessions' runs (``_samples``) is judged by the verdict
(:mod:`placement.judgement.verdict.over_sessions`: each session one draw, a spread borrowed from the
run's other values, the node's common shift, Benjamini-Hochberg over the
run): ``regressed`` fails, ``improved`` and ``unchanged`` pass, ``undecided``
is counted on its own with what this baseline can detect (:func:`undecided_lines`). A case
ReFrame failed against its reference fails whatever the verdict says: no verdict turns
a failure into a pass (the references ``record`` writes are one-sided and as
wide as the sessions' spread, so they fail only what is clearly worse). The comparison with
the previous run is information only (:mod:`.previous_run`), and extremes (``max_time``,
``min_time``) are judged nowhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..judgement import baselines, reading, verdict
from ..util import PlacementError
from . import confirmation
from .parts import Part
from .record import Finding


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

    def finding(self, judged: verdict.over_sessions.Verdict | None = None) -> Finding:
        """The line with the value it names and, when the verdict judged it, its numbers."""
        data = {"case": self.case, "sysenv": self.sysenv, "var": self.var, "why": self.why,
                "against": self.against}
        if judged is not None:
            data.update(ratio=judged.ratio, interval=list(judged.ci), sessions=judged.sessions)
        return Finding("REGRESSION", self.line(), self.sysenv.split("+")[0], data=data)


#: (display name, system:partition+environ, perfvar) -> the value's verdict
Judged = dict[tuple[str, str, str], verdict.over_sessions.Verdict]


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


def undecided_lines(judged: Judged) -> list[str]:
    """The UNDECIDED line of :func:`undecided_finding` (none when no value is undecided)."""
    return [f.line for f in undecided_finding(judged)]


def undecided_finding(judged: Judged) -> list[Finding]:
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
    size = detectable_text(mid)
    return [Finding("UNDECIDED",
                    f"UNDECIDED {len(und)} value(s): against a baseline of {sessions} session(s) "
                    f"the median value could be called alone {size}; "
                    "record more sessions at other times with `placement baseline record --add`",
                    data={"count": len(und), "sessions": sessions, "detectable": mid,
                          "size": size})]


def detectable_text(detectable: float) -> str:
    """The change a baseline could call, in words: ``beyond a change of x1.23``."""
    if detectable < verdict.over_sessions.DETECTABLE_MAX:
        return f"beyond a change of x{1 + detectable:.2f}"
    return f"at no change below x{1 + verdict.over_sessions.DETECTABLE_MAX:.0f}"


def selected_values(judged: Judged) -> set[confirmation.ValueKey]:
    """The values a confirmation session tests (:func:`.confirmation.selected`)."""
    return {k for k, v in judged.items() if confirmation.selected(v)}


def gross_values(judged: Judged) -> set[confirmation.ValueKey]:
    """Values the first session found grossly worse, which a second session decides
    (:data:`placement.judgement.verdict.over_sessions.GROSS_EFFECT`)."""
    return {k for k, v in judged.items()
            if v.gross is not None and v.outcome == verdict.over_sessions.UNDECIDED}
