"""The kernels of the studies as unregistered ReFrame base classes.

``reframe_tests/kernels.py`` only registers them, as ``reframe_tests/npb.py``
does for :class:`~placement.testlib.npb.NpbBase`. Everything a case needs is here:

* the build: :class:`KernelsBuild` builds every kernel of ``src/kernels`` once
  per environment (a fixture of :class:`KernelRunBase`);
* sanity: every kernel prints ``result`` lines (one per measurement) and
  ``check`` lines (its own verification of the result); every check needs all
  ``check`` lines to say ``ok=1``. A kernel run with ``KERNEL_CORRUPT=1``
  (``-S corrupt=true``) damages its result and must fail;
* sizes: :class:`ScaledKernelMixin` gives the ``scale`` parameter (``small``
  runs under the ``quick`` tag, ``large`` under ``acceptance`` and ``full``) and
  fills each size ``variable`` left empty with that scale's default, so ``-S``
  can still set any of them;
* placement: :class:`PlacedKernelBase` adds the placed-run mixin, whose binding
  probe runs in the same job;
* the node: :class:`VirtualNodeMixin` asks whether it is a virtual machine and
  names what that does to the case's bounds (``no_bound``: states; ``no_plain_bound``:
  no plain ReFrame bound for a cache-sized case, the verdict still judging it);
* launches: one job launches the kernel ``launches`` times (the loop of
  :mod:`placement.judgement.repeats.loop_script`, each launch followed by a ``kernel-launch n=K
  rc=R`` line); each launch's ``result`` lines are read separately, a
  performance variable is the **median over the launches**, and every launch's
  value goes to ``perf_launches``: the samples the verdict judges (whole runs
  of the program, not the iterations of its measurement loop). Each class
  lists its variables once, in :meth:`KernelRunBase.launch_vars`; the
  performance variables and the job's judge both read them;
* adaptive launches: with ``max_launches`` above ``launches`` and a reference
  file keeping runs (``_samples``) of the case's variables, the job asks
  ``placement judge`` after each launch from ``launches`` on and launches
  again while any judged variable is undecided, up to ``max_launches``.

The performance-variable names ``gbps_<block>`` (:func:`block_var`) and
``gbps_<i>_<j>`` (:func:`pair_var`) are read back by the report's memory-write
and NUMA-copy sections.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import reframe as rfm
import reframe.utility.osext as osext
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.exceptions import ReframeError, SanityError
from reframe.core.builtins import (fixture, parameter, performance_function, run_after,
                                   run_before, sanity_function, variable)

from ..checks import numa_pages, virtual_node
from ..judgement import repeats, rules
from ..util import size_bytes
from .builds import SourceTreeBuild
from .datamap_pages import DataMapPagesMixin
from .node_load import NodeLoadMixin
from .placed import PartitionTopologyMixin, PlacedRunMixin, thread_sweep
from .references import BaselineReferencesMixin
from .samples import PerfSamplesMixin

KERNELS = ('pthread_ops', 'memwrite', 'numacopy', 'matmul', 'datamap')
#: sizes per scale; `small` runs under the quick tag
SMALL, LARGE = 'small', 'large'
SCALES = [SMALL, LARGE]
SCALE_TAGS = {SMALL: {'quick', 'kernels'}, LARGE: {'acceptance', 'full', 'kernels'}}


def block_var(block: str) -> str:
    """The performance variable of the write bandwidth for one block size (``gbps_16M``)."""
    return f'gbps_{block}'


def pair_var(run_node: int, dst_node: int) -> str:
    """The performance variable of the copy bandwidth from node i to node j (``gbps_0_1``)."""
    return f'gbps_{run_node}_{dst_node}'


def _launch_locality(text: str) -> float:
    """Page locality (%) of one datamap launch, from its ``numa_maps``/``thread`` lines."""
    lines = [ln for ln in text.splitlines() if re.match(r'(?:numa_maps|thread) kernel=datamap ', ln)]
    return numa_pages.datamap_locality('\n'.join(lines))


@dataclass(frozen=True)
class LaunchVar:
    """One performance variable read from each launch: the median is its value.

    Read from the ``key=`` field of the launch's first ``result`` line holding
    ``select``, or computed by ``per_launch`` from the launch's whole output
    (e.g. page locality from ``numa_maps`` lines), which no regex can give the
    job's judge.
    """

    var: str
    unit: str
    key: str = ''
    select: str = ''
    per_launch: Callable[[str], float] | None = None

    def pattern(self, kernel: str) -> str:
        """The regex of this variable's result line; group 1 is the value."""
        return rf'^result kernel={kernel} .*{self.select}.*\b{self.key}=(\S+)'


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


