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
it spawned. Slurm is asked with ``squeue`` (state and reason), Grid Engine with ``qstat``
(its state letters, ``hqw``, and its ``scheduling info``); a local job is no scheduler's.

This module imports nothing of the package but :mod:`.atomic`, so it starts in a fraction of
a second at the box's close, where the rest of the package would take seconds.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import getpass
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from . import atomic, one_line

#: ReFrame's names of its Slurm backends (``squeue`` polls with squeue, for want of sacct)
SLURM = ("slurm", "squeue")
#: ReFrame's names of Grid Engine backends (``sge-access`` is config/common.py's)
SGE = ("sge", "sge-access")
#: Slurm states of a job whose tasks are not running: still waiting on the scheduler
WAITING = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                     "RESV_DEL_HOLD", "SUSPENDED"})
#: Grid Engine's state letters of a job still queued (``qw``, ``hqw``, ``Eqw``) or suspended
SGE_WAITING = frozenset("qsST")
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
_SGE_STATE = re.compile(r"[A-Za-z]{1,8}")


@dataclass(frozen=True)
class JobState:
    """One job as the scheduler named it."""

    job: str
    state: str
    reason: str


def is_waiting(scheduler: str, state: str) -> bool:
    """Whether a job in ``state`` (as ``scheduler`` names it) still waits on the scheduler."""
    if scheduler in SLURM:
        return state in WAITING
    if scheduler in SGE:
        return "d" not in state and bool(SGE_WAITING & set(state))
    return False


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
        out[job] = JobState(job, state, _reason(reason))
    return out


def checked(job: object, state: object, reason: object) -> JobState | None:
    """A job as a stored snapshot holds it, checked as a scheduler's answer is: an id of
    digits, a state of letters, a reason that may go into a line (else ""); None if not one."""
    if not (isinstance(job, str) and _JOB_ID.fullmatch(job) and isinstance(state, str)
            and (_STATE.fullmatch(state) or _SGE_STATE.fullmatch(state))):
        return None
    return JobState(job, state, _reason(reason) if isinstance(reason, str) else "")


def _reason(text: str) -> str:
    """A scheduler's reason as it may go into a line: "" where it is none."""
    text = text.strip()
    return "" if len(text) > MAX_REASON or one_line.has_control(text) else text


def parse_qstat_xml(text: str) -> dict[str, JobState]:
    """``qstat -xml -u USER`` output by job id: each job's state letters (``hqw``); its
    reason comes from ``qstat -j`` (:func:`parse_qstat_j`)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return {}
    out: dict[str, JobState] = {}
    for job in root.iter("job_list"):
        number, state = job.findtext("JB_job_number", ""), job.findtext("state", "")
        if _JOB_ID.fullmatch(number) and _SGE_STATE.fullmatch(state) and number not in out:
            out[number] = JobState(number, state, "")
    return out


def parse_qstat_j(text: str) -> dict[str, str]:
    """``qstat -j ID,...`` output: each job's first ``scheduling info`` line, by job id (Grid
    Engine says it only where the scheduler keeps job information, ``schedd_job_info``)."""
    out: dict[str, str] = {}
    job = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "job_number":
            job = value.strip()
        elif key.strip() == "scheduling info" and _JOB_ID.fullmatch(job) and job not in out:
            out[job] = _reason(value)
    return out


def _ask(cmd: list[str], seconds: float) -> tuple[str, str]:
    """A scheduler command's output and what went wrong ("" if nothing)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds)
    except (OSError, subprocess.SubprocessError) as exc:
        return "", f"{cmd[0]} did not answer: {type(exc).__name__}: {exc}"[:300]
    if proc.returncode != 0 and not proc.stdout.strip():
        said = (proc.stderr.strip().splitlines() or [""])[-1]
        return "", f"{cmd[0]} exited {proc.returncode}: {said}"[:300]
    return proc.stdout, ""


def ask_slurm(ids: list[str]) -> tuple[dict[str, JobState], str]:
    """Slurm's state and reason of the jobs ``ids``, and what went wrong ("" if nothing).

    A job Slurm no longer knows is simply absent (squeue says ``Invalid job id`` when it
    knows none of those asked)."""
    out, error = _ask(["squeue", "-h", "-j", ",".join(ids[:MAX_JOBS]), "-o", SQUEUE_FORMAT],
                      ASK_SECONDS)
    return parse_squeue(out), "" if "Invalid job id" in error else error


def ask_sge(ids: list[str]) -> tuple[dict[str, JobState], str]:
    """Grid Engine's state of the jobs ``ids`` (this user's, as ReFrame polls them) and the
    scheduling info of those still waiting, and what went wrong ("" if nothing)."""
    out, error = _ask(["qstat", "-xml", "-u", getpass.getuser()], ASK_SECONDS / 2)
    states = {j: s for j, s in parse_qstat_xml(out).items() if j in set(ids)}
    waiting = [j for j, s in states.items() if is_waiting("sge", s.state)][:MAX_JOBS]
    if waiting:
        said, _ = _ask(["qstat", "-j", ",".join(waiting)], ASK_SECONDS / 2)
        reasons = parse_qstat_j(said)
        states = {j: JobState(j, s.state, reasons.get(j, "")) for j, s in states.items()}
    return states, error


def snapshot(log: Path, out: Path) -> bool:
    """Asks the scheduler about the run jobs ``log`` names and writes its answer to ``out``
    (JSON, atomically): ``taken_at``, ``jobs`` (scheduler name -> id -> state and reason)
    and ``errors``. Nothing is written when the log names no Slurm or Grid Engine job;
    returns whether a file was written."""
    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            spawned = spawned_jobs(fh)
    except OSError:
        return False
    jobs: dict[str, dict[str, dict[str, str]]] = {}
    errors: list[str] = []
    for sched, ids in spawned.items():
        if sched not in SLURM + SGE:
            continue
        states, error = (ask_slurm if sched in SLURM else ask_sge)(ids)
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
