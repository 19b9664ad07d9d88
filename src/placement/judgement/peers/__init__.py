"""The peers: a partition's nodes judged against each other within one session.

:mod:`.cases` turns a run's cases into per-node values, :mod:`.partition` makes the
partition's lines, with :mod:`.coverage` (which nodes have values enough to judge),
:mod:`.maxt` (the one test that names nodes: a step-down max-statistic permutation test,
its level following from its construction), :mod:`.leave_one_out` (each value's
change against its peers, described), :mod:`.topology` (the nodes' topology fingerprints)
and :mod:`.declared` (each fingerprint against the system file's node).
"""

from . import cases, coverage, declared, leave_one_out, maxt, partition, topology

__all__ = ["cases", "coverage", "declared", "leave_one_out", "maxt", "partition", "topology"]
