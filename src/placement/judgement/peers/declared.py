"""Each node's topology fingerprint against the node its system file declares.

Why beside the peers' comparison (:mod:`.topology`): nodes alike among themselves can all
be unlike the node the system was set up for. A DIMM missing on every node, SMT switched
off across the partition, or one cpuset left on every node by a prolog makes no node stand
apart, so the peers pass it; the declared node (the topology ``placement site new``
captured and wrote beside the system file, ``extras['topology']``) does not. The
fingerprint case records that node's fingerprint, made by the same function as its own
(:func:`placement.testlib.node_health.fingerprint`), so the two are compared field by field
and a run report is judged the same wherever and whenever it is read.

**One line per way of differing**, naming every node that differs that way:
``4 nodes (n1, n2, n3, n4) differ in topology from the declared node (topologies/x.xml):
smt 1 (declared 2)``. Why: the case this check exists for is every node differing alike,
where a line per node would repeat one fact as many times as the partition has nodes (a
thousand lines for one BIOS setting); nodes that differ in other ways still get a line of
their own, so no difference is hidden behind another.

Quiet where the peers have already said it: when more than half the nodes are the
declared node, that is the majority the peers' line compares with, and it already names
each node that differs and how. A partition whose cases recorded no declared node (the
catch-all system, a topology read ``live``, an older run report) gets no line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...util import one_line
from ..rules import PEER_MEMORY_SLACK
from .topology import fingerprint_diffs

#: the nodes a line names before it counts the rest (the COUNT line names as many)
NAMES_MAX = 20


@dataclass(frozen=True)
class DeclaredNode:
    """The node a partition's system file declares: its fingerprint, and the topology file
    it was made from (as the line shows it)."""

    fingerprint: Mapping[str, Any]
    source: str
    #: the nodes the system file says the partition has (``extras['nodes']``); 0: unsaid
    nodes: int = 0


@dataclass(frozen=True)
class DeclaredDiff:
    """Nodes whose fingerprint differs from the declared node's, all in the same way."""

    nodes: tuple[str, ...]
    source: str
    diffs: tuple[str, ...]

    def line(self, where: str) -> str:
        return f"NODES {where}: {self.who()} from the declared node ({self.source}): " + \
            "; ".join(self.diffs)

    def who(self) -> str:
        """``n2 topology differs`` for one node; ``4 nodes (n1, ...) differ in topology``."""
        if len(self.nodes) == 1:
            return f"{self.nodes[0]} topology differs"
        shown = one_line.first_of(self.nodes, NAMES_MAX, sep=", ")
        return f"{len(self.nodes)} nodes ({shown}) differ in topology"


def declared_diffs(fingerprints: Mapping[str, Mapping[str, Any]], nodes: Sequence[str],
                   declared: DeclaredNode | None) -> list[DeclaredDiff]:
    """The nodes whose fingerprint differs from ``declared``, grouped by how they differ
    (in node order); none when nothing was declared or when most nodes are the declared
    node (the peers' line names the rest)."""
    have = [n for n in nodes if n in fingerprints]
    if declared is None or not declared.fingerprint or not have:
        return []
    want = comparable(declared.fingerprint)
    groups: dict[tuple[str, ...], list[str]] = {}
    for n in have:
        own = {k: str(v) for k, v in held(fingerprints[n], want).items() if k in want}
        diffs = fingerprint_diffs(own, {k: str(v) for k, v in want.items()}, "declared")
        groups.setdefault(diffs, []).append(n)
    alike = len(groups.get((), []))
    if 2 * alike > len(have):
        return []
    return [DeclaredDiff(tuple(ns), declared.source, diffs)
            for diffs, ns in groups.items() if diffs]


def comparable(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The declared fields a node is held to: those the file says something of (a
    topology made from a synthetic description has no memory and may have no caches, 0
    in the fingerprint), and ``pus_allowed`` only when the capture was allowed the whole
    node (one made in a smaller job says what that job could use, not what the node's
    jobs may)."""
    out = {k: v for k, v in declared.items() if v != 0}
    if out.get("pus_allowed") != out.get("pus"):
        out.pop("pus_allowed", None)
    return out


def held(own: Mapping[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
    """``own`` as it is held to ``declared``: each memory size within
    :data:`PEER_MEMORY_SLACK` (or one unit) of the declared size set to it (what the kernel
    keeps for itself moves a node's memory from boot to boot; a DIMM missing moves it far
    more), and a node whose jobs may use all its PUs allowed as many as declared (a node
    with fewer PUs says so in ``pus``, not twice)."""
    out = dict(own)
    if "pus_allowed" in declared and out.get("pus_allowed") == out.get("pus"):
        out["pus_allowed"] = declared["pus_allowed"]
    for k, want in declared.items():
        v = out.get(k)
        if "memory" in k and isinstance(v, (int, float)) and isinstance(want, (int, float)) \
                and abs(v - want) <= max(1, PEER_MEMORY_SLACK * want):
            out[k] = want
    return out
