"""The cases whose job was still waiting on the scheduler when the time box closed: each is
named with its job id, the job's state and the scheduler's reason, and none is a hang.

Why: ReFrame's interrupt cancels the jobs, so its run report cannot say whether a case's job
was running or still pending (held, no free node, a reservation): a bare UNFINISHED line
leaves a site unable to tell a stuck scheduler from a slow node, and a pending job with no
time limit of its own read as hung, which ``--resume`` then skipped. scripts/acceptance.sh
asks the scheduler just before the interrupt and keeps its answer beside the part's run
report (:mod:`placement.util.scheduler_queue`); the case and its job id are ReFrame's own
(the report's ``jobid``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..judgement import reading
from ..util import PlacementError, regular_file, scheduler_queue
from .parts import Part, case_key

#: beside a part's run report, the scheduler's answer taken as its time box closed
QUEUE_MARK = ".queue"
#: the largest such file read (one job a line of JSON: thousands fit)
MAX_BYTES = 4 * 2**20
#: the cases named in the ACCEPTANCE line itself; the WAITING lines name them all
IN_LINE = 3
_HASH = re.compile(r"[0-9a-f]{8}")


@dataclass(frozen=True)
class Waiting:
    """A case whose job the scheduler had not started (or held back) when the box closed."""

    case: str
    #: ``system:partition+environ``
    where: str
    job: str
    scheduler: str
    state: str
    reason: str
    stage: str

    def line(self) -> str:
        """The case's WAITING line."""
        return (f"WAITING {self.case} @{self.where} [{self._job_words()} when the time box "
                f"closed: waiting on the scheduler, no hang; --resume runs it again] "
                f"stage={self.stage}")

    def short(self) -> str:
        """The case in the ACCEPTANCE line: its name and its job's words."""
        return f"{self.case} {self._job_words()}"

    def _job_words(self) -> str:
        return f"job {self.job} {self.state}" + (f" ({self.reason})" if self.reason else "")

    def data(self) -> dict[str, str]:
        """The finding's structured data."""
        return {"case": self.case, "job": self.job, "scheduler": self.scheduler,
                "state": self.state, "reason": self.reason}


def queue_of(report: Path) -> dict[str, dict[str, scheduler_queue.JobState]]:
    """The scheduler's answer kept beside ``report`` (scheduler name -> job id -> state),
    empty when there is none or it cannot be read: the cases are then named as before."""
    path = report.with_suffix(QUEUE_MARK)
    if not path.is_file():
        return {}
    try:
        jobs = json.loads(regular_file.read_text(path, "queue snapshot", MAX_BYTES))["jobs"]
        out = {sched: {job: scheduler_queue.checked(job, s.get("state"), s.get("reason"))
                       for job, s in by_id.items()}
               for sched, by_id in jobs.items()}
    except (PlacementError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    # what a scheduler could not have said (a line break in a state) is left out
    return {sched: {j: s for j, s in by_id.items() if s is not None}
            for sched, by_id in out.items()}


def by_queue(parts: list[Part]) -> dict[tuple, Waiting]:
    """The cases whose last attempt the time box interrupted while its job was waiting on the
    scheduler, keyed as :func:`.parts.final_cases`."""
    found: dict[tuple, Waiting] = {}
    for part in parts:                  # as final_cases: the last attempt decides
        queue = queue_of(part.path)
        for run in part.data["runs"]:
            for tc in run.get("testcases", []):
                w = _waiting(tc, queue)
                if w is None:
                    found.pop(case_key(tc), None)
                else:
                    found[case_key(tc)] = w
    return found


def _waiting(tc: dict[str, Any], queue: dict) -> Waiting | None:
    """``tc`` as a waiting case: interrupted by the box in its run phase, its job (the report's
    ``jobid``) in a waiting state as the scheduler named it; else None."""
    if not (tc.get("result") == "abort" and tc.get("fail_phase") == "run"
            and "KeyboardInterrupt" in str(tc.get("fail_reason"))):
        return None
    sched, job = str(tc.get("scheduler") or ""), str(tc.get("jobid") or "")
    state = queue.get(sched, {}).get(job)
    if state is None or not scheduler_queue.is_waiting(sched, state.state):
        return None
    where = f"{tc.get('system')}:{tc.get('partition')}+{tc.get('environ')}"
    stage = tc.get("stagedir")
    return Waiting(_case_name(tc), where if reading.run_report.is_name(where) else "?", job,
                   sched, state.state, state.reason,
                   stage if reading.run_report.is_name(stage) else "?")


def _case_name(tc: dict[str, Any]) -> str:
    """The case's display name, or its hash where the name cannot go into a line."""
    name = tc.get("display_name")
    if reading.run_report.is_name(name):
        return name
    h = str(tc.get("hashcode") or "")
    return f"/{h}" if _HASH.fullmatch(h) else "?"


def note(waiting: list[Waiting]) -> str:
    """The ACCEPTANCE line's words on the waiting cases: the first :data:`IN_LINE` named."""
    named = "; ".join(w.short() for w in waiting[:IN_LINE])
    more = f"; {len(waiting) - IN_LINE} more on WAITING lines" if len(waiting) > IN_LINE else ""
    return f"{len(waiting)} case(s) waiting on the scheduler: {named}{more}"
