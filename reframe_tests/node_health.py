"""Node health: the same few cases on every node of a partition, judged node against node.

Run it with ``--distribute`` (ReFrame pins one copy of the family to each node: one job
per node, which runs every case below in turn)::

    scripts/acceptance.sh -m quick -s SYSTEM:PART -- --distribute=all -t nodes

The cases below are the family's members, left unregistered: ``NodeHealthCheck`` (last)
is the one registered test, which runs them (:mod:`placement.testlib.family`); the run
report reader gives back each member's case as it would be from a job of its own.

Why these cases (docs/howto/accepting-a-partition.md): the fingerprint catches a node
whose hardware or cpuset differs (a DIMM, SMT, a core offline, a cgroup left behind);
the binding probe shows that compact and scatter maps bind there; memory write and
copy bandwidth (one thread over a sweep of blocks, every PU at once under three maps,
and the NUMA matrix on two nodes or more) catch a missing DIMM or a slow
memory setting; matmul compact against scatter and NPB CG and EP catch a throttling
or shared node. The cases that use every PU are several on purpose: a node short of
CPU time is slower on each of them, and the peer verdict ranks the nodes over them. The base classes are the suite's own (:mod:`placement.testlib`);
these classes only choose the few parameters a partition-wide run can afford.
Outside ``--distribute`` the family skips with the reason (``-S node=HOST``: this host).
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after

from placement.testlib.binding_probe import BindingProbeBase
from placement.testlib.kernels import (SCALES, MatmulBase, MemWriteSingleBase, MemWriteThreadsBase,
                                       NumaCopyBase)
from placement.testlib.node_health import (TAG, NodeFingerprintBase, NodeHealthFamilyBase,
                                           NodeHealthMixin)
from placement.testlib.npb import NpbBase


class NodeTopologyCheck(NodeFingerprintBase, NodeHealthMixin):
    """The node's hwloc fingerprint: packages, cores, PUs, NUMA nodes, caches, SMT, cpuset."""

    descr = "The node's topology fingerprint (hwloc, inside the job)"
    tags = {'quick', 'acceptance', 'full'}


class NodeBindingCheck(BindingProbeBase, NodeHealthMixin):
    """The binding probe under a compact and a scatter map, all PUs of the node."""

    descr = 'Threads bound where compact and scatter put them, on this node'
    affinity = parameter(['compact', 'scatter'])
    tags = {'quick', 'acceptance', 'full'}


class NodeMemWriteSingleCheck(MemWriteSingleBase, NodeHealthMixin):
    """One thread writing memory in blocks of a few sizes: the same on every node, whatever
    its PU count, so even a node left fewer PUs is compared on these values."""

    descr = 'Memory write bandwidth of one thread, a sweep of block sizes'


class NodeMemWriteCheck(MemWriteThreadsBase, NodeHealthMixin):
    """Memory write bandwidth of one thread and of every PU at once, scattered."""

    descr = 'Memory write bandwidth, one thread and one thread per PU, scatter'
    affinity = parameter(['scatter'])
    threads = parameter([1, 'full'])
    scale = parameter(SCALES)


class NodeMemWriteMapsCheck(MemWriteThreadsBase, NodeHealthMixin):
    """Memory write bandwidth of every PU at once, unbound and filling cores in order:
    two more values that use every PU, where a node short of CPU time shows (the peer
    verdict's rank test over those values needs several to call a node)."""

    descr = 'Memory write bandwidth, one thread per PU, unbound and close to cores'
    affinity = parameter(['none', 'close-cores'])
    threads = parameter(['full'])
    scale = parameter(SCALES)


class NodeMemCopyCheck(NumaCopyBase, NodeHealthMixin):
    """Copy bandwidth from every NUMA node to every NUMA node (one pair on a one-node machine)."""

    descr = 'Memory copy bandwidth, NUMA node i to node j'


class NodeMatmulCheck(MatmulBase, NodeHealthMixin):
    """OpenMP matmul unbound, under compact and under scatter: the map's effect, node
    against node (each case is one more independent value for the peers' rank test)."""

    descr = 'OpenMP matmul, unbound, compact and scatter'
    affinity = parameter(['none', 'compact', 'scatter'])
    scale = parameter(SCALES)


class NodeNpbCheck(NpbBase, NodeHealthMixin):
    """NPB CG (memory-bound) and EP (compute-bound), all PUs, scatter; skipped without NPB."""

    benchmark = parameter(['CG', 'EP'])
    npb_class = parameter(['S', 'A'])
    threads = parameter(['full'])
    affinity = parameter(['scatter'])
    #: NPB runs per case: three launches give each node its own noise.
    repeats = 3

    @run_after('init')
    def tags_of_class(self):
        # class S in a quick run (seconds), class A in acceptance and full runs
        self.tags = {TAG, 'quick'} if self.npb_class == 'S' else {TAG, 'acceptance', 'full'}


@rfm.simple_test
class NodeHealthCheck(NodeHealthFamilyBase):
    """The family above on one node, one job: ``--distribute`` makes one per node."""

    descr = 'The node-health family on one node, one job'
    members = [NodeTopologyCheck, NodeBindingCheck, NodeMemWriteSingleCheck, NodeMemWriteCheck,
               NodeMemWriteMapsCheck, NodeMemCopyCheck, NodeMatmulCheck, NodeNpbCheck]
