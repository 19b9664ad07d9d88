"""``placement judge``: inside a job, after each run, whether to run the case again.

The job passes the case's entry (as ``placement baseline diff`` prints it,
``Test[index values].var``), the reference file and the values of the runs
made so far; the baseline's stored runs are read from the file's
``_samples``. Exit 0: stop (decided, at the cap, or nothing to judge against);
exit 1: run again. ``--word`` prints ``stop`` or ``continue`` and exits 0, for
a shell loop that would rather read a word. Bad input: one line, exit 2.
"""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path

from . import baseline_samples, baselines, verdict
from .baseline_cli import fraction_arg
from .errors import PlacementError

_ENTRY = re.compile(r"^(?P<test>[A-Za-z_]\w*)\[(?P<keys>[^\]]*)\]\.(?P<var>\w+)$")


def stored_runs(path: Path, entry: str) -> baseline_samples.Samples | None:
    """The baseline's runs of ``entry`` (``Test[k1,k2].var``); None when it has none."""
    m = _ENTRY.match(entry)
    if not m:
        raise PlacementError(f"invalid entry {entry!r} (expected Test[index values].var, "
                             "as `placement baseline diff` prints it)")
    keys = tuple(k for k in m.group("keys").split(",") if k != "")
    st = path.stat()
    return _stored(str(path), st.st_mtime_ns, st.st_size).get((m.group("test"), keys,
                                                               m.group("var")))


@functools.lru_cache(maxsize=4)
def _stored(path: str, _mtime_ns: int, _size: int) -> dict[tuple[str, tuple[str, ...], str],
                                                           baseline_samples.Samples]:
    """A reference file's stored runs by entry, read once per version of the file
    (every NPB case of a session asks, the file is the same)."""
    return {(test, tuple(map(str, k)), var): s for (test, k, var), s
            in baseline_samples.entries(baselines.load(Path(path)), path).items()}


def cmd_judge(args: argparse.Namespace) -> int:
    if args.min_runs < 1 or args.max_runs < args.min_runs:
        raise PlacementError(f"invalid repeats: need 1 <= --min-runs ({args.min_runs}) "
                             f"<= --max-runs ({args.max_runs})")
    runs = []
    for text in args.runs:
        try:
            runs.append(float(text))
        except ValueError:
            raise PlacementError(f"invalid run value {text!r} (expected a number)") from None
    path = Path(args.baseline)
    if not path.is_file():
        raise PlacementError(f"reference file {str(path)!r} not found")
    stored = stored_runs(path, args.entry)
    try:
        d = verdict.judge_repeats(stored.runs if stored else [], runs,
                                  stored.higher_is_better if stored else False,
                                  args.min_runs, args.max_runs, min_effect=args.min_effect)
    except ValueError as exc:
        raise PlacementError(f"{args.entry}: {exc}") from None
    if args.word:
        print(d.word)
        return 0
    print(f"{d.word}: {d.reason}")
    return 0 if d.stop else 1


def register(sub) -> None:
    p = sub.add_parser("judge", help="after a run inside a job: stop (exit 0) or run again (1)")
    p.add_argument("--baseline", required=True, help="the system's reference file")
    p.add_argument("--entry", required=True, help="Test[index values].var")
    p.add_argument("--min-runs", type=int, default=verdict.MIN_RUNS,
                   help=f"runs before any verdict (default {verdict.MIN_RUNS})")
    p.add_argument("--max-runs", type=int, default=verdict.MAX_RUNS,
                   help=f"the cap (default {verdict.MAX_RUNS})")
    p.add_argument("--min-effect", type=fraction_arg, default=verdict.MIN_EFFECT,
                   help="smallest change of the median a regression needs (default 3%%)")
    p.add_argument("--word", action="store_true", help="print stop|continue, exit 0")
    p.add_argument("runs", nargs="*", help="the values of the runs made so far")
    p.set_defaults(func=cmd_judge)


def _judge_command(python: str | None) -> list[str]:
    """How a job runs the judge: the Python that loaded the checks, this package's source first."""
    import sys
    src = Path(__file__).resolve().parents[1]
    return ["env", f"PYTHONPATH={src}", python or sys.executable]


@functools.lru_cache(maxsize=8)
def unavailable(python: str | None = None) -> str:
    """Why a job could not run the judge with ``python`` ('' when it can).

    Asked once per interpreter at setup, where adaptive repeats are wanted: a judge
    that cannot start prints nothing inside the job and the loop would stop at its
    minimum without a word (a Spack view without py-placement has no SciPy).
    """
    import subprocess
    cmd = _judge_command(python)
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
            "py-placement) or run without -S max_repeats")


def shell_condition(baseline: Path, entry: str, values: str, min_runs: int, max_runs: int,
                    python: str | None = None) -> str:
    """A shell condition that succeeds while the judge says ``continue``, for a job's loop.

    ``values`` is a shell command printing the runs' values so far. The judge
    runs with the Python that loaded the checks and this package's source on
    ``PYTHONPATH``, so it works from the venv and from a Spack view alike (with
    py-placement installed there); :func:`unavailable` says at setup when it
    cannot. If it still fails in the job it prints nothing (its error goes to
    the job's stderr), and the loop stops.
    """
    import shlex
    cmd = _judge_command(python) + [
        "-m", "placement", "judge", "--baseline", str(baseline), "--entry", entry,
        "--min-runs", str(min_runs), "--max-runs", str(max_runs), "--word"]
    return f'[ "$({shlex.join(cmd)} $({values}))" = continue ]'
