"""The data-mapping kernel under the page sampler: page exclusivity without Pin.

``libpagesample.so`` (``src/kernels/pagesample.c``) is preloaded into the
unmodified datamap kernel and writes numalize's page CSV; the analysis is
numalize's (:mod:`placement.checks.numa_pages`) and the study's rule
(:mod:`placement.checks.page_sharing`). The kernel runs with the compute
threads placed compactly, as in ``DataMapCheck``, so that the measured
first-touch vs interleave result of that check sits beside this advice.
"""

from __future__ import annotations

import os

import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_after, sanity_function, variable

from ..checks import numa_pages, page_sharing
from .kernels import LaunchVar, PlacedKernelBase

#: The page CSV the sampler writes in the stage folder (kept with the case's output).
PAGE_CSV = 'datamap.full.page.csv'


def advice(page_csv: str, nodes: int) -> page_sharing.MappingAdvice:
    """The study's rule on the sampler's table of one run."""
    return page_sharing.recommend_mapping(numa_pages.read_page_csv(page_csv), nodes)


@sn.deferrable
def _advice_field(page_csv: str, nodes: int, field: str) -> float:
    a = advice(page_csv, nodes)
    return float(a.mapping == 'first-touch') if field == 'first_touch' else getattr(a, field)


class DataMapPageSampleBase(PlacedKernelBase):
    """Datamap under ``LD_PRELOAD=libpagesample.so``: exclusivity, sharing, the advised mapping."""

    kernel = 'datamap'
    affinity = 'compact'
    #: How the arrays are first written: ``serial`` (one thread) or ``parallel`` (with
    #: the compute schedule).
    init = parameter(['serial', 'parallel'])
    tags = {'full', 'pagesample', 'kernels'}
    #: one launch: exclusivity is a property of the access pattern, not a timing
    launches = 1
    #: Grid points per side (the small scale's).
    grid = variable(int, value=256)
    #: Time between the sampler's rounds (PAGESAMPLE_PERIOD_US).
    period_us = variable(int, value=2000)
    #: Pages armed per round (PAGESAMPLE_PAGES).
    pages_per_round = variable(int, value=256)
    #: The sampler's page CSV of the run (set at setup).
    page_csv = variable(str, value='')
    keep_files = [PAGE_CSV]

    @run_after('setup')
    def under_sampler(self):
        lib = self.kernels.path('libpagesample.so')
        self.skip_if(not os.path.exists(lib), f'libpagesample.so was not built in {self.current_environ.name}')
        self.page_csv = os.path.join(self.stagedir, PAGE_CSV)
        # only the kernel is preloaded, not the job script's other programs
        self.executable_opts = [f'LD_PRELOAD={lib}', f'PAGESAMPLE_OUTPUT={self.page_csv}',
                                f'PAGESAMPLE_PERIOD_US={self.period_us}',
                                f'PAGESAMPLE_PAGES={self.pages_per_round}', self.executable,
                                '--nx', str(self.grid), '--ny', str(self.grid), '--init', self.init]
        self.executable = 'env'

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed(),
                       sn.assert_found(r'^pagesample: \S+ pages=[1-9]', self.stderr,
                                       msg='the sampler wrote no page'),
                       sn.assert_true(sn.path_exists(self.page_csv),
                                      msg=f'no {PAGE_CSV}: the sampler did not write its table')])

    def nodes(self) -> int:
        return len(self.topology.numa_nodes)

    @performance_function('%')
    def exclusivity(self):
        return _advice_field(self.page_csv, self.nodes(), 'exclusivity')

    @performance_function('%')
    def threshold(self):
        return _advice_field(self.page_csv, self.nodes(), 'threshold')

    @performance_function('')
    def first_touch_advised(self):
        """1: the study's rule advises first-touch (parallel initialisation); 0: interleave."""
        return _advice_field(self.page_csv, self.nodes(), 'first_touch')

    def launch_vars(self):
        return [LaunchVar('mlups', 'MLUP/s', 'mlups')]