class KernelRunBase(rfm.RunOnlyRegressionTest, BaselineReferencesMixin, PartitionTopologyMixin,
                    PerfSamplesMixin, NodeLoadMixin):
    """Runs one kernel ``launches`` times in one job from the environment's build.

    Sanity: every launch exited 0 and printed its ``check`` lines, all ``ok=1``.
    A performance variable is the median of its launches' values (robust to the
    one slow launch a shared node gives); each launch's value is kept in
    ``perf_launches`` for the verdict.
    """

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
    #: minimum number of `check` lines expected per launch
    checks_expected = variable(int, value=1)
    #: Launches of the kernel in the job (whole runs of the program: the verdict's
    #: samples); at least 1. A rank test needs 5 or more per side to reach p <= 0.01.
    launches = variable(int, value=3)
    #: Adaptive launches: above ``launches``, the job asks ``placement judge`` after
    #: each launch whether any variable with runs in the baseline (``_samples``) is
    #: still undecided, and launches again up to this cap. 0: exactly ``launches``.
    max_launches = variable(int, value=0)
    #: Launches the job made (set after the run): ``launches`` up to ``max_launches``.
    launches_made = variable(int, value=0)

    @run_after('setup')
    def check_launches(self):
        """Zero launches would pass vacuously: refuse a count below one before anything runs."""
        why = repeats.loop_script.refused_count('launches', self.launches,
                                        'a kernel case launches its program at least once')
        if not why and self.max_launches and self.max_launches < self.launches:
            why = (f'max_launches={self.max_launches} is not accepted: it is the cap of '
                   f'adaptive launches, at least launches={self.launches} '
                   f'(-S max_launches=N, N >= {self.launches}, or 0 for exactly launches)')
        if why:
            raise ReframeError(why)

    @run_after('setup')
    def scale_time_limit(self):
        """Room for every launch the judge may ask: the class's limit was set for
        ``launches``, a cap above it stretches the limit in proportion."""
        if self.max_launches > self.launches:
            limit = float(self.time_limit or 600)    # ReFrame keeps it in seconds
            self.time_limit = math.ceil(limit * self.max_launches / self.launches)

    @run_after('setup')
    def set_kernel(self):
        self.executable = self.kernels.path(self.kernel)
        self.skip_if(not os.path.exists(self.executable),
                     f'{self.kernel} was not built in {self.current_environ.name}')
        self.env_vars['STATLOOP_ITERS'] = str(self.statloop_iters)
        if self.corrupt:
            self.env_vars['KERNEL_CORRUPT'] = '1'

    def launch_vars(self) -> list[LaunchVar]:
        """This case's performance variables read per launch (its classes list them)."""
        return []

    @run_before('performance')
    def set_launch_perf(self):
        """Each of :meth:`launch_vars` a performance variable: the median of its launches."""
        self.perf_variables = {**self.perf_variables, **{
            lv.var: sn.make_performance_function(
                self.over_launches(lv.var, lv.key, lv.select, lv.per_launch), lv.unit)
            for lv in self.launch_vars()}}

    def judged_launch_vars(self) -> list[tuple[str, str]]:
        """``(entry, regex)`` of the variables the job's judge can read and the baseline
        keeps runs of; empty without a reference file."""
        return [(self.entry(lv.var), lv.pattern(self.kernel)) for lv in self.launch_vars()
                if lv.per_launch is None and self.stored_runs(lv.var) is not None]

    def launch_loop(self) -> repeats.loop_script.RepeatLoop:
        """Fixed launches, or launches until the judge decides when a cap and stored runs exist."""
        judged = self.judged_launch_vars() if self.max_launches > self.launches else []
        if not judged:
            return repeats.loop_script.RepeatLoop.fixed(self.launches)
        why = repeats.conditions.unavailable()   # a judge that cannot start would stop the loop silently
        if why:
            raise ReframeError(why)
        more = repeats.conditions.launches_condition(self.reference_file, sn.evaluate(self.stdout),
                                            judged, self.launches, self.max_launches)
        return repeats.loop_script.RepeatLoop(self.launches, self.max_launches, more)

    @run_before('run')
    def write_launch_loop(self):
        """The launch loop (:mod:`placement.judgement.repeats.loop_script`) around the launched program."""
        loop = repeats.loop_script.launches_script(self.launch_loop())
        self.prerun_cmds = list(self.prerun_cmds) + loop.before
        self.postrun_cmds = loop.after + list(self.postrun_cmds)

    def launch_outputs(self) -> list[tuple[int, str]]:
        """``(exit status, output)`` of each launch made (read once, after the run)."""
        cached = getattr(self, '_launch_outputs', None)
        if cached is None:
            with open(os.path.join(self.stagedir, sn.evaluate(self.stdout))) as fp:
                cached = repeats.loop_script.split_launches(fp.read())
            self._launch_outputs = cached
        return cached

    @run_before('sanity')
    def count_launches(self):
        self.launches_made = len(self.launch_outputs())

    @sn.deferrable
    def launches_ok(self):
        runs = self.launch_outputs()
        failed = [n for n, (rc, _) in enumerate(runs, 1) if rc != 0]
        most = max(self.launches, self.max_launches)
        expected = (f'{self.launches}' if most == self.launches else
                    f'{self.launches} to {most}')
        return sn.all([
            sn.assert_bounded(len(runs), self.launches, most,
                              msg=f'{self.kernel}: {len(runs)} launches finished, '
                                  f'{expected} expected'),
            sn.assert_false(failed, msg=f'{self.kernel} exited non-zero in launch(es) {failed}'),
        ])

    @sn.deferrable
    def checks_ok(self):
        oks = sn.extractall(rf'^check kernel={self.kernel} .*ok=(\d)', self.stdout, 1, int)
        return sn.all([
            self.launches_ok(),
            sn.assert_ge(sn.count(oks), self.checks_expected * len(self.launch_outputs()),
                         msg=f'{self.kernel} printed fewer than {{1}} check lines'),
            sn.assert_eq(sn.count(sn.filter(lambda v: v != 1, oks)), 0,
                         msg=f'{self.kernel} found a wrong result (a check line has ok=0)'),
        ])

    def field(self, key: str, select: str = '', conv=float):
        """Values of `key=` on this kernel's result lines that contain `select`, all launches."""
        return sn.extractall(LaunchVar('', '', key, select).pattern(self.kernel),
                             self.stdout, 1, conv)

    def launch_values(self, key: str, select: str = '', conv=float) -> list[float]:
        """`key=` of each launch's first result line containing `select` (one per launch)."""
        pattern = re.compile(LaunchVar('', '', key, select).pattern(self.kernel), re.M)
        values = []
        for n, (_, text) in enumerate(self.launch_outputs(), 1):
            m = pattern.search(text)
            if m is None:
                raise SanityError(f'launch {n} printed no result line with {select}{key}=')
            values.append(conv(m.group(1)))
        return values

    def over_launches(self, var: str, key: str, select: str = '', per_launch=None):
        """The performance value of ``var``: the median of its launches, each kept.

        ``per_launch`` computes one launch's value from its output instead of a
        ``key=`` field (e.g. page locality from ``numa_maps`` lines).
        """
        @sn.deferrable
        def median():
            if per_launch is not None:
                values = [per_launch(text) for _, text in self.launch_outputs()]
            else:
                values = self.launch_values(key, select)
            # a new dict: never mutate the variable's shared default
            self.perf_launches = {**self.perf_launches, var: list(values)}
            return statistics.median(values)
        return median()

    @sanity_function
    def validate(self):
        return self.checks_ok()


