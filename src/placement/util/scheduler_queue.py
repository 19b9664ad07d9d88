"""What the scheduler says of a run's jobs as its time box closes, taken just before ReFrame is
interrupted (``python -m placement.util.scheduler_queue LOG OUT``, from scripts/acceptance.sh).

Why: ReFrame's interrupt cancels every job it still has, and a cancelled job reads
``CANCELLED`` whether it was running or still waiting (held, no free node, a reservation).
An UNFINISHED line that names neither the job nor its state leaves a site unable to tell a
stuck scheduler from a slow node, and a case whose job never started would read as hung.
So the scheduler is asked first, and its answer is kept beside the run report
(:func:`snapshot`); the summary names the cases that were still waiting
(:mod:`placement.acceptance.waiting`).

The jobs asked about are ReFrame's own: its debug log (``reframe.log`` in the results
folder, rewritten by each session) names the scheduler of each case's run job and each job
it spawned. Only Slurm is asked (``squeue``); other schedulers' jobs are left unnamed.

This module imports nothing of the package but :mod:`.atomic`, so it starts in a fraction of
a second at the box's close, where the rest of the package would take seconds.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from . import atomic

#: ReFrame's names of its Slurm backends (``squeue`` polls with squeue, for want of sacct)
SLURM = ("slurm", "squeue")
#: Slurm states of a job whose tasks are not running: still waiting on the scheduler
WAITING = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                     "RESV_DEL_HOLD", "SUSPENDED"})
#: what squeue prints per job: id, state, reason (``1|PENDING|JobHeldUser``)
SQUEUE_FORMAT = "%i|%T|%r"
#: seconds the scheduler gets to answer: the box closes that much later at most
ASK_SECONDS = 15
#: the most job ids asked about (a session has at most its cases' run jobs)
MAX_JOBS = 5000
#: the longest reason kept (Slurm's are a word, or a word and a node list)
MAX_REASON = 120

_LOG_LINE = re.compile(r"^\[[^\]]*\] debug: .*? /(?P<hash>[0-9a-f]{8}) @(?P<where>\S+): "
                       r"(?P<msg>.*)$")
_SETUP = re.compile(r"^Setting up .* job for test .* \(scheduler: '(?P<sched>[\w-]{1,32})', ")
_SPAWNED = re.compile(r"^Spawned run job \(id=(?P<id>[^)]{1,64})\)$")
_JOB_ID = re.compile(r"\d{1,20}")
_STATE = re.compile(r"[A-Z_]{1,32}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True)
class JobState:
    """One job as the scheduler named it."""

    job: str
    state: str
    reason: str

    @property
    def waiting(self) -> bool:
        return self.state in WAITING


def spawned_jobs(lines: Iterable[str]) -> dict[str, list[str]]:
    """The run jobs ReFrame's debug log says it spawned, by scheduler name, in order.

    A case's scheduler is that of its last ``Setting up ... job`` line (its build job's
    comes first, its run job's last) before its ``Spawned run job (id=N)`` line."""
    sched_of: dict[tuple[str, str], str] = {}
    out: dict[str, list[str]] = {}
    for line in lines:
        if "Setting up " not in line and "Spawned run job" not in line:
            continue
        m = _LOG_LINE.match(line.rstrip("\n"))
        if not m:
            continue
        key = (m["hash"], m["where"])
        setup, spawned = _SETUP.match(m["msg"]), _SPAWNED.match(m["msg"])
        if setup:
            sched_of[key] = setup["sched"]
        elif spawned and key in sched_of and _JOB_ID.fullmatch(spawned["id"]):
            ids = out.setdefault(sched_of[key], [])
            if spawned["id"] not in ids:
                ids.append(spawned["id"])
    return out


def parse_squeue(text: str) -> dict[str, JobState]:
    """``squeue -h -o '%i|%T|%r'`` output by job id. A line that is not one job's (an id that
    is not a number, a state that is not a word, a reason with a control character or over
    :data:`MAX_REASON` characters) is left out: its words go into one-line outputs. An array
    task (``12_3``) is its job's (ReFrame knows the job by ``12``); the first line wins."""
    out: dict[str, JobState] = {}
    for line in text.splitlines():
        fields = line.split("|", 2)
        if len(fields) != 3:
            continue
        job, state, reason = (f.strip() for f in fields)
        job = job.split("_", 1)[0]
        if not (_JOB_ID.fullmatch(job) and _STATE.fullmatch(state)) or job in out:
            continue
        if not reason or len(reason) > MAX_REASON or _CONTROL.search(reason):
            reason = ""
        out[job] = JobState(job, state, reason)
    return out


def ask_slurm(ids: list[str]) -> tuple[dict[str, JobState], str]:
    """Slurm's state and reason of the jobs ``ids``, and what went wrong ("" if nothing).

    A job Slurm no longer knows is simply absent (squeue says ``Invalid job id`` when it
    knows none of those asked)."""
    cmd = ["squeue", "-h", "-j", ",".join(ids[:MAX_JOBS]), "-o", SQUEUE_FORMAT]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=ASK_SECONDS)
    except (OSError, subprocess.SubprocessError) as exc:
        return {}, f"squeue did not answer: {type(exc).__name__}: {exc}"[:300]
    if proc.returncode != 0 and not proc.stdout.strip():
        said = (proc.stderr.strip().splitlines() or [""])[-1]
        if "Invalid job id" in said:
            return {}, ""
        return {}, f"squeue exited {proc.returncode}: {said}"[:300]
    return parse_squeue(proc.stdout), ""


def snapshot(log: Path, out: Path) -> bool:
    """Asks the scheduler about the run jobs ``log`` names and writes its answer to ``out``
    (JSON, atomically): ``taken_at``, ``jobs`` (scheduler name -> id -> state and reason)
    and ``errors``. Nothing is written when the log names no Slurm job; returns whether a
    file was written."""
    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            spawned = spawned_jobs(fh)
    except OSError:
        return False
    jobs: dict[str, dict[str, dict[str, str]]] = {}
    errors: list[str] = []
    for sched, ids in spawned.items():
        if sched not in SLURM:
            continue
        states, error = ask_slurm(ids)
        jobs[sched] = {j: {k: v for k, v in asdict(s).items() if k != "job"}
                       for j, s in states.items()}
        errors += [error] if error else []
    if not jobs:
        return False
    taken = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    atomic.write_text(out, json.dumps({"taken_at": taken, "jobs": jobs, "errors": errors},
                                      indent=1, sort_keys=True) + "\n")
    return True


def main(argv: list[str]) -> int:
    """``LOG OUT``: :func:`snapshot`; never fails the run (the line then names no job)."""
    if len(argv) != 2:
        print("usage: python -m placement.util.scheduler_queue REFRAME_LOG OUT", file=sys.stderr)
        return 2
    try:
        snapshot(Path(argv[0]), Path(argv[1]))
    except Exception as exc:      # noqa: BLE001 - best effort: one line, the run goes on
        print(f"scheduler_queue: no snapshot of the queue: {type(exc).__name__}: {exc}"[:300],
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
