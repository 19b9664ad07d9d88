"""The kernels of the studies, each measured with the shared statistical loop.

One build per environment (``KernelsBuild``); unregistered base classes hold
the common run logic, and the small registered classes at the end name the
cases. Every kernel prints ``result`` lines (one per measurement) and
``check`` lines (its own verification of the result); the sanity of every
check needs all ``check`` lines to say ``ok=1`` -- a kernel run with
``KERNEL_CORRUPT=1`` (``-S corrupt=true``) damages its result and must fail.
"""

import os
import shutil

import reframe as rfm
import reframe.utility.osext as osext
import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import (fixture, parameter, performance_function, run_after,
                                   run_before, sanity_function, variable)

from placement import numa_pages
from placement.testlib.builds import SourceTreeBuild
from placement.testlib.placed import PlacedRunMixin, partition_topology, thread_sweep
from placement.testlib.references import BaselineReferencesMixin
from placement.testlib.samples import PerfSamplesMixin

KERNELS = ('pthread_ops', 'memwrite', 'numacopy', 'matmul', 'datamap')
#: sizes per scale; `small` runs under the quick tag
SMALL, LARGE = 'small', 'large'
SCALE_TAGS = {SMALL: {'quick', 'kernels'}, LARGE: {'acceptance', 'full', 'kernels'}}


@sn.deferrable
def _locality(lines):
    return numa_pages.datamap_locality('\n'.join(lines))


@sn.deferrable
def _exclusivity(page_csv, nodes):
    return numa_pages.application_exclusivity(numa_pages.read_page_csv(page_csv), nodes)


class KernelsBuild(SourceTreeBuild):
    """Builds every kernel of src/kernels once per environment (pingpong where mpicc is)."""

    source_subdir = 'kernels'

    @sanity_function
    def built(self):
        return sn.all([sn.assert_true(os.path.exists(self.path(k)), msg=f'{k} was not built')
                       for k in KERNELS])


class KernelRunBase(rfm.RunOnlyRegressionTest, BaselineReferencesMixin):
    """Runs one kernel from the environment's build; checks its `check` lines."""

    kernels = fixture(KernelsBuild, scope='environment')
    valid_systems = ['*']
    valid_prog_environs = ['+openmp']
    time_limit = '10m'
    #: the kernel to run (a name of KERNELS or pingpong)
    kernel = variable(str)
    #: damage the result on purpose (KERNEL_CORRUPT=1): the sanity must fail
    corrupt = variable(bool, value=False)
    #: samples of the first round of the measurement loop
    statloop_iters = variable(int, value=16)
    #: minimum number of `check` lines expected
    checks_expected = variable(int, value=1)

    @run_after('setup')
    def set_kernel(self):
        self.executable = self.kernels.path(self.kernel)
        self.skip_if(not os.path.exists(self.executable),
                     f'{self.kernel} was not built in {self.current_environ.name}')
        self.env_vars['STATLOOP_ITERS'] = str(self.statloop_iters)
        if self.corrupt:
            self.env_vars['KERNEL_CORRUPT'] = '1'

    @sn.deferrable
    def checks_ok(self):
        oks = sn.extractall(rf'^check kernel={self.kernel} .*ok=(\d)', self.stdout, 1, int)
        return sn.all([
            sn.assert_ge(sn.count(oks), self.checks_expected,
                         msg=f'{self.kernel} printed fewer than {{1}} check lines'),
            sn.assert_eq(sn.count(sn.filter(lambda v: v != 1, oks)), 0,
                         msg=f'{self.kernel} found a wrong result (a check line has ok=0)'),
        ])

    def field(self, key: str, select: str = '', conv=float):
        """Values of `key=` on this kernel's result lines that contain `select`."""
        return sn.extractall(rf'^result kernel={self.kernel} .*{select}.*\b{key}=(\S+)',
                             self.stdout, 1, conv)

    @sanity_function
    def validate(self):
        return self.checks_ok()