class ScaledKernelMixin(rfm.RegressionTestPlugin):
    """The ``scale`` parameter: tags, and the defaults of the class's size variables.

    A class declares ``scale = parameter(SCALES)`` after its own parameters
    (the order of a case's name and hash, which stored results and baselines
    keep), and lists its size variables in ``scaled_defaults`` as
    ``{name: (small, large)}``; a variable still empty after ``-S`` gets the
    value of the case's scale.
    """

    scaled_defaults: dict = {}

    @run_after('init')
    def apply_scale(self):
        self.tags = set(self.tags) | SCALE_TAGS[self.scale]
        for name, (small, large) in self.scaled_defaults.items():
            if not getattr(self, name):
                setattr(self, name, small if self.scale == SMALL else large)


class VirtualNodeMixin(rfm.RegressionTestPlugin):
    """The node says whether it is a virtual machine (:mod:`~placement.checks.virtual_node`),
    and what that does to the case's values: states no bound fits (``no_bound``, by the
    class: :meth:`virtual_states`), or, for a cache-sized case, no plain ReFrame bound
    (``no_plain_bound``) while the verdict still judges it."""

    #: whether the node's CPUs report a hypervisor (set after the run; None: it did not say)
    node_virtual = variable(typ.Bool, type(None), value=None)

    @run_after('setup')
    def ask_if_virtual(self):
        """The job prints whether its node is virtual, before the launch loop."""
        self.prerun_cmds = list(self.prerun_cmds) + [virtual_node.SCRIPT]

    @run_before('performance')
    def declare_virtual_node(self):
        """The node's answer, then what it means for this case's bounds."""
        # the line comes before the launch loop: in the first launch's output, read once
        self.node_virtual = virtual_node.parse('\n'.join(t for _, t in self.launch_outputs()))
        self.no_bound = {**self.no_bound, **self.virtual_states()}
        self.no_plain_bound = virtual_node.cache_states(
            [v.var for v in self.launch_vars()], self.scale == SMALL, self.node_virtual,
            self.no_bound)

    def virtual_states(self) -> dict[str, str]:
        """The values with states on this node (``no_bound``); a class whose values have
        them on a virtual node says so here."""
        return {}


