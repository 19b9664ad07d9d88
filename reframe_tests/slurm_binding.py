"""The binding Slurm gives is the binding the program gets (``srun`` partitions only).

The other binding checks let the placement engine bind threads inside the
task's CPU set. Here Slurm itself binds: ``srun --cpu-bind=map_cpu|mask_cpu``
places one task per CPU in a deliberately reversed order, and
``--cpu-bind=cores`` gives one task all the node's cores with OpenMP pinning
its threads inside that set. In every task the binding probe reports the CPUs
the task may run on, next to what Slurm says it applied (``SLURM_CPU_BIND_*``,
set by ``task/affinity`` or ``task/cgroup``); the check passes only when the
three agree: requested, reported by Slurm, seen by the process. The job's CPUs
from ``scontrol show job -d`` are kept in the output for the logs.
"""

from __future__ import annotations

import re

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import fixture, parameter, run_after, run_before, sanity_function

from placement.engine.hybrid_launch import slurm_bind_set
from placement.checks.probe import parse as parse_probe
from placement.testlib.placed import BindProbeBuild, PartitionTopologyMixin, stdout_text

#: a line of one task, as ``srun --label`` prefixes it
_LABELLED = re.compile(r'^\s*(\d+): (.*)$', re.M)


@rfm.simple_test
class SlurmCpuBindCheck(rfm.RunOnlyRegressionTest, PartitionTopologyMixin):
    """Slurm's own CPU binding (map_cpu, mask_cpu, cores) reaches every task and thread."""

    descr = 'srun --cpu-bind binds tasks where Slurm reports'
    cpu_bind = parameter(['map_cpu', 'mask_cpu', 'cores'])
    valid_systems = ['+srun']
    valid_prog_environs = ['+openmp']
    time_limit = '2m'
    tags = {'quick', 'acceptance', 'full', 'binding', 'slurm'}
    bindprobe = fixture(BindProbeBuild, scope='environment')

    @run_after('setup')
    def plan(self):
        self.cpus = sorted(pu.os_index for pu in self.topology.pus)
        rev = list(reversed(self.cpus))
        opts = ['--label']
        if self.cpu_bind == 'cores':
            self.num_tasks, self.num_cpus_per_task = 1, len(self.cpus)
            opts += ['--cpu-bind=cores']       # ReFrame's srun adds --cpus-per-task
            self.env_vars = {'OMP_NUM_THREADS': str(len(self.cpus)),
                             'OMP_PLACES': 'threads', 'OMP_PROC_BIND': 'close'}
            self.expected = {0: frozenset(self.cpus)}
        else:
            self.num_tasks, self.num_cpus_per_task = len(self.cpus), 1
            spec = (','.join(map(str, rev)) if self.cpu_bind == 'map_cpu'
                    else ','.join(hex(1 << c) for c in rev))
            opts += [f'--cpu-bind={self.cpu_bind}:{spec}']
            self.env_vars = {'OMP_NUM_THREADS': '1'}
            self.expected = {r: frozenset({c}) for r, c in enumerate(rev)}
        self.job.launcher.options = opts
        self.executable = 'bash'
        self.executable_opts = ['-c', "'echo slurmbind localid=$SLURM_LOCALID "
                                "type=$SLURM_CPU_BIND_TYPE list=$SLURM_CPU_BIND_LIST; "
                                f"exec {self.bindprobe.executable_path}'"]

    @run_before('run')
    def record_job_cpus(self):
        self.prerun_cmds = ['scontrol show job -d $SLURM_JOB_ID | grep -o "CPU_IDs=[^ ]*" '
                            '| sed "s/^/scontrol /"']

    def problems(self) -> list[str]:
        """Every task whose CPUs differ between request, Slurm's report and the probe."""
        lines: dict[int, list[str]] = {}
        for rank, line in _LABELLED.findall(stdout_text(self)):
            lines.setdefault(int(rank), []).append(line)
        slurm: dict[int, frozenset[int]] = {}
        for rank, task in lines.items():
            for line in task:
                if line.startswith('slurmbind '):
                    f = dict(kv.split('=', 1) for kv in line.split()[1:])
                    slurm[rank] = slurm_bind_set(f.get('type', ''), f.get('list', ''),
                                              int(f.get('localid') or 0))
        # each task's threads and the CPUs each may run on, as the probe reports them
        probe = {rank: parse_probe('\n'.join(task)).allowed for rank, task in lines.items()}
        out = []
        for rank, want in self.expected.items():
            threads = probe.get(rank, {})
            got = frozenset().union(*threads.values()) if threads else frozenset()
            if got != want:
                out.append(f'task {rank} allowed on {sorted(got)}, requested {sorted(want)}')
            if slurm.get(rank) != want:
                out.append(f'task {rank}: Slurm reports {sorted(slurm.get(rank, ()))}, '
                           f'requested {sorted(want)}')
            if self.cpu_bind == 'cores' and len(threads) == len(want):
                # OpenMP pins each thread to one CPU of the task's set, all distinct
                if any(len(s) != 1 for s in threads.values()):
                    out.append(f'task {rank} threads not pinned within the task: {threads}')
        return out

    @sanity_function
    def validate(self):
        issues = self.problems()
        return sn.assert_false(issues, msg='Slurm binding not honoured: ' + '; '.join(issues))
