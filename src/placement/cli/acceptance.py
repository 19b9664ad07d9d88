"""``placement acceptance summary|resume|sessions|confirm``: the conclusions of an acceptance
run, for ``scripts/acceptance.sh`` (:mod:`placement.acceptance`).

* ``resume LIST``: the earlier parts that can be read (a corrupt one is dropped
  with one line) and the checks that already finished (``-x /HASH`` for ReFrame);
* ``sessions PART...``: ReFrame's session filter selecting a run's parts;
* ``confirm PART...``: the checks a confirmation session runs (``-n /HASH`` each), and for a
  ``--distribute`` run the nodes it runs them on (a ``nodes N1,N2`` line, none: every node);
* ``summary PART... --compare CSV --confirm REPORT``: a ``FAIL`` line per failed case, ``SKIP``
  lines counting skipped cases by reason, then the ``ACCEPTANCE`` line; its exit status is
  the outcome's (:func:`placement.acceptance.decide`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from ..acceptance import (hung_cases, judged_system, not_a_confirmation, record, resume_plan,
                          selection, session_filter, unjudged, verdict_record)
from ..judgement import reading
from ..util import PlacementError, one_line
from .arguments import percent

description = "conclusions of an acceptance run (for acceptance.sh)"


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("summary", "resume", "sessions", "confirm"),
                   help="summary: FAIL/SKIP lines and the ACCEPTANCE line; resume: the "
                        "readable parts and finished checks of an unfinished run list; "
                        "sessions: ReFrame's filter for the parts' sessions; confirm: the "
                        "hashes of the checks a confirmation session runs, one a line, then "
                        "'nodes N1,N2' for a --distribute run restricted to those nodes")
    p.add_argument("paths", nargs="+", help="run reports (resume: the unfinished .run list)")
    p.add_argument("--system", help="the system judged (default: the one the run's cases "
                                    "are of, where they are of one)")
    p.add_argument("--mode", default="acceptance")
    p.add_argument("--compare", help="ReFrame --performance-compare CSV against the previous run")
    p.add_argument("--previous", action="append", default=[], metavar="REPORT",
                   help="a run report of the previous run (--compare's other side; repeat "
                        "for each part): a previous run with no check in common is nothing "
                        "to compare with, not a gap")
    p.add_argument("--max-slowdown", type=percent, default=10.0,
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


def acceptance(args: argparse.Namespace) -> int:
    return {"resume": _resume, "confirm": _confirm, "sessions": _sessions,
            "summary": _summary}[args.action](args)


def _resume(args: argparse.Namespace) -> int:
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


def _confirm(args: argparse.Namespace) -> int:
    try:
        paths = [Path(p) for p in args.paths]
        chosen = selection(paths, judged_system(args.system, _readable(paths)))
    except Exception:       # noqa: BLE001 - the summary names the cause, once
        chosen = None
    if chosen is not None and chosen.what:
        print(f"acceptance: confirmation session: {chosen.what}", file=sys.stderr)
    for line in chosen.lines() if chosen is not None else []:
        print(line)
    return 0


def _sessions(args: argparse.Namespace) -> int:
    print(session_filter([Path(p) for p in args.paths]))
    return 0


def _readable(paths: list[Path]) -> list[reading.run_report.RunReport]:
    """The run reports of ``paths`` that can be read, each read once for the checks below
    (one that cannot is the summary's to say, in its line)."""
    out = []
    for p in paths:
        with contextlib.suppress(PlacementError):
            out.append(reading.run_report.load(p))
    return out


def _summary(args: argparse.Namespace) -> int:
    """Judges the run once, prints its lines and writes its verdict record beside the
    newest run report (:mod:`placement.acceptance.record`), which the report reads."""
    parts = reading.run_report.distinct(map(Path, args.paths))
    read = _readable(parts)
    args.system = judged_system(args.system, read)
    # the caller's words go into the one ACCEPTANCE line: a line break there split it
    args.note, args.not_compared = (list(map(one_line.flattened, args.note)),
                                    list(map(one_line.flattened, args.not_compared)))
    confirm = Path(args.confirm) if args.confirm else None
    not_confirmed = list(map(one_line.flattened, args.not_confirmed))
    again = _readable([confirm]) if confirm is not None else []
    why = not_a_confirmation([r.session for r in read], again[0].session) if again else ""
    if why:         # another run's session dismisses nothing: the failures stand
        not_confirmed.append(one_line.flattened(
            f"{confirm} is no confirmation session of this run ({why})"))
        confirm = None
    try:
        rec = verdict_record(parts, args.system, args.mode,
                             Path(args.compare) if args.compare else None,
                             args.max_slowdown, args.cut_short, args.note, args.not_compared,
                             confirm, not_confirmed, [Path(p) for p in args.previous])
    except Exception as exc:    # noqa: BLE001 - any failure: still the run's one line
        rec = unjudged(parts, args.system, args.mode, args.cut_short,
                       args.note + args.not_compared, exc)
    if rec.reports:
        try:
            record.write(rec, record.path_for(Path(rec.reports[-1])))
        except (OSError, PlacementError) as err:
            print(f"NOTE the verdict record could not be written beside {rec.reports[-1]}: "
                  f"{err}", file=sys.stderr)
    print("\n".join(rec.lines))
    return rec.exit_status