class PlacedKernelBase(KernelRunBase, PlacedRunMixin):
    """A kernel run under a thread map and memory policy; the probe checks the binding."""

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed()])


# ---- memory write (Golenkov et al., Fig. 1 and 2) ----

class MemWriteSingleBase(PlacedKernelBase, ScaledKernelMixin):
    """One thread writes a large array in blocks of k bytes over a sweep of k."""

    kernel = 'memwrite'
    num_threads = 1
    affinity = 'compact'
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: Block sizes swept (one ``gbps_<block>`` each); empty: the scale's.
    blocks = variable(typ.List[str], value=[])
    #: Array size; empty: ``memory_fraction`` of the node's memory (the large scale).
    array_size = variable(str, value='')
    #: Share of the node's memory written when ``array_size`` is empty.
    memory_fraction = variable(float, value=0.1)
    scaled_defaults = {'blocks': (['1M', '4M', '16M'],
                                  ['512K', '1M', '3M', '8M', '32M', '128M', '512M']),
                       'array_size': ('64M', '')}
    reference_index = ['$environ', 'scale']

    @run_after('init')
    def set_options(self):
        size = (['--size', self.array_size] if self.array_size else
                ['--fraction', f'{self.memory_fraction:g}'])
        self.executable_opts = ['--mode', 'single', *size, '--blocks', ','.join(self.blocks)]

    def launch_vars(self):
        return [LaunchVar(block_var(b), 'GB/s', 'gbps', f'block_bytes={size_bytes(b)} ')
                for b in self.blocks]


class MemWriteThreadsBase(PlacedKernelBase, ScaledKernelMixin, VirtualNodeMixin):
    """N threads each write their own block, N from one to every PU; three binding modes.

    ``none``: the OS places threads; ``scatter``: round-robin over packages
    (its "thread bound to a processor"); ``close-cores``: cores filled in order
    (its "thread bound to a core"). Thread counts above the partition's PUs
    are skipped: the study measured bandwidth as threads are added, not
    oversubscription.
    """

    kernel = 'memwrite'
    #: The binding: ``none`` (the OS places threads), ``scatter`` (round-robin over
    #: packages) or ``close-cores`` (cores filled in order).
    affinity = parameter(['none', 'scatter', 'close-cores'])
    #: Threads: 1, 2, 4, ... below the partition's PUs, then ``full`` (every PU); no
    #: oversubscription. Resolved into :attr:`num_threads` at setup.
    threads = parameter(thread_sweep(oversubscribe=False))
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: resolved from ``threads`` at setup
    num_threads = variable(int, value=0)
    #: Block each thread writes; empty: the scale's.
    block = variable(str, value='')
    scaled_defaults = {'block': ('16M', '500M')}
    max_threads_per_pu = 1
    reference_index = ['$environ', 'scale', 'affinity', 'num_threads']
    #: the fewest threads whose bandwidth has states on a virtual node (the rule's value)
    virtual_states_threads = variable(int, value=rules.VIRTUAL_THREAD_STATES)

    @run_after('init')
    def set_options(self):
        self.executable_opts = ['--mode', 'threads', '--block', self.block]

    def virtual_states(self) -> dict[str, str]:
        """Several threads on a virtual node: their bandwidth has states (``no_bound``)."""
        return virtual_node.thread_states([v.var for v in self.launch_vars()],
                                          self.num_threads, self.node_virtual,
                                          self.virtual_states_threads)

    def launch_vars(self):
        return [LaunchVar('gbps', 'GB/s', 'gbps')]