class PlacedKernelBase(KernelRunBase, PlacedRunMixin):
    """A kernel run under a thread map and memory policy; the probe checks the binding."""

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed()])


# ---- memory write (Golenkov et al., Fig. 1 and 2) ----

class MemWriteSingleBase(PlacedKernelBase):
    """One thread writes a large array in blocks of k bytes over a sweep of k."""

    kernel = 'memwrite'
    num_threads = 1
    affinity = 'compact'
    scale = parameter([SMALL, LARGE])

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale])
        self.blocks = ['1M', '4M', '16M'] if self.scale == SMALL else \
            ['512K', '1M', '3M', '8M', '32M', '128M', '512M']
        size = ['--size', '64M'] if self.scale == SMALL else ['--fraction', '0.1']
        self.executable_opts = ['--mode', 'single', *size, '--blocks', ','.join(self.blocks)]
        self.reference_index = ['$environ', 'scale']

    @run_before('performance')
    def set_perf(self):
        self.perf_variables = {
            f'gbps_{b}': sn.make_performance_function(
                sn.getitem(self.field('gbps', f'block_bytes={self._bytes(b)} '), 0), 'GB/s')
            for b in self.blocks}

    @staticmethod
    def _bytes(text):
        mult = {'K': 1024, 'M': 1 << 20, 'G': 1 << 30}
        return int(text[:-1]) * mult[text[-1]] if text[-1] in mult else int(text)


class MemWriteThreadsBase(PlacedKernelBase):
    """N threads each write their own block, N from one to every PU; three binding modes.

    ``none``: the OS places threads; ``scatter``: round-robin over packages
    (its "thread bound to a processor"); ``close-cores``: cores filled in order
    (its "thread bound to a core"). Thread counts above the partition's PUs
    are skipped: the study measured bandwidth as threads are added, not
    oversubscription.
    """

    kernel = 'memwrite'
    affinity = parameter(['none', 'scatter', 'close-cores'])
    threads = parameter(thread_sweep(oversubscribe=False))
    scale = parameter([SMALL, LARGE])
    #: resolved from ``threads`` at setup
    num_threads = variable(int, value=0)
    max_threads_per_pu = 1

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale])
        block = '16M' if self.scale == SMALL else '500M'
        self.executable_opts = ['--mode', 'threads', '--block', block]
        self.reference_index = ['$environ', 'scale', 'affinity', 'num_threads']

    @performance_function('GB/s')
    def gbps(self):
        return sn.getitem(self.field('gbps'), 0)


# ---- NUMA copy matrix ----

class NumaCopyBase(KernelRunBase):
    """Run on node i, source on node i, destination on node j: every (i, j)."""

    kernel = 'numacopy'
    scale = parameter([SMALL, LARGE])

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale])
        self.executable_opts = ['--size', '32M' if self.scale == SMALL else '500M']
        self.reference_index = ['$environ', 'scale']

    @run_after('setup')
    def expect_matrix(self):
        topo = partition_topology(self.current_partition.extras.get('topology'))
        self.nodes = sorted(topo.numa_nodes)
        self.checks_expected = len(self.nodes) ** 2

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(),
                       sn.assert_found(r'^matrix kernel=numacopy .*ok=1', self.stdout)])

    @run_before('performance')
    def set_perf(self):
        pairs = [(i, j) for i in self.nodes for j in self.nodes]
        self.perf_variables = {
            f'gbps_{i}_{j}': sn.make_performance_function(
                sn.getitem(self.field('gbps', f'run_node={i} src_node={i} dst_node={j} '), 0),
                'GB/s')
            for i, j in pairs}


# ---- MPI ping-pong ----

