"""Which nodes of a partition the peer verdict can judge, and the pair it cannot split.

A node is judged on its **usable** values only: a finite, positive number of a value its
launches measured (:func:`.partition.matrix` drops the rest). A node with no usable value,
or with fewer than half of what its peers had (the median count of the other nodes,
rounded down: a whole number of values, the one its line prints), is **not judged**:
counting it alike would let a node that measured nothing pass, and holding it against
its peers would make it a peer of theirs with nothing to compare. It is named on its own
line and the run is incomplete, never a pass.

Two nodes cannot tell which of them is odd: when they differ by more than the margin
(``PEER_EFFECT``, in the median over the values both have) the line says so and the run
is incomplete; within the margin they are alike as far as two nodes can tell.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NotJudged:
    """A node left out of the peer verdict: its usable values and its peers' (their median
    count, rounded down)."""

    node: str
    usable: int
    peers_had: int

    def line(self, where: str) -> str:
        return (f"NODES {where}: {self.node} not judged: {self.usable} usable values of "
                f"{self.peers_had} its peers had")

    def gap(self, where: str) -> str:
        """What the run lacks, as its ACCEPTANCE line lists it."""
        return f"{self.node} of {where} not judged by its peers ({self.usable} usable values)"


@dataclass(frozen=True)
class PairGap:
    """Two nodes compared on the values both have: ``change`` is the slower one's
    (``second``) performance against the other's, in the median over the values."""

    first: str
    second: str
    values: int
    change: float
    differ: bool

    @property
    def nodes(self) -> list[str]:
        return [self.first, self.second]

    def text(self) -> str:
        return (f"{self.first} and {self.second} differ: {self.second} {self.change:+.0%} "
                f"against {self.first} in the median of {self.values} values; which one is "
                "odd cannot be told from two")

    def gap(self, where: str) -> str:
        return f"{self.first} and {self.second} of {where} differ, which one is odd untold"


def usable_counts(m: np.ndarray) -> np.ndarray:
    """Each node's number of usable values (``m``: nodes x values, ``nan`` where none)."""
    return np.isfinite(m).sum(axis=1)


def peers_had(counts: np.ndarray, i: int) -> int:
    """What node ``i``'s peers had: the median of the other nodes' counts, rounded down
    (of an even number of nodes it can fall between two counts: 11.5 is 11)."""
    others = np.delete(counts, i)
    return int(math.floor(np.median(others))) if len(others) else 0


def not_judged(nodes: Sequence[str], counts: np.ndarray) -> list[NotJudged]:
    """The nodes with no usable value, or fewer than half of what their peers had
    (:func:`peers_had`, the number the line prints: the rule and the line agree)."""
    out = []
    for i, node in enumerate(nodes):
        had = peers_had(counts, i)
        if counts[i] == 0 or counts[i] < 0.5 * had:
            out.append(NotJudged(node, int(counts[i]), had))
    return out


def pair_gap(m: np.ndarray, nodes: Sequence[str], effect: float) -> PairGap | None:
    """Two nodes (``m``: their two rows, log, worse positive) against each other on the
    values both have, the slower second: they differ when the median of the slower one's
    gap is at least ``effect``; None when they share no value."""
    both = np.isfinite(m[0]) & np.isfinite(m[1])
    if not both.any():
        return None
    d = float(np.median(m[1, both] - m[0, both]))
    first, second = (nodes[0], nodes[1]) if d >= 0 else (nodes[1], nodes[0])
    return PairGap(first, second, int(both.sum()), math.expm1(-abs(d)),
                   abs(d) >= math.log1p(effect))
