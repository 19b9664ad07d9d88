"""The peers: a partition's nodes judged against each other within one session.

:mod:`.cases` turns a run's cases into per-node values, :mod:`.partition` decides which nodes
stand apart, with :mod:`.rank_tests`, :mod:`.ranks`, :mod:`.levels` and :mod:`.topology`
(the nodes' topology fingerprints).
"""

from . import cases, levels, partition, rank_tests, ranks, topology

__all__ = ["cases", "levels", "partition", "rank_tests", "ranks", "topology"]
