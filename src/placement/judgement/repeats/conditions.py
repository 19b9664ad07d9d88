"""The shell conditions a job's repeat loop asks the judge with (``placement judge --word``),
and whether a job's Python can run it at all. ReFrame-free: the checks of
:mod:`placement.testlib` build their loops from these.
"""

from __future__ import annotations

import functools
import shlex
import sys
from pathlib import Path


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
        # SciPy imported by name: the package imports it at its first use (the judge's
        # first verdict), which --help alone never reaches
        res = subprocess.run(cmd + ["-c", "import sys, scipy.stats; from placement.cli import "
                                    "main; sys.exit(main(['judge', '--help']))"],
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