# ---- NUMA copy matrix ----

class NumaCopyBase(KernelRunBase, ScaledKernelMixin):
    """Run on node i, source on node i, destination on node j: every (i, j)."""

    kernel = 'numacopy'
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: Bytes copied per pair; empty: the scale's.
    copy_size = variable(str, value='')
    #: The partition's NUMA nodes (set at setup): the matrix is every pair of them.
    numa_nodes = variable(typ.List[int], value=[])
    scaled_defaults = {'copy_size': ('32M', '500M')}
    reference_index = ['$environ', 'scale']

    @run_after('init')
    def set_options(self):
        self.executable_opts = ['--size', self.copy_size]

    @run_after('setup')
    def expect_matrix(self):
        self.numa_nodes = sorted(self.topology.numa_nodes)
        self.checks_expected = len(self.numa_nodes) ** 2

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(),
                       sn.assert_found(r'^matrix kernel=numacopy .*ok=1', self.stdout)])

    def launch_vars(self):
        return [LaunchVar(pair_var(i, j), 'GB/s', 'gbps',
                          f'run_node={i} src_node={i} dst_node={j} ')
                for i in self.numa_nodes for j in self.numa_nodes]


# ---- MPI ping-pong ----

class PingPongBase(KernelRunBase, ScaledKernelMixin):
    """Two ranks, small and large messages, on one node or on two nodes."""

    kernel = 'pingpong'
    valid_prog_environs = ['gnu']
    num_tasks = 2
    #: Where the two ranks run: both on one node, or one per node.
    rank_layout = parameter(['same-node', 'two-nodes'])
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: Message sizes (a latency and a bandwidth each); empty: the scale's.
    message_sizes = variable(typ.List[str], value=[])
    scaled_defaults = {'message_sizes': (['1K', '8M'], ['1K', '128M'])}
    tags = {'mpi'}
    env_vars = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}
    reference_index = ['$environ', 'scale', 'rank_layout']
    #: True when both ranks run beside ReFrame itself with no CPU to spare (the local
    #: scheduler on a node of two CPUs): the ranks poll, ReFrame's own polling preempts
    #: one now and then, and one such pause moves the mean of a thousand round trips by a
    #: microsecond (1 KiB latency 0.34 us in one launch, 1.0-1.5 us in the next, on a
    #: 2-CPU virtual machine). The baseline keeps its runs for the verdict but writes no
    #: ReFrame bound for it.
    contended = variable(bool, value=False)

    @run_after('init')
    def set_options(self):
        self.executable_opts = ['--sizes', ','.join(self.message_sizes)]
        self.checks_expected = len(self.message_sizes)
        self.num_tasks_per_node = 2 if self.rank_layout == 'same-node' else 1

    @run_after('setup')
    def one_or_two_nodes(self):
        part = self.current_partition
        single = part.scheduler.registered_name == 'local' or part.extras.get('nodes', 2) < 2
        self.skip_if(self.rank_layout == 'two-nodes' and single,
                     f'{part.fullname} has one node: the two-node ping-pong needs two')
        # `placement site new` tries one task on each of two nodes and writes the answer
        self.skip_if(self.rank_layout == 'two-nodes'
                     and part.extras.get('two_node_launch', True) is False,
                     f"{part.fullname} sets extras['two_node_launch'] False: its launcher did "
                     "not start a task on a second node (placement site new tried; the "
                     "system file's comment says why)")
        self.skip_if(shutil.which('mpirun') is None and part.scheduler.registered_name == 'local',
                     'mpirun is not installed here')
        self.contended = (self.rank_layout == 'same-node' and single
                          and part.scheduler.registered_name == 'local'
                          and (os.cpu_count() or 1) <= self.num_tasks)

    @run_before('run')
    def use_mpirun(self):
        if self.current_partition.scheduler.registered_name == 'local':
            self.job.launcher = getlauncher('mpirun')()
            if (os.cpu_count() or 1) < 2:
                self.job.launcher.options = ['--oversubscribe']

    @sanity_function
    def validate(self):
        # the kernel reports the layout it saw as `placement=`
        return sn.all([self.checks_ok(),
                       sn.assert_found(rf'^result kernel=pingpong .*placement={self.rank_layout}',
                                       self.stdout,
                                       msg=f'the ranks were not placed {self.rank_layout}')])

    def launch_vars(self):
        out = []
        for s in self.message_sizes:
            nbytes = size_bytes(s)
            out += [LaunchVar(f'latency_{s}', 'us', 'latency_us', f'bytes={nbytes} '),
                    LaunchVar(f'bandwidth_{s}', 'GB/s', 'gbps', f'bytes={nbytes} ')]
        return out


