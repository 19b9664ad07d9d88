"""The peers: a partition's nodes judged against each other within one session.

:mod:`.cases` turns a run's cases into per-node values, :mod:`.partition` decides which nodes
stand apart, with :mod:`.coverage` (which nodes have values enough to judge),
:mod:`.rank_tests`, :mod:`.ranks`, :mod:`.levels`, :mod:`.topology` (the nodes' topology
fingerprints) and :mod:`.declared` (each fingerprint against the system file's node);
:mod:`.maxt` is a step-down max-statistic permutation test of the nodes, its level
following from its construction, measured by ``benchmarks/peer_nulls.py`` and not yet in the
acceptance lines.
"""

from . import cases, coverage, declared, levels, maxt, partition, rank_tests, ranks, topology

__all__ = ["cases", "coverage", "declared", "levels", "maxt", "partition", "rank_tests", "ranks",
           "topology"]
