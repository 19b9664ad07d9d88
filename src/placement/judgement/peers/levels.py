"""How the peer verdict's family-wise level is shared among its tests (Bonferroni).

Why a module of its own: the chance of naming a node of an unchanged partition is the
sum of the levels its tests are run at, so the split is the verdict's false-alarm rate
written down, and it depends only on the partition's shape (its nodes, how many values
use every PU), never on what was measured.

* half of ``PEER_ALPHA`` to the values called alone (Benjamini-Hochberg over nodes x
  values, :func:`placement.judgement.peers.partition.called_alone`);
* half to the rank tests: a node against the others over all its values (per node and
  side), and, where the partition has values that use every PU, a node slower than the
  others over those alone (per node, slower only: a CPU cap, a throttling node or a
  stray process shows where every PU is busy). A partition of an even number of nodes
  up to ``HALVES_MAX_NODES`` also asks whether half of its nodes stand apart, on the same
  two sets of values: each rank share is split again between a node and a half.

A test that cannot reach its level whatever the ranks (a perfect rank on too few
values: ``n ** -k`` above it) gives its share back to the one over all values, so a
partition without enough values that use every PU is judged as if it had none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Levels:
    """The level of each rank test, before its split over the nodes (or halves) and sides."""

    #: a node over all values (two-sided)
    node: float
    #: a node slower over the values that use every PU (0: not run)
    node_pu: float
    #: a half of the nodes over all values (0: not run)
    half: float
    #: a half slower over the values that use every PU (0: not run)
    half_pu: float


def split(alpha: float, nodes: int, pu_groups: int, halves: bool) -> Levels:
    """The rank tests' levels for ``nodes`` nodes with ``pu_groups`` independent values
    that use every PU, ``halves`` when the halves test runs; ``alpha`` is the whole
    family-wise level (the values called alone take ``alpha / 2`` of it)."""
    ranks = alpha / 2
    pairs = 2 if halves else 1
    share = ranks / pairs                     # a node's share, and a half's
    pu = share / 2 if pu_groups and reachable_node(nodes, pu_groups, share / 2) else 0.0
    half_pu = share / 2 if halves and pu_groups and \
        reachable_half(nodes, pu_groups, share / 2) else 0.0
    return Levels(node=share - pu, node_pu=pu,
                  half=(share - half_pu) if halves else 0.0, half_pu=half_pu)


def reachable_node(nodes: int, k: int, level: float) -> bool:
    """Whether a node slowest on all ``k`` values (p = ``nodes ** -k``) is called at
    ``level`` split over the nodes."""
    return nodes >= 2 and k * math.log(nodes) >= -math.log(level / nodes)


def reachable_half(nodes: int, k: int, level: float) -> bool:
    """Whether a half holding the slowest ranks on all ``k`` values (p =
    ``C(nodes, nodes/2) ** -k``) is called at ``level`` split over the halves."""
    halves = math.comb(nodes, nodes // 2)
    return nodes >= 4 and k * math.log(halves) >= -math.log(level / halves)