# ---- matrix multiply (the Comet Lake report) ----

class MatmulBase(PlacedKernelBase, ScaledKernelMixin, VirtualNodeMixin):
    """Dense OpenMP matmul, 50 timed repetitions per launch; every time goes to the run report."""

    kernel = 'matmul'
    #: The thread map: ``none`` (the OS places threads), ``compact`` or ``scatter``.
    affinity = parameter(['none', 'compact', 'scatter'])
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: Timed repetitions, each kept in the run report.
    reps = variable(int, value=50)
    #: Matrix order; 0: the scale's.
    matrix_order = variable(int, value=0)
    scaled_defaults = {'matrix_order': (200, 1500)}
    reference_index = ['$environ', 'scale', 'affinity']

    @run_after('init')
    def set_options(self):
        self.executable_opts = ['--n', str(self.matrix_order), '--reps', str(self.reps)]

    def times(self):
        return sn.extractall(r'^sample kernel=matmul .*time_s=(\S+)', self.stdout, 1, float)

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed(),
                       sn.assert_eq(sn.count(self.times()), self.reps * len(self.launch_outputs()),
                                    msg='expected {1} timed runs, got {0}')])

    @run_before('performance')
    def record_runs(self):
        # the study's boxplots: every repetition, not only the mean
        with osext.change_dir(self.stagedir):   # hooks run outside the stage folder
            self.perf_samples = {'mean_time': list(sn.evaluate(self.times()))}

    def launch_vars(self):
        # mean_time, min_time, max_time (of the repetitions), then gflops
        return [LaunchVar(f'{stat}_time', 's', f'{stat}_s') for stat in ('mean', 'min', 'max')] \
            + [LaunchVar('gflops', 'Gflop/s', 'gflops')]


# ---- pthread operations (Golenkov et al., Table 1) ----

