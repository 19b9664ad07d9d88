"""The lines of an acceptance summary, from what the run's first session (and its
confirmation session) found: the ``NODE`` lines, a ``FAIL`` line per failed case, ``SKIP``
lines counting skipped cases by reason, ``NOTE`` lines, and the one ``ACCEPTANCE`` line.

A node flagged slower than its baseline (:mod:`placement.judgement.verdict.node_shift`), or
loaded (its jobs' CPU pressure, :mod:`placement.judgement.verdict.node_load`), fails the run
on its own line. With a confirmation session, each of those failures stands only if it shows
there too (:mod:`.confirmation`); a node line no second session saw fails only from
:data:`placement.judgement.verdict.node_shift.NODE_AT_ONCE`, and below it leaves the run
incomplete.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

from ..judgement import baselines, verdict
from . import confirmation
from .baseline_notes import baseline_gaps, foreign_baseline, mixed_versions
from .case_kinds import fail_text, hung_line, skip_reason, skip_reasons
from .findings import Findings
from .peer_lines import counts_of
from .record import Finding
from .regressions import Judged


@dataclass(frozen=True)
class NodeLines:
    """The node's lines and whether the node (its shift, its load) fails the run."""

    findings: list[Finding]
    node_fails: bool
    load_fails: bool
    #: a node line that fails only when a second session shows it, which none did
    unconfirmed: bool = False

    @property
    def lines(self) -> list[str]:
        return [f.line for f in self.findings]


def node_lines(f: Findings) -> NodeLines:
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
        lines.append(Finding("NODE", line, f.system, data={
            **shift_data(node), "text": node.line(),
            "unconfirmed": standing == confirmation.NODE_UNCONFIRMED}))
    if node is not None and node.untested:
        lines.append(Finding("NOTE", f"NOTE {f.system}: {node.text()}", f.system,
                             data={**shift_data(node), "what": "node shift untested"}))
    load_fails = f.load is not None and not (conf is not None and conf.load_dismissed)
    if load_fails:
        loaded = loaded_nodes(f)
        lines.append(Finding("NODE", f"NODE {f.system}: {f.load.line()}", f.system,
                             ", ".join(loaded), {"what": "load", "median": f.load.median,
                                                 "cases": f.load.cases, "nodes": loaded,
                                                 "text": f.load.line()}))
    return NodeLines(lines, standing == confirmation.NODE_FAILS, load_fails,
                      standing == confirmation.NODE_UNCONFIRMED)


def loaded_nodes(f: Findings) -> list[str]:
    """The nodes the run's load line names (none without one)."""
    return [] if f.load is None else f.load.loaded_nodes()


def shift_data(node: verdict.over_sessions.NodeShift) -> dict:
    """The node's shift as a NODE finding carries it: how much (``percent``, slower
    positive), on how many of how many values, against how many sessions."""
    return {"what": "shift", "percent": math.copysign(node.percent, node.shift),
            "slower": node.slower, "moved": node.moved, "values": node.values,
            "p": node.p, "sessions": node.sessions, "control": node.control or ""}


def undecided_with_node(judged: Judged) -> Judged:
    """The verdicts with the values regressed only with the node's shift made undecided: the
    node line they rest on was not confirmed, so neither are they."""
    return {k: replace(v, outcome=verdict.over_sessions.UNDECIDED,
                       why="with a node line no second session confirmed")
            if v.outcome == verdict.over_sessions.REGRESSED and v.why == "with the node" else v
            for k, v in judged.items()}


def case_lines(f: Findings, failed: list[tuple], skipped: list[dict]) -> list[Finding]:
    """A FAIL line per failed case, then SKIP lines counting skipped cases by reason."""
    lines = []
    for key in failed:
        tc = f.final[key]
        case = {"case": tc.get("display_name"), "sysenv": f"{tc.get('system')}+{tc.get('environ')}",
                "stage": tc.get("stagedir"), "kind": f.kinds[key]}
        if f.kinds[key] == "hung":
            lines.append(Finding("HUNG", hung_line(tc), str(tc.get("system") or ""),
                                 data={**case, "time_run": tc.get("time_run")}))
            continue
        stopped = verdict.guards.stopped_runs(tc)
        what = (f"did not finish: the watchdog stopped {stopped} run(s)"
                if f.kinds[key] == "unfinished" else fail_text(tc))
        lines.append(Finding(
            "FAIL", f"FAIL {tc.get('display_name')} @{tc.get('system')}+{tc.get('environ')} "
                    f"[{what}] stage={tc.get('stagedir')}", str(tc.get("system") or ""),
            data={**case, "phase": tc.get("fail_phase") or "", "why": what,
                  "stopped": stopped, "reference": confirmation.is_reference_failure(tc)}))
    reasons = skip_reasons(f.good)
    for reason, n in Counter(skip_reason(tc, reasons) for tc in skipped).most_common():
        lines.append(Finding("SKIP", f"SKIP {n} case(s): {reason}",
                             data={"count": n, "reason": reason}))
    return lines


def note_lines(f: Findings) -> list[Finding]:
    """NOTE lines: a baseline of few sessions, a control value not judged; and, each also a
    gap, a baseline recorded for another system, refused, or in another unit."""
    def note(what: str, text: str) -> Finding:
        return Finding("NOTE", f"NOTE {text}", f.system, data={"what": what})
    lines = []
    few = baselines.samples.sessions_note(list(f.judged.values()))
    if few:
        lines.append(note("few sessions", few))
    if f.judgement is not None and f.judgement.control_note:
        lines.append(note("control value", f.judgement.control_note))
    other = foreign_baseline(f.system)
    if other:
        lines.append(note("baseline of another system", other))
        f.gaps.append("baseline of another system")
    refused, units = baseline_gaps(f.system, f.judgement)
    mixed = mixed_versions(f.good, f.system)
    if mixed.startswith("baseline changed"):
        f.gaps.append("baseline changed during the run")
    lines += [note("baseline version", mixed)] if mixed else []
    lines += [note("baseline refused", line) for line in refused]
    lines += [note("unit differs", line) for line in units]
    f.gaps += (["baseline refused: nothing judged against it"] if refused else []) + \
        ([f"{len(units)} value(s) with a reference in another unit"] if units else [])
    return lines


def acceptance_line(f: Findings, mode: str, outcome: str, passed: int, failed: int,
                     regressions: int, skipped: int, node: NodeLines) -> Finding:
    """The one line a scheduled run ends with."""
    counts = counts_of(list(f.judged.values()))
    notes = f.notes + f.gaps
    extra = (f" skipped={skipped}" + (f" parts={len(f.good)}" if len(f.good) > 1 else "") +
             (" node=slower" if node.node_fails else "") +
             (" node=loaded" if node.load_fails else "") +
             (f.conf.text() if f.conf is not None else "") +
             (f" verdict: {counts['regressed']} regressed, {counts['improved']} "
              f"improved, {counts['unchanged']} unchanged, {counts['undecided']} "
              f"undecided of {counts['of']}" if f.judged else "") +
             (f" ({'; '.join(notes)})" if notes else ""))
    return Finding("ACCEPTANCE",
                   f"ACCEPTANCE {f.system} {mode}: {outcome} {passed} passed, {failed} failed "
                   f"({regressions} perf regressions) report={f.good[-1].path}{extra}",
                   f.system, data={"outcome": outcome, "passed": passed, "failed": failed,
                                   "regressions": regressions, "skipped": skipped,
                                   "parts": len(f.good), "node_slower": node.node_fails,
                                   "node_loaded": node.load_fails,
                                   "verdict": counts if f.judged else {}})
