"""Hybrid MPI+OpenMP jobs place every rank and every thread where the engine says.

Runs on partitions whose launcher is ``mpirun`` or ``srun``: ranks fill the
node's packages (or NUMA nodes), one or two per domain, with one thread per
core of the rank (``fill=1``) or twice as many (``fill=2``). See
:mod:`placement.testlib.hybrid` for what is judged.
"""

import reframe as rfm

from placement.testlib.hybrid import HybridBindingBase


@rfm.simple_test
class HybridBindingCheck(HybridBindingBase):
    """Ranks x threads under the partition's launcher, verified per rank and thread."""

    descr = 'Hybrid MPI+OpenMP binding per rank and per thread'
    tags = {'quick', 'acceptance', 'full', 'binding', 'hybrid'}
