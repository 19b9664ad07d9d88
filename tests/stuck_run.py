"""What an acceptance run that does not end in time is doing, for the message of the test that
waited on it: its processes (``ps``, with where each one sleeps in the kernel), its output and
the tail of ReFrame's log, so that a failure in CI says which process blocks."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

PS_FIELDS = 'pid,ppid,pgid,stat,etime,wchan:24,args'


def running(pid: int) -> bool:
    """Whether ``pid`` still runs: a killed process that init has not reaped yet (a zombie,
    state ``Z``) has ended."""
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def sigint_default() -> None:
    """A child's SIGINT as a terminal's shell leaves it: a suite started in the background
    (a CI job, ``make test &``) inherits it ignored, and the signal tests would wait in vain."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _carries_tag(pid: int, script_pid: int) -> bool:
    """Whether ``pid`` carries the run tag of the script ``script_pid`` (scripts/acceptance.sh
    puts ``PLACEMENT_ACCEPTANCE_RUN=<its pid>-<stamp>`` in ReFrame's environment, so ReFrame,
    its jobs and what they detached carry it)."""
    try:
        env = Path(f'/proc/{pid}/environ').read_bytes().split(b'\0')
    except OSError:
        return False
    return any(v.startswith(f'PLACEMENT_ACCEPTANCE_RUN={script_pid}-'.encode()) for v in env)


def run_processes(script_pid: int) -> str:
    """``ps`` lines of the script's descendants and of every process carrying its run tag
    (the script's own line first)."""
    ps = subprocess.run(['ps', '-eo', PS_FIELDS], capture_output=True, text=True).stdout
    head, *rows = ps.splitlines()
    parent = {}
    for row in rows:
        pid, ppid = row.split()[:2]
        parent[int(pid)] = int(ppid)

    def in_run(pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            if pid == script_pid:
                return True
            seen.add(pid)
            pid = parent.get(pid, 0)
        return False

    mine = [r for r in rows if in_run(int(r.split()[0])) or _carries_tag(int(r.split()[0]),
                                                                          script_pid)]
    return '\n'.join([head, *mine])


def end_run(processes: str) -> None:
    """SIGKILL every process :func:`run_processes` listed: a stuck ReFrame is in a process
    group of its own and would otherwise linger until its time box kills it."""
    for row in processes.splitlines()[1:]:
        try:
            os.kill(int(row.split()[0]), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def stuck_report(processes: str, results: Path, out: str, err: str) -> str:
    """A stuck run's ``processes`` (taken while it was stuck: :func:`run_processes`), its
    stdout and stderr tails and the tail of ReFrame's log in its ``results`` folder."""
    log = results / 'reframe.log'
    try:
        log_tail = ''.join(log.read_text(errors='replace').splitlines(True)[-40:])
    except OSError as e:
        log_tail = f'({e})'
    return (f'processes of the run:\n{processes}\n'
            f'--- stdout (tail):\n{out[-3000:]}\n--- stderr (tail):\n{err[-3000:]}\n'
            f'--- {log} (tail):\n{log_tail}')
