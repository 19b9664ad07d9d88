"""``placement judge``: inside a job, after each run, whether to run the case again
(:mod:`placement.judgement.repeats.judge`).

Two ways to give the runs so far: ``--entry`` and the values of the runs made so far, or
a kernel job's stdout (``--output``) and ``--var ENTRY REGEX`` per variable. Exit 0: stop
(decided, at the cap, or nothing to judge against); exit 1: run again. ``--word`` prints
``stop`` or ``continue`` and exits 0, for a shell loop that would rather read a word (with
``--output``, each variable's decision goes to stderr, so the job's error file shows why it
ran again). Bad input: one line, exit 2. It runs inside jobs, so it needs no ReFrame.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..judgement import repeats, verdict
from ..util import PlacementError, regular_file
from .arguments import fraction

description = "after a run inside a job: stop (exit 0) or run again (1)"


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", required=True, help="the system's reference file")
    p.add_argument("--entry", help="Test[index values].var (with the runs' values)")
    p.add_argument("--output", help="a kernel job's stdout, split into launches")
    p.add_argument("--var", nargs=2, action="append", default=[], metavar=("ENTRY", "REGEX"),
                   help="with --output: a variable's entry and the regex of its line "
                        "(first group: the value); repeat per variable")
    p.add_argument("--min-runs", type=int, default=verdict.over_sessions.MIN_RUNS,
                   help=f"runs before any verdict (default {verdict.over_sessions.MIN_RUNS})")
    p.add_argument("--max-runs", type=int, default=verdict.over_sessions.MAX_RUNS,
                   help=f"the cap (default {verdict.over_sessions.MAX_RUNS})")
    p.add_argument("--min-effect", type=fraction, default=verdict.over_sessions.MIN_EFFECT,
                   help="smallest change of the median a regression needs (default 3%%)")
    p.add_argument("--word", action="store_true", help="print stop|continue, exit 0")
    p.add_argument("runs", nargs="*", help="the values of the runs made so far")


def judge(args: argparse.Namespace) -> int:
    if args.min_runs < 1 or args.max_runs < args.min_runs:
        raise PlacementError(f"invalid repeats: need 1 <= --min-runs ({args.min_runs}) "
                             f"<= --max-runs ({args.max_runs})")
    path = Path(args.baseline)
    regular_file.refuse_special(path, "reference file")     # a FIFO or folder was "not found"
    if not path.exists():
        raise PlacementError(f"reference file {str(path)!r} not found")
    if args.output is not None:
        return _judge_output(args, path)
    if args.entry is None or args.var:
        raise PlacementError("give either --entry ENTRY and the runs' values, or "
                             "--output FILE and --var ENTRY REGEX per variable")
    runs = []
    for text in args.runs:
        try:
            runs.append(float(text))
        except ValueError:
            raise PlacementError(f"invalid run value {text!r} (expected a number)") from None
    d = repeats.judge.judge_runs(path, args.entry, runs, args.min_runs, args.max_runs,
                                 args.min_effect)
    if args.word:
        print(d.word)
        return 0
    print(f"{d.word}: {d.reason}")
    return 0 if d.stop else 1


def _judge_output(args: argparse.Namespace, path: Path) -> int:
    """The kernel mode: ``--output`` and ``--var ENTRY REGEX`` pairs."""
    if args.entry is not None or args.runs or not args.var:
        raise PlacementError("--output needs --var ENTRY REGEX (one per variable) and "
                             "neither --entry nor run values")
    text = repeats.judge.job_output(Path(args.output))
    stop, lines = repeats.judge.judge_launches(path, text, [tuple(v) for v in args.var],
                                               args.min_runs, args.max_runs, args.min_effect)
    word = "stop" if stop else "continue"
    if args.word:
        for line in lines:
            print(f"judge: {line}", file=sys.stderr)
        print(word)
        return 0
    print("\n".join(lines + [word]))
    return 0 if stop else 1
