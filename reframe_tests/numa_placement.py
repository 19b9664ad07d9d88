"""Pages where the memory policy and first touch say they go, judged from ``numa_maps``.

``MemoryPolicyCheck`` shows that a policy is in force; this shows that it took
effect: the datamap kernel's arrays right after initialisation, under interleave
(every node its share), bind and preferred to node 1 (there), and first touch by
one thread (its node) or with the compute schedule (each node the rows its
threads own). Thresholds: ``placement.checks.page_placement``. Each case also records
``kernel.numa_balancing`` and the pages after initialisation and at the end.
Needs two NUMA nodes; skipped with the reason elsewhere.
"""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, parameter, run_after, sanity_function

from placement.checks import page_placement
from placement.testlib.builds import SourceTreeBuild
from placement.testlib.datamap_pages import DataMapPagesMixin
from placement.testlib.placed import PlacedRunMixin


class DataMapBuild(SourceTreeBuild):
    """The kernels of src/kernels, of which this check runs datamap."""

    source_subdir = 'kernels'

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.exists(self.path('datamap')), msg='datamap was not built')


@rfm.simple_test
class PagePlacementCheck(rfm.RunOnlyRegressionTest, PlacedRunMixin, DataMapPagesMixin):
    """The datamap arrays' pages after initialisation, per policy and initialisation."""

    descr = 'Pages placed by interleave, bind, preferred and first touch (numa_maps)'
    datamap = fixture(DataMapBuild, scope='environment')
    valid_systems = ['*']
    valid_prog_environs = ['+openmp']
    time_limit = '5m'
    affinity = 'compact'
    policy = parameter(['first-touch', 'interleave', 'bind:1', 'preferred:1'])
    init = parameter(['serial', 'parallel'])
    tags = {'quick', 'acceptance', 'full', 'binding', 'numa'}

    @run_after('setup')
    def set_run(self):
        nodes = len(self.topology.numa_nodes)
        self.skip_if(nodes < 2, f'{self.current_partition.fullname} has {nodes} NUMA node: '
                                'page placement cannot differ there')
        self.executable = self.datamap.path('datamap')
        self.executable_opts = ['--nx', '256', '--ny', '256', '--init', self.init]
        self.env_vars['STATLOOP_ITERS'] = '16'

    @sn.deferrable
    def assert_pages(self):
        """Sanity: the pages after initialisation are where the policy or first touch says."""
        text = '\n'.join(sn.evaluate(sn.extractall(
            r'^(?:numa_maps_init|thread|sysctl) kernel=datamap .*$', self.stdout)))
        pol = self.launch_settings.policy
        issues = page_placement.problems(text, pol.name, list(pol.nodes), self.init)
        return sn.assert_false(issues, msg='pages not placed as asked: ' + '; '.join(issues))

    @sanity_function
    def validate(self):
        return sn.all([sn.assert_found(r'^check kernel=datamap .*ok=1', self.stdout),
                       self.assert_placed(), self.assert_pages()])
