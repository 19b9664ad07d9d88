"""The lead of a report: the run's answer at a glance, before any study's table.

A site engineer opens a report to learn whether the run passed and, if not, what to
look at first. So every report opens with one status banner (the run's verdict record's
word, :mod:`placement.acceptance.record`, when the run was judged), the node's lines, and one table of what failed
or regressed, worst first, each row linking to the strip plot that shows it against
the baseline's sessions; what stayed undecided is one line. Strings from results and
baselines land in Markdown here and are escaped (:func:`.escape.markdown`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..acceptance import VerdictRecord, case_kinds, peer_lines, record, regressions
from ..judgement import Case, entry_name, verdict
from .document import Section
from .escape import markdown as md
from .tables import Table

#: regressed values drawn as strip plots (worst first; the table lists them all)
MAX_FIGURES = 24
#: failed cases listed in the table (the rest are counted)
MAX_FAILED = 40


@dataclass(frozen=True)
class Row:
    """One line of the lead table: a failed case or a regressed (or gross) value."""

    what: str
    value: str
    change: str
    beyond: str
    interval: str
    confirmed: str
    #: how much worse, for the order: a log ratio (a failure without a number: inf)
    worse: float
    #: the strip plot's file, "" when none was drawn
    evidence: str = ""


def status_word(failed: bool, ran: bool, answer: VerdictRecord | None) -> str:
    """The banner's word: the verdict record's (PASS, FAIL, INCOMPLETE, UNFINISHED) when the
    run was judged, else this run's own answer."""
    if answer is not None:
        return answer.outcome
    return "FAIL" if failed else ("PASS" if ran else "NOTHING RAN")


def confirmation(answer: VerdictRecord | None, case: str, sysenv: str, var: str = "") -> str:
    """Whether a confirmation session showed again what the first session failed: the
    record's confirmation names each case (``case`` @ ``sysenv``) and value (``var``) it
    did not run again (``not_run``: it stands, unconfirmed), its UNCONFIRMED findings each
    it ran and did not show again."""
    if answer is None or not answer.confirmation.get("ran"):
        return "no confirmation session"
    named = {"case": case, "sysenv": sysenv, "var": var}
    if named in answer.confirmation.get("not_run", []):
        return "not run again"
    if any(f.kind == "UNCONFIRMED" and f.data.get("case") == case
           and f.data.get("sysenv") == sysenv and f.data.get("var", "") == var
           for f in answer.findings):
        return "not confirmed"
    return "confirmed"


#: ReFrame's results of a case that ran and did not pass: failed, or aborted (stopped by a
#: signal or a time box before it finished: never a pass, and the summary counts it failed)
NOT_PASSED = ("fail", "abort")


def aborted_text(c: Case) -> str:
    """What the lead says of an aborted case: hung (only the time box ended it) or stopped,
    and that its values are not measurements of a finished run."""
    how = ("hung: still running, with no time limit of its own, when the time box ended it"
           if case_kinds.is_hung(c.raw) else "stopped by a signal or a time box before it finished")
    return (f"aborted in {c.fail_phase or 'an unknown phase'} ({how}; not passed, its values "
            "are no measurement)")


def failed_row(c: Case, answer: VerdictRecord | None) -> Row:
    """A case that failed: its reference failures with their values, else its phase; an
    aborted case as aborted (its values, cut short, are not shown as measured)."""
    name = c.raw.get("display_name") or f"{c.test} {c.label()}"
    bad = [(var, pv) for var, pv in c.perf.items()
           if pv.result == "fail" and pv.value is not None and c.result == "fail"]
    size = math.inf
    value = (aborted_text(c) if c.result == "abort"
             else f"failed in {c.fail_phase or 'an unknown phase'}")
    if bad:
        value = "; ".join(f"{var} {pv.value:.4g} {pv.unit or ''}".rstrip()
                          + (f" (reference {pv.ref:.4g})" if pv.ref else "") for var, pv in bad)
        size = max((abs(math.log(pv.value / pv.ref)) for _, pv in bad
                    if pv.ref and pv.value > 0 and pv.ref > 0), default=math.inf)
    # the acceptance summary names a case by ReFrame's system and environment, no partition
    where = f"{c.raw.get('system', c.system)}+{c.raw.get('environ', c.environ)}"
    return Row(f"{name} @{c.sysenv}", value, "", "", "",
               confirmation(answer, name, where), size)


def value_row(name: str, v: verdict.over_sessions.Verdict, confirmed: str, evidence: str) -> Row:
    """A regressed or grossly worse value, in the verdict's own numbers."""
    outcome = v.outcome if v.outcome == verdict.over_sessions.REGRESSED else \
        f"grossly worse ({v.gross:+.0%} beyond its worst baseline session)"
    return Row(name, outcome + (f" {v.why}" if v.why else ""), f"{v.ratio - 1:+.1%}",
               f"{v.own_ratio - 1:+.1%}" if v.node_ratio != 1.0 else "no node shift",
               f"{v.ci[0] - 1:+.1%} .. {v.ci[1] - 1:+.1%}", confirmed, worse(v), evidence)


