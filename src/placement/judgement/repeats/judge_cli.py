"""``placement judge``: inside a job, after each run, whether to run the case again.

Two ways to give the runs so far:

* one variable: the case's entry (as ``placement baseline diff`` prints it,
  ``Test[index values].var``) and the values of the runs made so far (NPB's
  ``wall``);
* a kernel job's launches: ``--output`` names the job's stdout, split into
  launches at the ``kernel-launch`` lines (:mod:`placement.judgement.repeats.loop_script`), and
  each ``--var ENTRY REGEX`` reads one variable from each launch's first line
  matching ``REGEX`` (its first group). Every variable with stored runs is
  judged; the job runs again while any of them is undecided below the cap.

The baseline's stored runs are read from the reference file's ``_samples``.
Exit 0: stop (decided, at the cap, or nothing to judge against); exit 1: run
again. ``--word`` prints ``stop`` or ``continue`` and exits 0, for a shell loop
that would rather read a word (with ``--output``, each variable's decision
goes to stderr, so the job's error file shows why it ran again). Bad input:
one line, exit 2.
"""

from __future__ import annotations

import argparse
import functools
import re
import shlex
import sys
from pathlib import Path

from ...util import PlacementError, regular_file
from .. import baselines, verdict
from . import loop_script
from ..verdict.intervals import parse_entry


def stored_runs(path: Path, entry: str) -> baselines.samples.Samples | None:
    """The baseline's runs of ``entry`` (``Test[k1,k2].var``); None when it has none."""
    e = parse_entry(entry)
    if e is None:
        raise PlacementError(f"invalid entry {entry!r} (expected Test[index values].var, "
                             "as `placement baseline diff` prints it)")
    st = path.stat()
    return _stored(str(path), st.st_mtime_ns, st.st_size)[0].get(e)


def file_context(path: Path) -> tuple[verdict.over_sessions.Prior, int]:
    """The file's session-spread prior and how many values it keeps runs for."""
    st = path.stat()
    _, prior, n = _stored(str(path), st.st_mtime_ns, st.st_size)
    return prior, n


@functools.lru_cache(maxsize=4)
def _stored(path: str, _mtime_ns: int, _size: int):
    """A reference file's stored runs by entry, its prior and its number of values, read
    once per version of the file (every NPB case of a session asks, the file is the same)."""
    samples = baselines.samples.entries(baselines.store.load(Path(path)), path)
    by_entry = {(test, tuple(map(str, k)), var): s for (test, k, var), s in samples.items()}
    prior = verdict.over_sessions.file_prior([s.session_runs for s in samples.values()])
    return by_entry, prior, len(samples)


def judge_entry(path: Path, entry: str, runs: list[float], min_runs: int, max_runs: int,
                min_effect: float) -> verdict.over_sessions.Decision | None:
    """Stop or run again for one variable against its stored runs; None when it has none.

    The one place a per-variable decision of a job's loop is made (both modes).
    """
    stored = stored_runs(path, entry)
    if stored is None:
        return None
    # judged alone, at the level a lone change needs among all the file's values (the
    # run-wide verdict corrects over them), with the spread the file's sessions show
    prior, values = file_context(path)
    try:
        return verdict.over_sessions.judge_repeats(stored.session_runs, runs, stored.higher_is_better,
                                     min_runs, max_runs, min_effect=min_effect,
                                     prior=prior, values=values)
    except ValueError as exc:
        raise PlacementError(f"{entry}: {exc}") from None


def launch_values(launches: list[tuple[int, str]], pattern: re.Pattern) -> list[float]:
    """One value per finished launch (:func:`repeat_loop.split_launches`): the first
    match's first group."""
    values = []
    for n, (rc, out) in enumerate(launches, 1):
        if rc != 0:
            raise PlacementError(f"launch {n} exited {rc}: its values are not judged")
        m = pattern.search(out)
        if m is None:
            raise PlacementError(f"launch {n} printed no line matching {pattern.pattern!r}")
        try:
            values.append(float(m.group(1)))
        except (IndexError, ValueError):
            raise PlacementError(f"launch {n}: {m.group(0)!r} gives no number as the first "
                                 f"group of {pattern.pattern!r}") from None
    return values


def judge_launches(path: Path, text: str, variables: list[tuple[str, str]], min_runs: int,
                   max_runs: int, min_effect: float) -> tuple[bool, list[str]]:
    """Whether a kernel job stops, and one line per variable saying why.

    It runs again while any variable with stored runs is undecided below the
    cap; with none stored it stops.
    """
    lines, stops = [], []
    launches = loop_script.split_launches(text)     # once for all the variables
    for entry, regex in variables:
        try:
            pattern = re.compile(regex, re.M)
        except re.error as exc:
            raise PlacementError(f"{entry}: invalid regex {regex!r} ({exc})") from None
        d = judge_entry(path, entry, launch_values(launches, pattern), min_runs, max_runs,
                        min_effect)
        if d is None:
            lines.append(f"{entry}: not judged (no stored runs)")
            continue
        stops.append(d.stop)
        lines.append(f"{entry}: {d.word}: {d.reason}")
    if not stops:
        lines.append("stop: no variable has stored runs: nothing to judge against")
    return all(stops), lines


