"""An acceptance run's summary: everything it concludes from the run's parts, one
``ACCEPTANCE`` line last, and its exit status (``placement acceptance summary``).

A run the watchdog stopped (``stopped`` > 0) is a failure to finish, never a performance
regression.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..judgement import baselines, reading, verdict
from ..util import baseline_file, one_line, sha256
from . import comparison_health, peer_lines, record, unmeasured, waiting
from .case_kinds import FAILED_KINDS, member_kinds
from .findings import Findings, apply_confirmation, first_session
from .outcome import decide
from .parts import final_cases, out_of_order, readable
from .previous_run import compare_rows, previous_run_finding
from .regressions import find_regressions, gross_values, undecided_finding
from .summary_lines import (acceptance_line, case_lines, loaded_nodes, node_lines, note_lines,
                            undecided_with_node)


def summary(parts: list[Path], system: str, mode: str, compare: Path | None,
            max_slowdown: float, cut_short: bool, notes: list[str],
            not_compared: list[str] = (), confirm: Path | None = None,
            not_confirmed: list[str] = (), previous: list[Path] = ()) -> tuple[list[str], int]:
    """The lines to print and the exit status (0 pass, 1 fail, 3 unfinished, 4 incomplete).

    ``compare`` is None when no comparison was made (a first run); ``not_compared``
    are comparisons that could not even start (the previous run's reports gone).
    ``confirm`` is the run report of the confirmation session (:mod:`.confirmation`);
    ``not_confirmed``: why a confirmation that was due did not run (its failures stand).
    ``previous``: the previous run's reports, ``compare``'s other side.
    The system's reference file is read once for all of it (:func:`baselines.read_once`).
    The lines and the status are the :func:`verdict_record`'s.
    """
    rec = verdict_record(parts, system, mode, compare, max_slowdown, cut_short, notes,
                         not_compared, confirm, not_confirmed, previous)
    return rec.lines, rec.exit_status


def verdict_record(parts: list[Path], system: str, mode: str, compare: Path | None = None,
                   max_slowdown: float = 10.0, cut_short: bool = False,
                   notes: list[str] = (), not_compared: list[str] = (),
                   confirm: Path | None = None,
                   not_confirmed: list[str] = (),
                   previous: list[Path] = ()) -> record.VerdictRecord:
    """The run judged once: its :class:`~.record.VerdictRecord`, from which the summary's
    lines, the exit status and the report are drawn (arguments as :func:`summary`)."""
    with baselines.store.read_once():
        return _summary(list(parts), system, mode, compare, max_slowdown, cut_short,
                        list(notes), list(not_compared), confirm, list(not_confirmed),
                        list(previous))


def _shares_checks(good: list, previous: list[Path]) -> bool:
    """Whether the previous run (its run reports) ran any check this run did; True when it
    is not given or cannot be read (then an empty comparison stays a gap)."""
    before, _ = readable(list(previous))
    if not before:
        return True
    now = comparison_health.checks_of(list(final_cases(good).values()))
    return bool(now & comparison_health.checks_of(list(final_cases(before).values())))


def _baseline(system: str) -> dict[str, str]:
    """The reference file judged against and its digest ("" where there is none)."""
    path = baseline_file(system)
    return {"path": str(path), "sha256": sha256(path) if path.is_file() else ""}


def _odd_nodes(peer: peer_lines.PeerLines, scheduler: str) -> list[record.OddNode]:
    """The nodes the peer verdict named, each with the command that drains it."""
    out = []
    for j in peer.judgements:
        why = {o.node: f"{'slower' if o.slower else 'faster'} than its {o.peers} peers on "
                       f"{o.called} of {o.judged} values (median {o.median:+.0%})"
               for o in j.odd}
        for t in j.topology:
            why.setdefault(t.node, "topology differs from its peers")
        for node in peer.named(j):
            text = why.get(node, "stands apart from its peers")
            out.append(record.OddNode(j.where, node, text,
                                      record.drain_command(scheduler, node, text)))
    return out


def _verdicts(f: Findings) -> dict:
    """Each judged value's verdict as the run's answer has it, for the record (a report
    reads them rather than judging the run again); empty when none was judged."""
    if not f.judged:
        return {}
    return {"system": f.system, "context": baselines.samples.context_lines(f.judgement)
            if f.judgement is not None else [],
            "values": [{"case": name, "sysenv": sysenv, "var": var, "verdict": v.outcome,
                        "change": v.ratio - 1, "why": v.why,
                        "data": verdict.as_data.to_data(v)}
                       for (name, sysenv, var), v in sorted(f.judged.items())]}


def _scheduler(good: list) -> str:
    """The scheduler the run's jobs ran under, as ReFrame's run report names it."""
    for part in good:
        for run in part.data.get("runs", []):
            for tc in run.get("testcases", []):
                name = str(tc.get("scheduler") or "")
                if name in ("slurm", "squeue"):
                    return "slurm"
                if name.startswith("sge"):
                    return "sge"
    return ""


def _summary(parts: list[Path], system: str, mode: str, compare: Path | None,
             max_slowdown: float, cut_short: bool, notes: list[str],
             not_compared: list[str], confirm: Path | None,
             not_confirmed: list[str], previous: list[Path]) -> record.VerdictRecord:
    good, dropped = readable(parts)
    order = out_of_order(good)
    dropped += [order] if order else []
    notes = list(notes) + comparison_health.not_stored([p.path for p in good])
    shared = _shares_checks(good, previous)
    if compare is not None and not cut_short and not shared:
        notes.append(f"first run of {system}/{mode} with these checks: nothing to compare with")
    # a part that cannot be read held cases nobody judged: the run is not complete
    gaps = dropped + list(not_compared) + (comparison_health.comparison_gaps(
        compare, compare_rows(compare), shared) if compare is not None and not cut_short else [])
    if not good:
        outcome, status = decide(cut_short=cut_short, failed=True, complete=False,
                                 readable=False)
        line = (f"ACCEPTANCE {system} {mode}: {outcome} no readable run report "
                f"({'; '.join(dropped + notes)})")
        return record.VerdictRecord(system, mode, outcome, status, [str(p) for p in parts],
                                    {"passed": 0, "failed": 0, "skipped": 0, "regressions": 0,
                                     "ran": 0}, [line],
                                    [record.Finding("ACCEPTANCE", line, system,
                                                    data={"outcome": outcome, "readable": 0})],
                                    notes=notes, gaps=gaps, baseline=_baseline(system))
    f = first_session(good, system, cut_short, notes, gaps)
    peer = peer_lines.of_parts(good, system)
    if confirm is not None:
        apply_confirmation(f, confirm, peer.judgements)
        peer.confirmed_by(f.conf.peers_cleared, set(f.conf.nodes_dismissed))
    f.notes += [f"not confirmed: {why}" for why in not_confirmed]
    gross = gross_values(f.judged)  # (confirmed ones are regressed, dismissed ones not gross)
    if gross:       # only a second session decides them: the run is not a plain PASS
        f.gaps.append(f"{len(gross)} grossly worse value(s) that no confirmation session "
                      "decided")
    failed = [k for k, v in f.kinds.items() if v in FAILED_KINDS]
    counted = [(k, *x) for k, v in f.kinds.items() for x in member_kinds(f.final[k], v)]
    skipped = [tc for _, x, tc in counted if x == "skip"]
    passed = sum(x == "pass" for _, x, _ in counted)
    failures = sum(x in FAILED_KINDS for _, x, _ in counted)
    ran = sum(x in ("pass", *FAILED_KINDS) and not f.final[k].get("fixture")
              for k, x, _ in counted)
    node = node_lines(f)
    if node.load_fails:
        peer.loaded = set(loaded_nodes(f))
    f.notes += peer.notes
    f.gaps += peer.gaps
    if node.unconfirmed:
        f.judged = undecided_with_node(f.judged)
    regressions = find_regressions([tc for k, tc in f.final.items() if f.kinds[k] != "pass"],
                                   f.judged)
    found = [peer_lines.count_finding(system, peer.count)] if peer.judged else []
    found += node.findings + peer.findings
    found += [r.finding(f.judged.get((r.case, r.sysenv, r.var)))
              for r in regressions if r.var != "reference"]
    found += case_lines(f, failed, skipped)
    found += [record.Finding("WAITING", w.line(), w.where.split("+")[0], data=w.data())
              for w in f.waiting]
    if f.waiting:
        f.notes.append(waiting.note(f.waiting))
    found += f.conf.findings() if f.conf is not None else []
    found += undecided_finding(f.judged)
    found += previous_run_finding(compare_rows(compare), max_slowdown)
    found += note_lines(f)
    missing = unmeasured.values(reading.run_report.pool([p.report for p in good]), system)
    if missing:
        found.append(record.Finding("NOTE", f"NOTE {unmeasured.line(missing)}", system,
                                    data={"what": "not measured", "values": missing}))
        f.gaps.append(f"{len(missing)} value(s) not measured")
    if not ran:
        # all skipped: covered nothing, never a pass (a build that passed is no check)
        f.notes.insert(0, "no check ran, only build fixtures" if passed + failures
                       else "no case ran")
    ok = ran > 0 and not failed and not regressions and not node.node_fails \
        and not node.load_fails and not peer.fails
    outcome, status = decide(cut_short=cut_short, failed=not ok, complete=not f.gaps)
    found.append(acceptance_line(f, mode, outcome, passed, failures, len(regressions),
                                 len(skipped), node))
    # text from a run report (a fingerprint's value, a name) is in the lines: a line break
    # there would print a line of its own, one that could read "ACCEPTANCE ... PASS"
    found = [replace(x, line=one_line.flattened(x.line)) for x in found]
    conf = {} if f.conf is None else {
        "ran": True, "confirmed": f.conf.confirmed, "missing": f.conf.missing,
        "not_run": sorted(f.conf.not_run, key=lambda n: (n["case"], n["sysenv"], n["var"])),
        "dismissed": sorted({x.line for x in f.conf.dismissed_cases.values()} |
                            {x.line for x in f.conf.dismissed_values.values()} |
                            {x.line for x in f.conf.nodes_dismissed.values()}),
        "node_dismissed": f.conf.node_dismissed, "load_dismissed": f.conf.load_dismissed,
        "nodes": f.conf.by_node(f.final)}
    return record.VerdictRecord(
        system, mode, outcome, status, [str(p.path) for p in good],
        {"passed": passed, "failed": failures, "skipped": len(skipped),
         "regressions": len(regressions), "ran": ran},
        [x.line for x in found], found, _odd_nodes(peer, _scheduler(good)), conf,
        list(f.gaps),
        list(f.notes), _baseline(system), peer.nodes(), _verdicts(f),
        [p.report.uuid for p in good])
