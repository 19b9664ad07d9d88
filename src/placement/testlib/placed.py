"""The placed-run base class: every check that runs under a thread map and memory policy.

A subclass sets ``threads`` (or ``num_threads``), ``affinity`` and ``policy``
(usually as parameters) and its executable. Before the run the placement engine computes
the environment and the launch prefix for the partition's topology; the binding
probe runs in the same job, under the same launcher, environment and prefix,
and ``assert_placed()`` checks what it saw.
"""

from __future__ import annotations

import functools
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import ReframeError

from ..checks import node_shape, probe
from ..engine import launch, maps, topology
from ..util import PlacementError
from . import node_topology
from .builds import SourceTreeBuild


class BindProbeBuild(SourceTreeBuild):
    """Builds the binding probe once per environment (used as a fixture)."""

    source_subdir = 'probe'

    @sanity_function
    def built(self):
        return sn.assert_true(os.path.exists(self.executable_path), msg='bindprobe was not built')

    @property
    def executable_path(self) -> str:
        return self.path('bindprobe')


def partition_topology(where, node: str | None = None) -> topology.Topology:
    """A partition's compute-node topology (``node_topology``), or that of an XML path.

    ``where`` is a ReFrame partition, or a path (None: the live machine); ``node`` the
    node a case is pinned to (``--distribute``), for a partition with per-node topologies.
    """
    if hasattr(where, 'extras'):
        where = node_topology.topology_path(where, node)
    return _load_topology(where)


def pinned_node(test) -> str | None:
    """The node ReFrame's ``--distribute`` pinned ``test`` to (its ``.nid``), else None."""
    nodes = getattr(test, '.nid', None)
    return nodes[0] if nodes else None


@functools.lru_cache(maxsize=None)
def _load_topology(path: str | None) -> topology.Topology:
    """The topology at ``path``, or the live machine's.

    The live machine's is cut to the CPUs this process may use (``taskset``, a
    cgroup, a Slurm allocation smaller than the node), and ReFrame says so once.
    """
    topo = topology.load(path)
    if topo.restricted_from:
        from reframe.core.logging import getlogger
        getlogger().warning(f'placement: {topo.restriction()}')
    return topo


def stdout_text(test: rfm.RegressionTest) -> str:
    """A finished test's whole standard output (hooks and properties run outside its stage)."""
    with open(os.path.join(test.stagedir, sn.evaluate(test.stdout))) as fp:
        return fp.read()


def node_mismatch(topo: topology.Topology, text: str) -> list[str]:
    """The line saying the job's node is not the one the maps were computed for, if it is not."""
    shape = node_shape.parse(text)
    why = node_shape.mismatch(topo, shape) if shape else None
    return [why] if why else []


def read_map_file(path: str) -> str:
    """An explicit map file: numbers separated by blanks, ``#`` comments allowed."""
    with open(path) as fp:
        return ' '.join(line.split('#', 1)[0] for line in fp)


def resolve_threads(threads: int | str, pus: int) -> int:
    """A thread parameter on a partition with ``pus`` PUs: ``full``, ``2xfull`` or a number."""
    if threads == 'full':
        return pus
    if threads == '2xfull':
        return 2 * pus
    return int(threads)


def sweep_for(pus: list[int], oversubscribe: bool = True) -> list[int | str]:
    """1, 2, 4, ... below the largest PU count, then ``full`` (and ``2xfull``).

    With no PU count known, every power of two up to 64 (partitions up to 128 PUs).
    """
    top = max(pus) if pus else 128
    counts: list[int | str] = [1 << i for i in range(top.bit_length()) if 1 << i < top]
    return counts + ['full'] + (['2xfull'] if oversubscribe else [])


def _loaded_system_pus() -> list[int]:
    """PU counts of the partitions of the system ReFrame selected; empty outside ReFrame."""
    from reframe.core.exceptions import ReframeFatalError
    try:
        from reframe.core.runtime import runtime
        partitions = runtime().system.partitions
    except (Exception, ReframeFatalError):  # no runtime: imported by documentation or unit tests
        return []
    pus = []
    for part in partitions:
        try:
            pus.append(len(partition_topology(part).pus))
        except PlacementError:
            pass            # the case skips at setup with the reason
    return pus


def thread_sweep(oversubscribe: bool = True) -> list[int | str]:
    """The ``threads`` parameter for the system ReFrame loaded (see :func:`sweep_for`).

    Called in a test class body: ReFrame selects the system before it loads test
    files, so listings and runs hold only thread counts this system can run (a
    2-PU laptop gets 1, full, 2xfull; a 64-PU node 1 ... 32, full, 2xfull), and
    loading is faster than with every count everywhere.
    """
    return sweep_for(_loaded_system_pus(), oversubscribe)


class PartitionTopologyMixin(rfm.RegressionTestPlugin):
    """The ``topology`` of the partition a case runs on (from setup on)."""

    @property
    def topology(self) -> topology.Topology:
        """The compute node's topology: ``extras['topology']``, else captured on the node
        (:mod:`.node_topology`; ``'live'``: this machine's); under ``--distribute``, the
        pinned node's own where the partition has ``extras['topology_per_node']``. Cached."""
        return partition_topology(self.current_partition, pinned_node(self))


