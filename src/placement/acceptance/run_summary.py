"""An acceptance run's summary: everything it concludes from the run's parts, one
``ACCEPTANCE`` line last, and its exit status (``placement acceptance summary``).

A run the watchdog stopped (``stopped`` > 0) is a failure to finish, never a performance
regression.
"""

from __future__ import annotations

from pathlib import Path

from ..judgement import baselines
from . import comparison_health, peer_lines
from .findings import apply_confirmation, first_session
from .outcome import decide
from .parts import readable
from .previous_run import compare_rows, previous_run_info
from .regressions import find_regressions, gross_values, undecided_lines
from .summary_lines import (acceptance_line, case_lines, node_lines, note_lines,
                            undecided_with_node)


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
        outcome, status = decide(cut_short=cut_short, failed=True, complete=False,
                                 readable=False)
        return [f"ACCEPTANCE {system} {mode}: {outcome} no readable run report "
                f"({'; '.join(notes)})"], status
    f = first_session(good, system, cut_short, notes, gaps)
    if confirm is not None:
        apply_confirmation(f, confirm)
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
    node = node_lines(f)
    peer = peer_lines.of_parts(good, system)
    f.notes += peer.notes
    if node.unconfirmed:
        f.judged = undecided_with_node(f.judged)
    regressions = find_regressions([tc for k, tc in f.final.items() if f.kinds[k] != "pass"],
                                   f.judged)
    lines = node.lines + peer.lines + [r.line() for r in regressions if r.var != "reference"]
    lines += case_lines(f, failed, skipped)
    lines += f.conf.lines() if f.conf is not None else []
    lines += undecided_lines(f.judged)
    lines += previous_run_info(compare_rows(compare), max_slowdown)
    lines += note_lines(f)
    if not ran:
        f.notes.insert(0, "no case ran")      # all skipped: covered nothing, never a pass
    ok = ran > 0 and not failed and not regressions and not node.node_fails \
        and not node.load_fails and not peer.fails
    outcome, status = decide(cut_short=cut_short, failed=not ok, complete=not f.gaps)
    lines.append(acceptance_line(f, mode, outcome, passed, len(failed), len(regressions),
                                 len(skipped), node))
    return lines, status
