"""The node line from the node's own evidence: a run measured beside a competing load.

The verdict's node line (:class:`placement.judgement.verdict.over_sessions.NodeShift`) needs
most values to move together; a competing load moves them very unequally (a
kernel reporting the median of short samples hardly feels it), so a node with
two busy loops per core moved the median value of a run by only 4-13% here.
Each timed job also reads the node's CPU pressure (``cpu_wait``,
:mod:`placement.testlib.node_load`): the share of its time with a task waiting
for a CPU. Over a run, the median case's share says whether other work held the
node's CPUs while it measured; from :data:`LOAD_LIMIT` on, the acceptance run fails on one
node line, whatever its baseline, and its confirmation session runs the whole run
again (:mod:`placement.acceptance.confirmation`); the report leads with the same line.

A run over several nodes (``--distribute``) is judged per node: a job left running on one
node of four holds a quarter of the run's cases, which never moves the run's median, so
each node's own cases give its load and the line names the loaded nodes
(``n3 under a competing load: ...``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .guards import reported
from ..reading.family import expand_all
from ..reading.run_report import node_named
from ..rules import LOAD_LIMIT, MIN_CASES

#: the perfvar every timed job reports (percent)
VAR = "cpu_wait"


@dataclass(frozen=True)
class Load:
    """The median case's CPU pressure over a run's timed cases; in a run over several
    nodes, each node's own (:attr:`nodes`), of which one loaded node loads the run."""

    median: float
    cases: int
    #: the node it was read on, in a run over several nodes ("" otherwise)
    node: str = ""
    #: each node's own load, in a run over several nodes (empty otherwise)
    nodes: tuple[Load, ...] = ()

    @property
    def loaded(self) -> bool:
        if self.nodes:
            return any(n.loaded for n in self.nodes)
        return self.cases >= MIN_CASES and self.median >= LOAD_LIMIT

    def loaded_nodes(self) -> list[str]:
        """The nodes whose own cases say they were loaded (a run over several nodes)."""
        return [n.node for n in self.nodes if n.loaded]

    def text(self) -> str:
        if self.nodes:      # the loaded nodes, else the busiest: what a reader checks first
            shown = [n for n in self.nodes if n.loaded] or \
                [max(self.nodes, key=lambda n: n.median)]
            return "; ".join(f"{n.node}: {n.text()}" for n in shown)
        return (f"tasks waited for a CPU {self.median:.0%} of the time in the median of "
                f"{self.cases} cases")

    def line(self) -> str:
        said = "; ".join(f"{n.node} under a competing load: {n.text()}"
                         for n in self.nodes if n.loaded) or \
            f"node under a competing load: {self.text()}"
        return (f"{said} (from {LOAD_LIMIT:.0%} the node is loaded): other work held its CPUs "
                "while the run measured")


def shown_again(first: Load, again: Load | None) -> bool:
    """Whether a confirmation session's load shows the first session's load line again: the
    run loaded, and in a run over several nodes on one of the same nodes."""
    if again is None or not again.loaded:
        return False
    return not first.nodes or bool(set(first.loaded_nodes()) & set(again.loaded_nodes()))


def of_cases(cases: list[dict[str, Any]]) -> Load | None:
    """The load over a run's final cases (ReFrame run-report dicts); None where no case
    measured it (no PSI on the node, or no timed case). Cases whose own work waits for
    CPUs by design (``waits_by_design``: a background load of their own, more threads than
    PUs) are left out: their waits say nothing of other work on the node. Cases on several
    nodes: each node's load of its own cases."""
    measured = list(_measured(cases))
    if not measured:
        return None
    run = _load([share for _, share in measured])
    by_node = _by_node(measured)
    if len(by_node) < 2 or "" in by_node:
        return run
    return Load(run.median, run.cases, nodes=tuple(by_node.values()))


def of_nodes(cases: list[dict[str, Any]]) -> dict[str, Load]:
    """Each node's own load over ``cases``, by the node its cases name (cases that name
    none are left out): what a confirmation session measured on each node, one node or
    several."""
    return {node: load for node, load in _by_node(_measured(cases)).items() if node}


def _by_node(measured: Iterable[tuple[str, float]]) -> dict[str, Load]:
    """Each node's load of its own cases (``""``: cases that name no node), by node name."""
    shares: dict[str, list[float]] = {}
    for node, share in measured:
        shares.setdefault(node, []).append(share)
    return {node: _load(s, node) for node, s in sorted(shares.items())}


def _measured(cases: list[dict[str, Any]]) -> Iterable[tuple[str, float]]:
    """(node, share of time waited) of each case that measured the node's load."""
    for tc in expand_all(cases):     # a family test's case: each member's own load
        if tc.get("waits_by_design"):
            continue
        v = reported(tc, VAR)
        if v is not None:
            yield node_named(tc), v / 100.0


def _load(shares: list[float], node: str = "") -> Load:
    return Load(statistics.median(shares), len(shares), node)
