"""The hybrid MPI+OpenMP binding check: ranks x threads, verified per rank and per thread.

Where ReFrame's CSCS affinity check judges the set of masks a job used, this one
judges *which* rank and thread holds which CPU: the placement engine
(:mod:`placement.engine.hybrid`) says where each rank and each of its threads belong on
the partition's node, the launcher (``mpirun`` or ``srun``, the partition's own)
is given that layout in its own words (:mod:`placement.engine.hybrid_launch`), and in
every rank the binding probe reports, per thread, the CPU it ran on and the CPUs
it may use. The case passes only when every rank's threads are where the engine
said, no two ranks share a CPU, and the launcher's own report
(``--report-bindings``, ``SLURM_CPU_BIND_*``) names the set the rank saw
(:mod:`placement.checks.hybrid_probe`).
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (fixture, parameter, run_after, run_before, sanity_function,
                                   variable)

from reframe.core.exceptions import ReframeError

from ..checks import hybrid_probe, node_shape
from ..engine import hybrid, hybrid_launch
from ..util import PlacementError
from . import node_topology
from .placed import BindProbeBuild, PartitionTopologyMixin, node_mismatch, stdout_text

#: The rank id as Open MPI, Slurm or a PMIx launcher gives it to the process.
RANK_ID = '${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-${PMIX_RANK:-0}}}'


class HybridBindingBase(rfm.RunOnlyRegressionTest, PartitionTopologyMixin):
    """Ranks x threads placed by the partition's launcher; subclasses choose the layout.

    The parameters span the layouts a site runs: ranks per package or per NUMA
    node, one or two per domain, one thread per core or twice as many. Partitions whose launcher is ``mpirun`` or ``srun``
    run it (features ``mpirun``/``srun``).
    """

    valid_systems = ['+mpirun', '+srun']
    valid_prog_environs = ['+openmp']
    time_limit = '5m'
    bindprobe = fixture(BindProbeBuild, scope='environment')

    #: What confines a rank: ``package`` or ``numa`` (:data:`placement.engine.hybrid.DOMAINS`).
    domain = parameter(['package', 'numa'])
    #: Ranks in each domain.
    ranks_per_domain = parameter([1, 2])
    #: Threads per core of each rank: 1 fills the node, 2 runs twice as many threads.
    fill = parameter([1, 2])
    #: One OpenMP place per ``cores`` or per hardware thread (``threads``).
    unit = variable(str, value='cores')
    #: ``launcher`` (default): the launcher binds each rank as planned; ``none`` switches its
    #: rank binding off (``--bind-to none``, ``--cpu-bind=none``), the classic mistake, so a
    #: site can see the check fail it.
    rank_binding = variable(str, value='launcher')
    #: The layout the engine computed (set at setup; the run report keeps it).
    layout = variable(str, value='')
    #: The topology the layout was computed for (set at setup).
    node_topology = variable(str, value='')

    @run_after('setup')
    def plan(self):
        part = self.current_partition
        if self.rank_binding not in ('launcher', 'none'):
            raise ReframeError(f'rank_binding {self.rank_binding!r}: choose launcher or none')
        try:
            topo = self.topology
        except PlacementError as err:
            self.skip(f'no topology for {part.fullname}: {err}')
        self.node_topology = node_topology.one_line(topo)
        try:
            ranks, threads = hybrid.fill(topo, self.domain, self.ranks_per_domain, self.fill)
            self.hybrid = hybrid.compute(topo, ranks, threads, self.domain, self.unit)
        except PlacementError as err:
            self.skip(f'layout not possible on {part.fullname}: {err}')
        hp = self.hybrid
        self.layout = (f'{hp.ranks} ranks x {hp.threads} threads, {hp.ranks_per_domain} per '
                       f'{hp.domain}, {hp.cores_per_rank} cores each')
        self.num_tasks = hp.ranks
        self.env_vars.update(hybrid_launch.omp_env(hp))
        self.launcher_kind = part.launcher_type.registered_name
        if self.launcher_kind == 'mpirun':
            opts = hybrid_launch.mpirun_options(hp, hybrid_launch.ompi_major())[2:]
            if self.rank_binding == 'none':
                opts[opts.index('--bind-to') + 1] = 'none'
            self.job.launcher.options = opts               # ReFrame's mpirun gives -np
            bind_env = ''
        else:
            self.num_cpus_per_task = hp.cores_per_rank * hybrid_launch.pus_per_core(topo)
            self.num_tasks_per_node = hp.ranks
            explicit = self.domain != 'package'
            # the counts (-n, --cpus-per-task) come from the job's own num_tasks, num_cpus_per_task
            opts = hybrid_launch.srun_options(hp, topo, explicit)[3:]
            if self.rank_binding == 'none':
                opts = [o for o in opts if not o.startswith('--cpu-bind')] + ['--cpu-bind=none']
            self.job.launcher.options = opts
            self.num_tasks_per_socket = hp.ranks_per_domain if not explicit else None
            bind_env = ('echo rank=$r slurmbind localid=$SLURM_LOCALID '
                        'type=$SLURM_CPU_BIND_TYPE list=$SLURM_CPU_BIND_LIST; ')
        self.executable = 'bash'
        self.executable_opts = [
            '-c', f"'r={RANK_ID}; {bind_env}"
                  f"{self.bindprobe.executable_path} | sed \"s/^/rank=$r /\"'"]

    @run_before('run')
    def keep_layout_in_output(self):
        self.prerun_cmds = [node_shape.SCRIPT, f'echo "hybrid layout: {self.layout}"']

    def launcher_report(self) -> tuple[dict[int, frozenset[int]], str]:
        """Each rank's CPUs as the launcher says it bound them, and the launcher's name."""
        if self.launcher_kind == 'mpirun':
            with open(f'{self.stagedir}/{sn.evaluate(self.stderr)}') as fp:
                return hybrid_launch.ompi_bindings(fp.read(), self.topology), 'Open MPI'
        out = {}
        for line in stdout_text(self).splitlines():
            if ' slurmbind ' in line and line.startswith('rank='):
                f = dict(kv.split('=', 1) for kv in line.split() if '=' in kv)
                out[int(f['rank'])] = hybrid_launch.slurm_bind_set(
                    f.get('type', ''), f.get('list', ''), int(f.get('localid') or 0))
        return out, 'Slurm'

    def problems(self) -> list[str]:
        text = stdout_text(self)
        said, name = self.launcher_report()
        return node_mismatch(self.topology, text) + hybrid_probe.problems(
            self.hybrid, hybrid_probe.per_rank(text), self.topology, said, name)

    @sanity_function
    def validate(self):
        issues = self.problems()
        return sn.assert_false(issues, msg=f'hybrid placement ({self.layout}) not as planned: '
                                           + '; '.join(issues))