def worse(v: verdict.over_sessions.Verdict) -> float:
    """How much worse a value got, as a log ratio (a halved rate as bad as a doubled time)."""
    return math.log(v.ratio) * (-1 if v.higher_is_better else 1)


def table(rows: list[Row], more_failed: int) -> Table:
    t = Table("failed", "What failed or regressed, worst first",
              ["check and parameters", "value", "change", "beyond the node's shift",
               "interval (90%)", "confirmed", "evidence"],
              note="change: the median against the baseline's sessions (positive: the value "
                   "grew); beyond the node's shift: what is left once the change most values "
                   "share is removed; confirmed: whether the run's confirmation session "
                   "showed it again (not run again: it did not run there, and stands). "
                   "Evidence: each baseline session's launches beside this "
                   "run's." + (f" {more_failed} more failed case(s) not listed."
                               if more_failed else ""))
    for r in sorted(rows, key=lambda r: -r.worse):
        t.add([r.what, r.value, r.change, r.beyond, r.interval, r.confirmed,
               "strip plot" if r.evidence else ""], "bad", r.evidence)
    return t


def recorded(answer: VerdictRecord | None) -> bool:
    """Whether the run's record carries its findings' numbers (schema 2 on): the lead then
    shows the summary's numbers, never its own count of them."""
    return answer is not None and answer.schema >= 2


def said(answer: VerdictRecord | None, kind: str) -> list:
    """The record's findings of one kind (none without a record)."""
    return [f for f in answer.findings if f.kind == kind] if answer is not None else []


def verdict_counts(verdicts: list[verdict.over_sessions.Verdict],
                   answer: VerdictRecord | None) -> dict[str, int]:
    """How many values regressed, improved, stayed and stayed undecided, ``of`` how many: the
    ACCEPTANCE line's numbers when the run has a record, else this report's own."""
    if recorded(answer):
        # one ACCEPTANCE line a system: a pooled record of several systems sums them
        out: dict[str, int] = {}
        for f in said(answer, "ACCEPTANCE"):
            for k, v in (f.data.get("verdict") or {}).items():
                out[k] = out.get(k, 0) + v
        return out
    return peer_lines.counts_of(verdicts) if verdicts else {}


def facts(ran: int, failed: int, counts: dict[str, int], whose: str = "",
          why_not: str = "", built: int = 0,
          nothing: str = "no baseline with stored sessions") -> str:
    """``N case(s) passed, M failed; verdict: ...`` (``counts``: :func:`verdict_counts`;
    ``whose``: what the verdict's numbers include, when more than the cases counted;
    ``why_not``: why the run could not be judged, when its summary could not judge it;
    ``built``: build fixtures among the ``ran``, which the report's tables leave out;
    ``nothing``: why no value was judged, when none was: :func:`why_nothing`)."""
    if why_not:
        said = f"; the run could not be judged ({why_not})"
    elif counts:
        said = (f"; verdict{whose}: {counts['regressed']} regressed, {counts['improved']} "
                f"improved, {counts['unchanged']} unchanged, {counts['undecided']} undecided "
                f"of {counts['of']} values")
    else:
        said = f"; {nothing}: nothing judged"
    builds = f" ({built} of them build fixtures, not in the tables below)" if built else ""
    return f"{ran - failed} case(s) passed, {failed} failed{builds}{said}."


def why_nothing(ran: int, judged: list, built: int = 0) -> str:
    """Why no value was judged against a baseline, in the order a reader checks: no case
    ran (every one skipped), no baseline with stored sessions for the run's system, or no
    measured value with an entry in it. Why: an all-skipped run judged with a baseline of
    ten sessions was said to have no baseline, sending the reader to record one."""
    if not ran:
        return "no check ran, only build fixtures" if built else "no case ran"
    if not any(sj.stored for sj in judged):
        return "no baseline with stored sessions"
    return "no measured value matched an entry of the baseline"


def counted(ran: int, failed: int, answer: VerdictRecord | None) -> tuple[int, int, int]:
    """The cases that ran, those that failed and the build fixtures among them: the
    ACCEPTANCE line's counts when the run has a record (it counts the builds, the
    report's tables do not: a partition's banner read 56 passed where its line read 58),
    else the report's own."""
    c = answer.counts if recorded(answer) else {}
    if not {"passed", "failed", "ran"} <= set(c):
        return ran, failed, 0
    return c["passed"] + c["failed"], c["failed"], max(0, c["passed"] + c["failed"] - c["ran"])


