"""Run reports as the node's load probe would have seen them, for tests of the load line."""

from __future__ import annotations

import copy


def with_load(data: dict, wait: float) -> dict:
    """A copy of the run report ``data`` in which every case's tasks waited for a CPU
    ``wait`` % of the time (``cpu_wait``, fixtures left out)."""
    data = copy.deepcopy(data)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if not tc.get("fixture"):
                tc.setdefault("perfvalues", {})[f"{tc['system']}:{tc['partition']}:cpu_wait"] = \
                    [wait, None, None, None, "%", None]
    return data
