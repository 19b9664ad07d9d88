"""NAS Parallel Benchmarks (OpenMP) under every thread map and memory policy.

Three families of one base class (:class:`placement.testlib.npb.NpbBase`):
``quick`` (classes S/W, 1 thread and the full count: minutes on a laptop),
``acceptance`` (classes A/B, the whole thread sweep, the studies' maps,
first-touch and interleave) and ``full`` (classes A/C, every map; every memory policy
but ``bind``, see :data:`placement.testlib.npb.NPB_POLICIES`).
Thread counts: powers of two below the system's largest PU count, ``full`` and
``2xfull`` (oversubscription, where the Bulldozer study saw placement matter most),
computed for the system ReFrame selected (:func:`placement.testlib.placed.thread_sweep`).

NPB comes from ``-S npb_dir=DIR``, ``NPB_DIR``, the Spack view or PATH; without
it every case is skipped with the way to install it.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from placement.judgement import rules
from placement.testlib.npb import AFFINITIES, NPB_POLICIES, NpbBase
from placement.testlib.placed import thread_sweep


@rfm.simple_test
class NpbQuickCheck(NpbBase):
    """Smoke run of every benchmark: small classes, serial and full count, OS vs scatter."""

    npb_class = parameter(['S', 'W'])
    threads = parameter([1, 'full'])
    affinity = parameter(['none', 'scatter'])
    tags = {'quick', 'npb'}
    # a smoke run: classes S/W last a second or two, too short to judge stability on a shared
    # node, or to call gross from one baseline session (their states: `no_bound`); their CV
    # is still reported, and acceptance/full judge it from 1 s
    min_judged_s = rules.NPB_SHORT_RUN_S


@rfm.simple_test
class NpbAcceptanceCheck(NpbBase):
    """The Xeon study's sweep (class B) and the Bulldozer study's class A, on any machine."""

    npb_class = parameter(['A', 'B'])
    threads = parameter(thread_sweep())
    affinity = parameter(AFFINITIES)
    policy = parameter(['first-touch', 'interleave'])
    tags = {'acceptance', 'npb'}


@rfm.simple_test
class NpbFullCheck(NpbBase):
    """The Bulldozer study's classes A and C under every map and memory policy but bind."""

    npb_class = parameter(['A', 'C'])
    threads = parameter(thread_sweep())
    affinity = parameter(AFFINITIES)
    policy = parameter(NPB_POLICIES)
    tags = {'full', 'npb'}
