"""Run reports as the node's load probe would have seen them, for tests of the load line."""

from __future__ import annotations

import copy
from collections.abc import Mapping

from placement.judgement import verdict, reading


def with_load(data: dict, wait: float | Mapping[str, float]) -> dict:
    """A copy of the run report ``data`` in which every case's tasks waited for a CPU
    ``wait`` % of the time (``cpu_wait``, fixtures left out); ``wait`` by node: each
    case's share that of the node it ran on, as the load line reads it
    (:func:`placement.judgement.reading.run_report.node_named`)."""
    share = wait.__getitem__ if isinstance(wait, Mapping) else lambda _node: wait
    data = copy.deepcopy(data)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if not tc.get("fixture"):
                key = f"{tc['system']}:{tc['partition']}:{verdict.node_load.VAR}"
                tc.setdefault("perfvalues", {})[key] = \
                    [share(reading.run_report.node_named(tc)), None, None, None, "%", None]
    return data
