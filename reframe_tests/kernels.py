"""The kernels of the studies, each measured with the shared statistical loop.

The base classes (build, sizes per scale, sanity, performance variables) are in
:mod:`placement.testlib.kernels`; this file only registers the cases.
"""

import reframe as rfm

from placement.testlib.kernels import (DataMapBase, DataMapNumalizeBase, MatmulBase,
                                       MemWriteSingleBase, MemWriteThreadsBase, NumaCopyBase,
                                       PingPongBase, PthreadOpsBase)
from placement.testlib.pagesample import DataMapPageSampleBase


@rfm.simple_test
class MemWriteSingleCheck(MemWriteSingleBase):
    descr = 'One thread writing memory in blocks of k bytes (Golenkov et al., Fig. 1)'


@rfm.simple_test
class MemWriteThreadsCheck(MemWriteThreadsBase):
    descr = 'All threads writing their own block, three binding modes (Golenkov et al., Fig. 2)'


@rfm.simple_test
class NumaCopyCheck(NumaCopyBase):
    descr = 'NUMA copy bandwidth matrix, run on node i, copy to node j'


@rfm.simple_test
class PingPongCheck(PingPongBase):
    descr = 'MPI ping-pong, two ranks, one node or two'


@rfm.simple_test
class MatmulCheck(MatmulBase):
    descr = 'OpenMP matmul under none/compact/scatter (Comet Lake report)'


@rfm.simple_test
class PthreadOpsCheck(PthreadOpsBase):
    descr = 'pthread operations under load, with and without affinity (Golenkov et al., Table 1)'


@rfm.simple_test
class DataMapCheck(DataMapBase):
    descr = 'LBM-style kernel: serial vs parallel initialisation, first-touch vs interleave'


@rfm.simple_test
class DataMapNumalizeCheck(DataMapNumalizeBase):
    descr = 'Page exclusivity of the data-mapping kernel, measured with numalize'


@rfm.simple_test
class DataMapPageSampleCheck(DataMapPageSampleBase):
    descr = 'Page exclusivity and sharing of the data-mapping kernel, sampled without Pin'
