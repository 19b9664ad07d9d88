"""End every process of a local job with the job, detached ones included.

ReFrame's local scheduler starts a job in a session of its own and, when the job
ends, times out or is cancelled, signals that process group: a process the job
detached (``setsid``, a daemon) is in another group and outlives the run, holding
CPUs and memory that the next case measures. Here each job's environment carries a
tag of its own (:data:`TAG_VAR`, written in the job script's preamble), which every
process it starts inherits whatever group or session it moves to; when ReFrame
signals the job's group, every process still carrying the tag gets the same signal.
A process that rewrites its own environment (rare) escapes; a batch scheduler's
cgroup covers that case on clusters.

Installed only on the ReFrame versions of
:data:`placement.util.reframe_workarounds.LOCAL_SWEEP` (docs/reference/workarounds.md).
"""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

from reframe.core import backends
from reframe.core.schedulers.local import LocalJobScheduler

from .reframe_workarounds import LOCAL_SWEEP, enabled

#: the environment variable naming the job a process belongs to
TAG_VAR = "PLACEMENT_LOCAL_JOB"


def tagged(tag: str, proc: Path = Path("/proc")) -> list[int]:
    """The processes whose environment holds ``TAG_VAR=tag`` (this user's: others' are
    unreadable and never ours)."""
    needle = f"{TAG_VAR}={tag}".encode()
    out = []
    for d in proc.glob("[0-9]*"):
        try:
            env = (d / "environ").read_bytes()
        except OSError:            # gone meanwhile, or another user's
            continue
        if needle in env.split(b"\0"):
            out.append(int(d.name))
    return out


def sweep(tag: str, sig: int) -> list[int]:
    """Send ``sig`` to every process of the job tagged ``tag``; the pids signalled."""
    hit = []
    for pid in tagged(tag):
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, sig)
            hit.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return hit


class SweepingLocalScheduler(LocalJobScheduler):
    """ReFrame's ``local`` scheduler whose signals also reach the job's detached processes."""

    def emit_preamble(self, job):
        job._placement_tag = uuid.uuid4().hex
        return [*super().emit_preamble(job), f"export {TAG_VAR}={job._placement_tag}"]

    def _sweep(self, job, sig: int) -> None:
        tag = getattr(job, "_placement_tag", None)
        if tag:
            hit = sweep(tag, sig)
            if hit:
                self.log(f"sent signal {sig} to the job's detached processes {hit}")

    def _term_all(self, job):
        super()._term_all(job)
        self._sweep(job, signal.SIGTERM)

    def _kill_all(self, job):
        try:
            self._sweep(job, signal.SIGKILL)
        finally:
            super()._kill_all(job)


def install() -> None:
    """Make ``'scheduler': 'local'`` the sweeping one (every local partition and local
    build), on the ReFrame versions the workaround was checked against."""
    if not enabled(LOCAL_SWEEP):
        return
    backends.getscheduler("local")         # imports the backends: the entry exists
    cls, error = backends._schedulers["local"]
    if cls is LocalJobScheduler:
        backends._schedulers["local"] = (SweepingLocalScheduler, error)