class PingPongBase(KernelRunBase):
    """Two ranks, small and large messages, on one node or on two nodes."""

    kernel = 'pingpong'
    valid_prog_environs = ['gnu']
    num_tasks = 2
    placement = parameter(['same-node', 'two-nodes'])
    scale = parameter([SMALL, LARGE])
    env_vars = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale]) | {'mpi'}
        self.sizes = ['1K', '8M'] if self.scale == SMALL else ['1K', '128M']
        self.executable_opts = ['--sizes', ','.join(self.sizes)]
        self.checks_expected = len(self.sizes)
        self.num_tasks_per_node = 2 if self.placement == 'same-node' else 1
        self.reference_index = ['$environ', 'scale', 'placement']

    @run_after('setup')
    def one_or_two_nodes(self):
        part = self.current_partition
        single = part.scheduler.registered_name == 'local' or part.extras.get('nodes', 2) < 2
        self.skip_if(self.placement == 'two-nodes' and single,
                     f'{part.fullname} has one node: the two-node ping-pong needs two')
        self.skip_if(shutil.which('mpirun') is None and part.scheduler.registered_name == 'local',
                     'mpirun is not installed here')

    @run_before('run')
    def use_mpirun(self):
        if self.current_partition.scheduler.registered_name == 'local':
            self.job.launcher = getlauncher('mpirun')()
            if (os.cpu_count() or 1) < 2:
                self.job.launcher.options = ['--oversubscribe']

    @sanity_function
    def validate(self):
        where = 'same-node' if self.placement == 'same-node' else 'two-nodes'
        return sn.all([self.checks_ok(),
                       sn.assert_found(rf'^result kernel=pingpong .*placement={where}', self.stdout,
                                       msg=f'the ranks were not placed {where}')])

    @run_before('performance')
    def set_perf(self):
        perf = {}
        for s in self.sizes:
            nbytes = MemWriteSingleBase._bytes(s)
            perf[f'latency_{s}'] = sn.make_performance_function(
                sn.getitem(self.field('latency_us', f'bytes={nbytes} '), 0), 'us')
            perf[f'bandwidth_{s}'] = sn.make_performance_function(
                sn.getitem(self.field('gbps', f'bytes={nbytes} '), 0), 'GB/s')
        self.perf_variables = perf


# ---- matrix multiply (the Comet Lake report) ----

class MatmulBase(PlacedKernelBase, PerfSamplesMixin):
    """Dense OpenMP matmul, 50 timed repetitions; every time goes to the run report."""

    kernel = 'matmul'
    affinity = parameter(['none', 'compact', 'scatter'])
    scale = parameter([SMALL, LARGE])
    reps = variable(int, value=50)

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale])
        n = 200 if self.scale == SMALL else 1500
        self.executable_opts = ['--n', str(n), '--reps', str(self.reps)]
        self.reference_index = ['$environ', 'scale', 'affinity']

    def times(self):
        return sn.extractall(r'^sample kernel=matmul .*time_s=(\S+)', self.stdout, 1, float)

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed(),
                       sn.assert_eq(sn.count(self.times()), self.reps,
                                    msg='expected {1} timed runs, got {0}')])

    @run_before('performance')
    def record_runs(self):
        # the study's boxplots: every repetition, not only the mean
        with osext.change_dir(self.stagedir):   # hooks run outside the stage folder
            self.perf_samples = {'mean_time': list(sn.evaluate(self.times()))}

    @performance_function('s')
    def mean_time(self):
        return sn.getitem(self.field('mean_s'), 0)

    @performance_function('s')
    def min_time(self):
        return sn.getitem(self.field('min_s'), 0)

    @performance_function('s')
    def max_time(self):
        return sn.getitem(self.field('max_s'), 0)

    @performance_function('Gflop/s')
    def gflops(self):
        return sn.getitem(self.field('gflops'), 0)


# ---- pthread operations (Golenkov et al., Table 1) ----