#: the largest kernel job output read: the job's launches print a few lines each
MAX_JOB_OUTPUT = 256 * 2**20


def cmd_judge(args: argparse.Namespace) -> int:
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
    d = judge_entry(path, args.entry, runs, args.min_runs, args.max_runs, args.min_effect)
    if d is None:     # nothing stored: stop once the runs always made are done
        d = verdict.over_sessions.judge_repeats([], runs, False, args.min_runs, args.max_runs)
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
    # a regular file, bounded: a FIFO blocked the judge for ever, /dev/zero filled the memory
    text = regular_file.read_bytes(Path(args.output), "job output",
                                   MAX_JOB_OUTPUT).decode("utf-8", errors="replace")
    stop, lines = judge_launches(path, text, [tuple(v) for v in args.var], args.min_runs,
                                 args.max_runs, args.min_effect)
    word = "stop" if stop else "continue"
    if args.word:
        for line in lines:
            print(f"judge: {line}", file=sys.stderr)
        print(word)
        return 0
    print("\n".join(lines + [word]))
    return 0 if stop else 1


def register(sub) -> None:
    p = sub.add_parser("judge", help="after a run inside a job: stop (exit 0) or run again (1)")
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
    p.add_argument("--min-effect", type=fraction_arg, default=verdict.over_sessions.MIN_EFFECT,
                   help="smallest change of the median a regression needs (default 3%%)")
    p.add_argument("--word", action="store_true", help="print stop|continue, exit 0")
    p.add_argument("runs", nargs="*", help="the values of the runs made so far")
    p.set_defaults(func=cmd_judge)


def fraction_arg(text: str) -> float:
    """A minimum effect as typed: a fraction (0.03) or a percentage (3%)."""
    try:
        x = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        x = -1.0
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"invalid minimum effect {text!r} "
                                         "(a fraction such as 0.03, or 3%)")
    return x


def _python_command(python: str | None) -> list[str]:
    """The Python that loaded the checks, with this package's source first on ``PYTHONPATH``,
    so a job's judge works from the venv and from a Spack view alike."""
    src = Path(__file__).resolve().parents[3]  # src/placement/judgement/repeats/
    return ["env", f"PYTHONPATH={src}", python or sys.executable]


def _judge_command(baseline: Path, min_runs: int, max_runs: int,
                   python: str | None) -> list[str]:
    """``placement judge --word`` as a job runs it (:func:`_python_command`)."""
    return _python_command(python) + ["-m", "placement", "judge", "--baseline", str(baseline),
                                      "--min-runs", str(min_runs), "--max-runs", str(max_runs),
                                      "--word"]


@functools.lru_cache(maxsize=8)
def unavailable(python: str | None = None) -> str:
    """Why a job could not run the judge with ``python`` ('' when it can).

    Asked once per interpreter at setup, where adaptive repeats or launches are
    wanted: a judge that cannot start prints nothing inside the job and the loop
    would stop at its minimum without a word (a Spack view without py-placement
    has no SciPy).
    """
    import subprocess
    cmd = _python_command(python)
    try:
        res = subprocess.run(cmd + ["-m", "placement", "judge", "--help"],
                             capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = str(exc)
    else:
        if res.returncode == 0:
            return ""
        lines = res.stderr.strip().splitlines()
        failure = lines[-1] if lines else f"exit status {res.returncode}"
    return (f"adaptive repeats need `placement judge`, which cannot run with {cmd[-1]}: "
            f"{failure}; install the package's dependencies (SciPy, NumPy, PyYAML) into that "
            "Python (venv: `make venv`; Spack: `spack -e . install`, whose view gets "
            "py-placement) or run without -S max_repeats/max_launches")


def shell_condition(baseline: Path, entry: str, values: str, min_runs: int, max_runs: int,
                    python: str | None = None) -> str:
    """A shell condition that succeeds while the judge says ``continue``, for a job's loop.

    ``values`` is a shell command printing the runs' values so far.
    :func:`unavailable` says at setup when the judge cannot run; if it still
    fails in the job it prints nothing (its error goes to the job's stderr),
    and the loop stops.
    """
    cmd = _judge_command(baseline, min_runs, max_runs, python) + ["--entry", entry]
    return f'[ "$({shlex.join(cmd)} $({values}))" = continue ]'


def launches_condition(baseline: Path, output: str, variables: list[tuple[str, str]],
                       min_runs: int, max_runs: int, python: str | None = None) -> str:
    """The same for a kernel job: the judge reads each ``(entry, regex)`` from ``output``.

    Its reasons go to the job's stderr; if it fails it prints nothing, and the loop stops.
    """
    cmd = _judge_command(baseline, min_runs, max_runs, python) + ["--output", output]
    for entry, regex in variables:
        cmd += ["--var", entry, regex]
    return f'[ "$({shlex.join(cmd)})" = continue ]'