def why_not_judged(answer: VerdictRecord | None) -> str:
    """Why the run's summary could not judge it, as its record's notes say (the line's
    brackets, the cause last); "" for a judged run or one without a record."""
    if answer is None or answer.judged:
        return ""
    return md("; ".join(answer.notes) or "no cause recorded")


def undecided_line(verdicts: list[verdict.over_sessions.Verdict],
                   answer: VerdictRecord | None = None) -> str:
    """The undecided values in one line, with the change the baseline could have called:
    the UNDECIDED finding's numbers when the run has a record."""
    if recorded(answer):
        und = said(answer, "UNDECIDED")
        if not und:
            return ""
        n, sessions, size = (und[0].data["count"], und[0].data["sessions"],
                             und[0].data["size"])
    else:
        values = [v for v in verdicts if v.outcome == verdict.over_sessions.UNDECIDED]
        if not values:
            return ""
        n = len(values)
        sessions = sorted(v.sessions for v in values)[n // 2]
        size = regressions.detectable_text(sorted(v.detectable for v in values)[n // 2])
    return (f"Undecided: {n} value(s); against a baseline of {sessions} session(s) the "
            f"median value could be called alone {size}. Record more sessions at other times "
            "(`placement baseline record --add`).")


def lead_section(cases: list[Case], judged: list, out: Path,
                 answer: VerdictRecord | None = None, history_link: str = "") -> Section:
    """The run's answer first: the banner, the node's lines, the table of what failed or
    regressed (each drawn against the baseline's sessions), what stayed undecided.

    ``judged``: :class:`.verdicts.SystemJudgement` of each system. ``answer``: the run's
    verdict record (:mod:`placement.acceptance.record`); it is the answer (a confirmation
    session may have dismissed what the first session failed), so the banner is its word
    and the rest is worded as the first session's. ``history_link``: the
    system's history page, relative to the report.
    """
    failed = [c for c in cases if c.result in NOT_PASSED]
    ran = [c for c in cases if c.result in ("pass", *NOT_PASSED)]
    verdicts = [j.verdict for sj in judged for j in sj.judgement if j.verdict]
    node_slow = any(sj.judgement.node is not None and sj.judgement.node.fails
                    for sj in judged)
    loads = {system: verdict.node_load.of_cases([c.raw for c in cases if c.system == system])
             for system in sorted({c.system for c in cases})}
    loaded = {system: load for system, load in loads.items() if load is not None and load.loaded}
    bad = bool(failed or verdict.over_sessions.counts(verdicts)[verdict.over_sessions.REGRESSED] or node_slow or loaded)
    word = status_word(bad, bool(ran), answer)
    first = (" in the first session" if answer is not None and answer.confirmation.get("ran")
             else "")
    if first:
        whose = ", its confirmation session included" if recorded(answer) else ""
        banner = (f"**{word}**: the acceptance run's answer, its confirmation session "
                  "included (its summary below).")
        said = facts(len(ran), len(failed), verdict_counts(verdicts, answer), whose,
                     nothing=why_nothing(len(ran), judged))
        lines = ["First session (build fixtures not counted, the acceptance line counts "
                 f"them): {said}"]
    else:
        n, bad_n, built = counted(len(ran), len(failed), answer)
        said = facts(n, bad_n, verdict_counts(verdicts, answer),
                     why_not=why_not_judged(answer), built=built,
                     nothing=why_nothing(n - built, judged, built))
        banner = f"**{word}**: {said}"
        lines = []
    lines += pooled_lines(answer) + node_lines(judged, loaded, answer)
    sec = Section("verdict", "Verdict", status=word, banner=banner)
    rows = [failed_row(c, answer) for c in failed[:MAX_FAILED]]
    rows += _value_rows(judged, answer, out, sec)
    if rows:
        sec.tables.append(table(rows, max(0, len(failed) - MAX_FAILED)))
    und = undecided_line(verdicts, answer)
    tail = [und] if und else []
    if history_link:
        tail.append(f"Every stored session of this system, drawn: [history]({history_link}).")
    sec.text = "\n\n".join(lines)
    sec.after = "\n\n".join([*tail, sec.after] if sec.after else tail)
    if answer is not None:
        sec.tables.append(summary_table(answer))
    return sec


#: the kinds of finding whose lines fail the run, marked so in the summary's table
FAILING = ("FAIL", "HUNG", "NODE", "NODES", "REGRESSION", "CONFIRMED")
#: NODES findings (by their ``what``) that fail nothing: the nodes alike
PASSING_NODES = ("alike",)
#: NODES findings (by their ``what``) that leave the run INCOMPLETE, never FAIL: a node
#: judged on no value, or two nodes that differ with nothing to tell which is odd (the
#: peer verdict's gaps, :attr:`placement.judgement.peers.partition.PeerJudgement.gaps`)
INCOMPLETE_NODES = ("not judged", "pair")


def makes_incomplete(f: record.Finding) -> bool:
    """Whether a finding's line leaves the run INCOMPLETE (missing evidence), not FAIL: a
    NODES line of :data:`INCOMPLETE_NODES`, or a NODE line no confirmation session decided.
    Why: a ``NODES ... not judged`` row was marked failing under an INCOMPLETE banner."""
    if f.kind == "NODES":
        return f.data.get("what") in INCOMPLETE_NODES
    return f.kind == "NODE" and bool(f.data.get("unconfirmed"))


def fails_run(f: record.Finding) -> bool:
    """Whether a finding is one that fails the run: its kind fails (:data:`FAILING`), except
    a NODES finding that says the nodes are alike and a line that leaves the run
    incomplete (:func:`makes_incomplete`)."""
    return (f.kind in FAILING and not makes_incomplete(f)
            and not (f.kind == "NODES" and f.data.get("what") in PASSING_NODES))


def effect(f: record.Finding) -> str:
    """What a finding's line does to the run, in the summary table's words."""
    if fails_run(f):
        return "fails the run"
    return "leaves the run incomplete" if makes_incomplete(f) else ""


def summary_table(answer: VerdictRecord) -> Table:
    """The record's lines as the summary printed them, each line that fails the run
    (:func:`fails_run`) or leaves it incomplete (:func:`makes_incomplete`) marked as such."""
    t = Table("acceptance", "The acceptance summary", ["line", "effect"],
              note="NODE, NODES (other than nodes alike), FAIL, HUNG, CONFIRMED and regressed "
                   "lines fail the run, except a NODES line of a node not judged or of two "
                   "nodes that differ with nothing to tell which is odd, and a NODE line no "
                   "confirmation session decided: those leave it INCOMPLETE; UNCONFIRMED: a "
                   "failure of the first session that its confirmation session did not show.")
    for f in answer.findings:
        t.add([f.line, effect(f)], "bad" if fails_run(f) else
              "incomplete" if makes_incomplete(f) else "")
    return t


def pooled_lines(answer: VerdictRecord | None) -> list[str]:
    """The line of a report pooling runs of several systems: each was judged as its own
    summary judges it, and the banner is the worst of their outcomes (none otherwise)."""
    pooled = [f for f in said(answer, "NOTE") if f.data.get("what") == "pooled systems"]
    if not pooled:
        return []
    each = pooled[-1].data.get("outcomes", {})
    return [f"Runs of {len(each)} systems, each judged as its own summary judges it ("
            + md(", ".join(f"{s} {o}" for s, o in each.items()))
            + "): the banner is the worst of their outcomes."]


def node_lines(judged: list, loaded: dict, answer: VerdictRecord | None) -> list[str]:
    """The node's lines: the record's NODE findings (the summary's numbers) when the run
    has a record, else this report's own node shift and load."""
    if recorded(answer):
        return [f"**NODE {md(f.partition)}**: {md(f.data['text'])}."
                for f in said(answer, "NODE")]
    lines = []
    for sj in judged:
        node = sj.judgement.node
        if node is not None and node.flagged:
            lines.append(f"**NODE {md(sj.system)}**: {md(node.line())}.")
    for system, load in loaded.items():
        lines.append(f"**NODE {md(system)}**: {md(load.line())}.")
    return lines


def _value_rows(judged: list, answer: VerdictRecord | None, out: Path,
                sec: Section) -> list[Row]:
    """Rows of the regressed and grossly worse values, the worst drawn (into ``sec``)."""
    from . import plots
    picked = [(sj, j) for sj in judged for j in sj.judgement
              if j.verdict is not None and (j.verdict.outcome == verdict.over_sessions.REGRESSED
                                            or j.verdict.gross is not None)]
    picked.sort(key=lambda p: -worse(p[1].verdict))
    rows = []
    for sj, j in picked:
        name = entry_name(j.entry)
        evidence = ""
        if len(sec.images) < MAX_FIGURES and plots.available() and j.entry in sj.stored:
            evidence = plots.sessions_strip(
                out, f"regressed-{len(sec.images) + 1}.png", name,
                sj.stored[j.entry].session_runs, sj.new[j.entry].runs)
            sec.images.append((evidence, f"{name}: each baseline session's launches and the "
                                         "new session's (red); bars are medians"))
        c = sj.cases_of.get(j.entry)
        said = confirmation(answer, c.raw.get("display_name", c.test), c.sysenv, j.entry[2]) \
            if c is not None else confirmation(answer, name, "")
        rows.append(value_row(name, j.verdict, said, evidence))
    if plots.available():
        sec.figures_for(len(sec.images), sum(j.entry in sj.stored for sj, j in picked),
                        "regressed or grossly worse values (the worst)")
    return rows