class PlacedRunMixin(PartitionTopologyMixin):
    """Adds placement, the memory policy and the binding check to a run-only test.

    The test declares, as parameters or variables, any of: ``threads`` (a
    number, ``full`` or ``2xfull``: resolved per partition into
    ``num_threads``, which the test then declares as an ``int`` variable so the
    run report records it), else ``num_threads`` (0 or absent: one thread per PU),
    ``affinity`` (a strategy of :mod:`placement.engine.maps`, default ``none``),
    ``policy`` (default ``first-touch``) and ``binder`` (gomp, omp, kmp,
    likwid, numactl, taskset, hwloc; default ``gomp``, what the studies used).
    """

    bindprobe = fixture(BindProbeBuild, scope='environment')
    #: Numeric ``threads`` above this many per PU are skipped (2: oversubscription up to 2x).
    max_threads_per_pu = variable(int, value=2)
    #: The topology the map was computed for (set at setup; the run report keeps it).
    node_topology = variable(str, value='')

    def _resolve_thread_parameter(self, pus: int) -> None:
        """``threads`` into ``num_threads``; a number equal to a symbolic count runs as that case."""
        threads = getattr(self, 'threads', None)
        if threads is None:
            return
        n = resolve_threads(threads, pus)
        if not isinstance(threads, str):
            symbolic = {pus: 'full', 2 * pus: '2xfull'}
            self.skip_if(n in symbolic and n <= self.max_threads_per_pu * pus,
                         f'{n} threads is this partition\'s {symbolic.get(n)} count, '
                         'run as that case')
            self.skip_if(n > self.max_threads_per_pu * pus,
                         f'{n} threads is over {self.max_threads_per_pu}x the {pus} PUs here')
        self.num_threads = n

    @run_after('setup')
    def apply_placement(self):
        extras = self.current_partition.extras
        try:
            topo = self.topology
        except PlacementError as err:
            self.skip(f'no topology for {self.current_partition.fullname}: {err}')
        self.node_topology = node_topology.one_line(topo)
        self._resolve_thread_parameter(len(topo.pus))
        self.num_threads = getattr(self, 'num_threads', 0) or len(topo.pus)
        affinity = getattr(self, 'affinity', 'none')
        explicit = None
        if affinity == 'explicit':
            map_file = extras.get('explicit_map')
            self.skip_if(not map_file,
                         f'{self.current_partition.fullname} defines no explicit map '
                         "(set extras['explicit_map'] to a map file)")
            explicit = self._explicit_map(map_file, topo)
        try:
            self.launch_settings = launch.settings(
                topo, self.num_threads, affinity, getattr(self, 'policy', 'first-touch'),
                binder=getattr(self, 'binder', 'gomp'),
                explicit=explicit, oversubscribe=True)
        except PlacementError as err:
            self.skip(f'placement not possible here: {err}')
        self.topology_pus = len(topo.pus)
        # ReFrame writes `export K=V` verbatim: quote values with blanks or braces
        self.env_vars.update({k: shlex.quote(v) for k, v in self.launch_settings.env.items()})

    def _explicit_map(self, map_file: str, topo: topology.Topology) -> str:
        """The partition's explicit map, checked: a broken one fails the case, never skips it."""
        where = f"{self.current_partition.fullname}: extras['explicit_map'] {map_file!r}"
        try:
            text = read_map_file(map_file)
            maps.explicit_order(topo, text)
        except OSError as err:
            raise ReframeError(f'{where}: {err.strerror}') from None
        except (PlacementError, UnicodeDecodeError) as err:
            raise ReframeError(f'{where}: {err}') from None
        return text

    @run_before('run')
    def wrap_with_prefix(self):
        prefix = self.launch_settings.prefix
        launcher = ' '.join(self.job.launcher.command(self.job))
        probe_cmd = ' '.join(filter(None, [launcher, shlex.join(prefix),
                                          shlex.quote(self.bindprobe.executable_path)]))
        if self.executable != self.bindprobe.executable_path:
            self.prerun_cmds = [probe_cmd] + list(self.prerun_cmds)
        # the node describes itself: the maps must have been computed for it (node_shape)
        self.prerun_cmds = [node_shape.SCRIPT] + list(self.prerun_cmds)
        # ReFrame writes the program line verbatim: quote every word placed here
        executable = shlex.quote(self.executable)
        if prefix:
            self.executable_opts = ([shlex.quote(w) for w in prefix[1:]] + [executable] +
                                    list(self.executable_opts))
            self.executable = shlex.quote(prefix[0])
        else:
            self.executable = executable

    @sn.deferrable
    def binding_problems(self):
        text = stdout_text(self)
        ls = self.launch_settings
        return node_mismatch(self.topology, text) + probe.problems(
            probe.parse(text), ls.placement, ls.policy, per_thread=ls.per_thread)

    @sn.deferrable
    def assert_placed(self):
        """Sanity: the probe saw exactly the requested binding and memory policy."""
        issues = self.binding_problems()
        return sn.assert_false(issues, msg='binding not as requested: ' + '; '.join(issues))
