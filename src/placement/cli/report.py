"""``placement report``: a static report folder from ReFrame run reports, or from baselines.

    placement report --latest [--output reports]      the run in results/runs that started last
    placement report --run FILE [--run FILE ...]      given run reports, pooled
    placement report --reference [--baseline F] [--seed-csv F] [--output reports/reference]

A run report writes ``<output>/<system>-<date>/``; ``--reference`` writes the
folder itself. Prints the folder written. The report group (and its HTML renderer,
markdown-it-py) is imported only when the command runs: ``placement judge`` inside a job,
``placement maps`` or an acceptance step start without it, so an installation that lacks
it fails only where it is used.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..judgement import reading
from ..util import PlacementError, baseline_dir, reports_dir, system_name

description = ("write a static report (HTML, Markdown, PNG, CSV) from ReFrame run reports or "
               "the stored baselines")


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--latest", action="store_true",
                   help="the run in results/runs ($PLACEMENT_RESULTS) whose session started "
                        "last (of --system, when given)")
    p.add_argument("--run", action="append", default=[], metavar="FILE",
                   help="a run report, 'latest', or an acceptance run's .run list "
                        "(repeatable); runs are pooled")
    p.add_argument("--output", metavar="DIR",
                   help="parent folder (default $PLACEMENT_REPORTS, else reports/; with "
                        "--reference: the folder, default reference/ in that one)")
    p.add_argument("--system", help="keep only this system's cases (an error when the runs "
                                    "have none) and name the folder after it")
    p.add_argument("--no-compare", action="store_true",
                   help="skip ReFrame's comparison with the previous stored run")
    p.add_argument("--exit-status", action="store_true",
                   help="exit with the run's own status, its verdict record's (0 PASS, 1 FAIL, "
                        "3 UNFINISHED, 4 INCOMPLETE), as an acceptance run does")
    p.add_argument("--record", metavar="FILE",
                   help="the run's verdict record (`placement acceptance summary` writes it "
                        "beside the newest run report, where it is found without this); "
                        "without one the run is judged as the summary judges it and its "
                        "record written there")
    p.add_argument("--reference", action="store_true",
                   help="render stored baselines (and seed tables) in the studies' layout")
    p.add_argument("--baseline", action="append", default=[], metavar="YAML",
                   help="with --reference: a reference file (default: every YAML file in config/baselines/)")
    p.add_argument("--seed-csv", action="append", default=[], metavar="CSV",
                   help="with --reference: a seed table benchmark,class,threads,affinity,time_s")


#: the options that only ``--reference`` reads, and those it does not
REFERENCE_ONLY = ("baseline", "seed_csv")
RUN_ONLY = ("latest", "run", "system", "no_compare", "exit_status", "record")


def unused_options(args: argparse.Namespace) -> None:
    """Refuses an option the chosen rendering does not read (``--seed-csv nosuch.csv``
    beside ``--run`` exited 0, the file never looked at)."""
    other = RUN_ONLY if args.reference else REFERENCE_ONLY
    given = [k for k in other if getattr(args, k) not in (None, False, [])]
    if given:
        opt = "--" + given[0].replace("_", "-")
        raise PlacementError(f"{opt} is only read {'without' if args.reference else 'with'} "
                             f"--reference: leave it out, or "
                             f"{'drop' if args.reference else 'give'} --reference")


def report(args: argparse.Namespace) -> int:
    from ..report import assembly
    unused_options(args)
    if args.reference:
        bl = [Path(p) for p in args.baseline]
        if not bl and not args.seed_csv:
            bl = sorted(baseline_dir().glob("*.yaml"))
        out = assembly.report_reference(
            bl, [Path(p) for p in args.seed_csv],
            Path(args.output) if args.output else reports_dir() / "reference")
        print(out)
        return 0
    if args.system:
        system_name(args.system, "--system")
    paths = [p for spec in args.run for p in reading.run_report.expand(spec, args.system)]
    if args.latest:
        paths.append(reading.run_report.latest(reading.run_report.results_dir() / "runs",
                                               args.system))
    paths = reading.run_report.distinct(paths)
    if not paths:
        raise PlacementError("give --latest or --run FILE (or --reference)")
    reports = [reading.run_report.load(p) for p in paths]
    if args.record:
        from ..acceptance import record
        answer = record.read(Path(args.record))
        why = assembly.record_mismatch(answer, paths, reports, args.system)
        if why:
            raise PlacementError(
                f"--record {args.record}: the verdict record of another run or selection "
                f"of parts ({why}); it is read only for exactly the parts it judged: give "
                "those --run files, or the record the summary wrote for these, or leave "
                "--record out; nothing was written")
    else:
        answer = assembly.answer_for(paths, reports, args.system)
    out = assembly.report_runs(reports, Path(args.output) if args.output else reports_dir(),
                               args.system, compare_previous=not args.no_compare,
                               answer=answer)
    print(out)
    if answer is not None and not args.record:
        # the run's one line, as an acceptance run ends with it (which prints its own
        # line after the report, the record given)
        print(answer.line, file=sys.stderr)
    if args.exit_status:
        # no record (a run no summary can judge): never a pass
        return answer.exit_status if answer is not None else 4
    return 0

