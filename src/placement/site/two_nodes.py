"""Whether a partition's launcher starts a task on a second node: one tiny job, two tasks, one
per node, each printing its host name.

Why: the two-node ping-pong needs it, and a partition of several nodes can still refuse it
(a launcher that starts every task on the job's first node; ``srun: error: task 1 launch
failed`` where the nodes' daemons cannot reach each other). Asked once, when ``site new``
writes the system file, the answer goes to ``extras['two_node_launch']``, and the ping-pong
skips with the reason instead of failing in every session.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: How long the probe may wait for two nodes, then run (seconds): a busy partition says so
#: instead of holding ``site new`` for hours.
PENDING_S, RUN_S = 600, 120


def probe(partition, workdir: Path) -> str:
    """"" when the partition's launcher started one task on each of two nodes; else why not,
    on one line (the launcher's own first error line where it printed one)."""
    from reframe.core.schedulers import Job

    with tempfile.TemporaryDirectory(prefix=".two-nodes-", dir=workdir) as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            job = Job.create(partition.scheduler, partition.launcher_type(),
                             name="placement-two-nodes", workdir=tmp,
                             sched_access=partition.access)
            job.num_tasks, job.num_tasks_per_node = 2, 1
            job.time_limit, job.max_pending_time = RUN_S, PENDING_S
            launch = job.launcher.run_command(job)
            job.prepare([f"{launch} hostname".strip()], [partition.local_env])
            job.submit()
            job.wait()
        except Exception as err:   # scheduler errors of any kind: the answer is "no"
            return f"the two-node job did not run: {' '.join(str(err).split())[:160]}"
        finally:
            os.chdir(cwd)
        return _answer(Path(tmp, job.stdout), Path(tmp, job.stderr), job.exitcode, launch)


def _answer(out: Path, err: Path, exitcode: int | None, launch: str) -> str:
    """What the job's output says: two host names, or the launcher's failure."""
    hosts = sorted(set(out.read_text(errors="replace").split())) if out.is_file() else []
    errors = [ln.strip() for ln in (err.read_text(errors="replace").splitlines()
                                    if err.is_file() else []) if ln.strip()]
    if exitcode != 0:
        said = [ln for ln in errors if "error" in ln.lower()] or errors
        return said[0][:160] if said else f"the two-node job exited {exitcode}"
    if len(hosts) < 2:
        return (f"both tasks ran on {hosts[0] if hosts else 'one node'}: the launcher "
                f"({launch.split()[0] if launch else 'local'}) starts every task on the job's "
                "first node")
    return ""