class PthreadOpsBase(PlacedKernelBase, ScaledKernelMixin):
    """Every pthread operation of Table 1 under a background load, threads pinned or not.

    With a bound ``affinity`` the kernel pins its threads to the placement's
    CPU list (``--cpus``), round-robin; ``none`` leaves them to the OS.
    """

    kernel = 'pthread_ops'
    #: ``none``: the OS places threads; ``compact``: each pinned to the placement's
    #: CPU list, round-robin.
    affinity = parameter(['none', 'compact'])
    #: Background load threads beside the measured ones: 0 (none) or 1 (one busy thread).
    load = parameter([0, 1])
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: Blocked threads woken at once, one ``wake_<n>`` each; empty: the scale's.
    waiters = variable(typ.List[int], value=[])
    #: Length of the create-then-join chain; 0: the scale's.
    chain = variable(int, value=0)
    scaled_defaults = {'waiters': ([100, 200], [100, 200, 500, 1000]),
                       'chain': (1000, 15000)}
    reference_index = ['$environ', 'scale', 'affinity', 'load']
    OPS = ('create', 'create_join', 'chain', 'mutex_init', 'mutex_destroy', 'mutex_lock',
           'mutex_unlock')
    #: True under a background load: the times are the scheduler's arbitration between the
    #: load and the measured threads, which flips between sessions (a pinned chain 4.3e-5 s
    #: in one session, 1.0e-4 s the next, launches within 11% in each); the baseline keeps
    #: their runs for the verdict but writes no ReFrame bound for them.
    contended = variable(bool, value=False)

    #: why the pthread operations get no plain ReFrame bound (:attr:`no_bound`)
    SCHEDULER_STATES = ("the OS scheduler's latency, with states between sessions: unchanged "
                        "sessions of a 2-core virtual machine moved create_join x162, chain "
                        "x9, wake_100 x4.6, mutex_lock x2.4 (beyond the x2 cap)")

    @run_after('init')
    def expect_checks(self):
        self.checks_expected = len(self.OPS) + len(self.waiters)
        self.contended = self.load > 0
        self.no_bound = {v.var: self.SCHEDULER_STATES for v in self.launch_vars()}

    @run_after('setup')
    def pin_to_map(self):
        placement = self.launch_settings.placement
        pin = ['--affinity', 'on', '--cpus', ','.join(map(str, placement.cpus))] \
            if placement.bound else ['--affinity', 'off']
        self.executable_opts = ['--load', str(self.load), '--chain', str(self.chain),
                                '--waiters', ','.join(map(str, self.waiters))] + pin

    def launch_vars(self):
        return [LaunchVar(op, 's', 'time_s', f'op={op} ') for op in self.OPS] + \
            [LaunchVar(f'wake_{w}', 's', 'time_s', f'op=wake .*waiters={w} ')
             for w in self.waiters]


# ---- data mapping (Trindade et al.) ----

class DataMapBase(PlacedKernelBase, ScaledKernelMixin, DataMapPagesMixin,
                  VirtualNodeMixin):
    """LBM-style stencil, arrays initialised serially or with the compute schedule."""

    kernel = 'datamap'
    affinity = 'compact'
    #: How the arrays are first written: ``serial`` (one thread, so first-touch puts
    #: every page on its node) or ``parallel`` (with the compute schedule).
    init = parameter(['serial', 'parallel'])
    #: The memory policy: ``first-touch`` (the kernel's default) or ``interleave``
    #: (pages round-robin over the NUMA nodes).
    policy = parameter(['first-touch', 'interleave'])
    #: The case's size: ``small`` (cache-sized; tags quick, kernels) or ``large``
    #: (tags acceptance, full, kernels).
    scale = parameter(SCALES)
    #: Grid points per side (nx = ny); 0: the scale's.
    grid = variable(int, value=0)
    scaled_defaults = {'grid': (256, 4096)}
    reference_index = ['$environ', 'scale', 'init', 'policy']

    @run_after('init')
    def set_options(self):
        self.executable_opts = ['--nx', str(self.grid), '--ny', str(self.grid),
                                '--init', self.init]

    @sanity_function
    def validate(self):
        return sn.all([self.checks_ok(), self.assert_placed(),
                       sn.assert_found(r'^numa_maps kernel=datamap array=f ', self.stdout),
                       sn.assert_found(r'^numa_maps kernel=datamap array=g ', self.stdout)])

    def launch_vars(self):
        return [LaunchVar('mlups', 'MLUP/s', 'mlups'),
                LaunchVar('locality', '%', per_launch=_launch_locality)]


class DataMapNumalizeBase(KernelRunBase):
    """The kernel under numalize (Pin): page exclusivity from ``datamap.full.page.csv``.

    Needs Pin's ``pin`` on PATH and ``NUMALIZE_TOOL`` naming numalize's tool library.
    """

    kernel = 'datamap'
    #: How the arrays are first written: ``serial`` (one thread) or ``parallel`` (with
    #: the compute schedule).
    init = parameter(['serial', 'parallel'])
    tags = {'full', 'numalize', 'kernels'}
    #: one launch: the run under Pin is slow, and exclusivity is a property, not a timing
    launches = 1
    #: numalize's page table of the run (set at setup).
    page_csv = variable(str, value='')

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
        return _exclusivity(self.page_csv, len(self.topology.numa_nodes))