class PthreadOpsBase(PlacedKernelBase):
    """Every pthread operation of Table 1 under a background load, threads pinned or not.

    With a bound ``affinity`` the kernel pins its threads to the placement's
    CPU list (``--cpus``), round-robin; ``none`` leaves them to the OS.
    """

    kernel = 'pthread_ops'
    affinity = parameter(['none', 'compact'])
    load = parameter([0, 1])
    scale = parameter([SMALL, LARGE])
    OPS = ('create', 'create_join', 'chain', 'mutex_init', 'mutex_destroy', 'mutex_lock',
           'mutex_unlock')

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale])
        self.waiters = [100, 200] if self.scale == SMALL else [100, 200, 500, 1000]
        chain = 1000 if self.scale == SMALL else 15000
        self.opts = ['--load', str(self.load), '--chain', str(chain),
                     '--waiters', ','.join(map(str, self.waiters))]
        self.checks_expected = len(self.OPS) + len(self.waiters)
        self.reference_index = ['$environ', 'scale', 'affinity', 'load']

    @run_after('setup')
    def pin_to_map(self):
        placement = self.launch_settings.placement
        pin = ['--affinity', 'on', '--cpus', ','.join(map(str, placement.cpus))] \
            if placement.bound else ['--affinity', 'off']
        self.executable_opts = self.opts + pin

    @run_before('performance')
    def set_perf(self):
        perf = {op: sn.make_performance_function(
            sn.getitem(self.field('time_s', f'op={op} '), 0), 's') for op in self.OPS}
        for w in self.waiters:
            perf[f'wake_{w}'] = sn.make_performance_function(
                sn.getitem(self.field('time_s', f'op=wake .*waiters={w} '), 0), 's')
        self.perf_variables = perf


# ---- data mapping (Trindade et al.) ----

class DataMapBase(PlacedKernelBase):
    """LBM-style stencil, arrays initialised serially or with the compute schedule."""

    kernel = 'datamap'
    affinity = 'compact'
    init = parameter(['serial', 'parallel'])
    policy = parameter(['first-touch', 'interleave'])
    scale = parameter([SMALL, LARGE])

    @run_after('init')
    def set_sizes(self):
        self.tags = set(SCALE_TAGS[self.scale])
        nx = 256 if self.scale == SMALL else 4096
        self.executable_opts = ['--nx', str(nx), '--ny', str(nx), '--init', self.init]
        self.reference_index = ['$environ', 'scale', 'init', 'policy']

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed(),
                       sn.assert_found(r'^numa_maps kernel=datamap array=f ', self.stdout),
                       sn.assert_found(r'^numa_maps kernel=datamap array=g ', self.stdout)])

    @performance_function('MLUP/s')
    def mlups(self):
        return sn.getitem(self.field('mlups'), 0)

    @performance_function('%')
    def locality(self):
        return _locality(sn.extractall(r'^(?:numa_maps|thread) kernel=datamap .*$', self.stdout))


class DataMapNumalizeBase(KernelRunBase):
    """The kernel under numalize (Pin): page exclusivity from ``datamap.full.page.csv``.

    Needs Pin's ``pin`` on PATH and ``NUMALIZE_TOOL`` naming numalize's tool library.
    """

    kernel = 'datamap'
    init = parameter(['serial', 'parallel'])
    tags = {'full', 'numalize', 'kernels'}

    @run_after('init')
    def need_numalize(self):
        self.skip_if(shutil.which('pin') is None or not os.environ.get('NUMALIZE_TOOL'),
                     'numalize is not installed here (needs Intel Pin `pin` on PATH and '
                     'NUMALIZE_TOOL=/path/to/numalize.so)')

    @run_after('setup')
    def under_pin(self):
        exe = self.executable
        self.executable = 'pin'
        self.executable_opts = ['-t', os.environ['NUMALIZE_TOOL'], '--', exe,
                                '--nx', '128', '--ny', '128', '--init', self.init]
        self.page_csv = os.path.join(self.stagedir, 'datamap.full.page.csv')

    @performance_function('%')
    def exclusivity(self):
        topo = partition_topology(self.current_partition.extras.get('topology'))
        return _exclusivity(self.page_csv, len(topo.numa_nodes))


# ---- the registered cases ----

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
