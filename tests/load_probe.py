"""Run reports as the node's load probe would have seen them, for tests of the load line."""

from __future__ import annotations

import copy
from collections.abc import Mapping


def with_load(data: dict, wait: float | Mapping[str, float]) -> dict:
    """A copy of the run report ``data`` in which every case's tasks waited for a CPU
    ``wait`` % of the time (``cpu_wait``, fixtures left out); ``wait`` by node: each
    case's share that of the node its job ran on (``job_nodelist``)."""
    data = copy.deepcopy(data)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if not tc.get("fixture"):
                share = wait[tc["job_nodelist"][0]] if isinstance(wait, Mapping) else wait
                tc.setdefault("perfvalues", {})[f"{tc['system']}:{tc['partition']}:cpu_wait"] = \
                    [share, None, None, None, "%", None]
    return data
