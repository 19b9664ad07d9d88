"""The suite on a real Slurm: sbatch + srun on the one-node cluster of ``slurm_cluster.py``.

What is proved here and nowhere else: the ``testcluster`` partitions submit
through ReFrame's Slurm backend with ``--exclusive``, the binding probe and the
quick kernels run under ``srun`` (and ``mpirun``) inside the allocation, the
binding checks pass with the CPU set Slurm gave the task, and Slurm's own
``--cpu-bind`` is what the processes get (``SlurmCpuBindCheck``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from slurm_cluster import SlurmCluster, SlurmClusterError

pytestmark = [pytest.mark.slurm, pytest.mark.reframe]


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    """A running cluster for this module; its daemons are stopped by pid afterwards."""
    root = tmp_path_factory.mktemp('slurm')
    os.chmod(root, 0o700)
    c = SlurmCluster(root)
    try:
        c.start()
    except (SlurmClusterError, subprocess.CalledProcessError) as err:
        c.stop()
        pytest.fail(f'the test Slurm cluster did not start: {err}\n{c.logs()}', pytrace=False)
    yield c
    c.stop()
    assert not any(c.running().values()), f'daemons left running: {c.running()}'


def run_reframe(reframe_bin: str, root: Path, cluster: SlurmCluster, tmp: Path, *args: str):
    """ReFrame on the test cluster, results and stage under ``tmp``; returns (proc, report)."""
    report = tmp / 'report.json'
    env = {**os.environ, **cluster.env, 'PLACEMENT_RESULTS': str(tmp / 'results')}
    proc = subprocess.run(
        [reframe_bin, '-C', str(root / 'config' / 'settings.py'), '-R',
         '--prefix', str(tmp / 'rfm'), '--report-file', str(report), *args, '-r'],
        cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    cases = [tc for run in json.loads(report.read_text())['runs'][-1:]
             for tc in run['testcases']]
    return proc, cases


def assert_ran_under_slurm(cases: list[dict], launcher: str) -> None:
    """Every executed case went through sbatch --exclusive and the partition's launcher."""
    for tc in cases:
        if tc['result'] == 'skip' or tc['name'].split()[0].endswith('Build'):
            continue    # skipped, or a build fixture (compiled on the submit host)
        assert tc['jobid'], f"{tc['display_name']} has no Slurm job id"
        script = Path(tc['outputdir'], 'rfm_job.sh').read_text()
        assert '#SBATCH --exclusive' in script, script
        assert f'\n{launcher} ' in script, script


def failures(cases: list[dict]) -> str:
    return '\n'.join(f"{tc['display_name']}@{tc['environ']}: {tc['fail_reason']}"
                     for tc in cases if tc['result'] not in ('pass', 'skip'))


def test_srun_applies_the_binding_it_is_asked(cluster):
    """The cluster binds: a task mapped to the last CPU runs on that CPU only."""
    cpus = os.sched_getaffinity(0)
    last = max(cpus)
    out = subprocess.run(['srun', '-n1', f'--cpus-per-task={len(cpus)}',
                          f'--cpu-bind=map_cpu:{last}', 'grep',
                          'Cpus_allowed_list', '/proc/self/status'],
                         env={**os.environ, **cluster.env}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr + cluster.logs()
    assert out.stdout.split()[-1] == str(last)


def test_quick_checks_pass_under_sbatch_and_srun(cluster, reframe_bin, root, tmp_path):
    """The quick tag (binding, memory policy, Slurm binding, kernels) passes on the srun partition.

    ``--tag quick`` rather than ``--mode quick``: a mode's options override ``-p``. Of the
    kernels two run here (one serial, one threaded under the maps): the others launch the
    same way and run for real in ``test_kernels.py``; NPB's quick family runs for real in
    ``test_npb_reframe.py`` (its class W cases, serial under Slurm, cost minutes here).
    """
    others = ('NpbQuickCheck', 'MemWriteThreadsCheck', 'NumaCopyCheck', 'PingPongCheck',
              'PthreadOpsCheck', 'DataMapCheck', 'DataMapPageSampleCheck')
    proc, cases = run_reframe(reframe_bin, root, cluster, tmp_path, '--system',
                              'testcluster:srun', '--tag', 'quick', '-p', 'gnu',
                              *[a for name in others for a in ('-x', name)],
                              '--exec-policy', 'serial')
    assert proc.returncode == 0, failures(cases) or proc.stdout[-4000:]
    passed = {tc['name'].split()[0] for tc in cases if tc['result'] == 'pass'}
    assert {'BindingRenderingCheck', 'MemoryPolicyCheck', 'SlurmCpuBindCheck'} <= passed
    kernels = {tc['name'].split()[0] for tc in cases if tc['filename'].endswith('kernels.py')
               and tc['result'] == 'pass' and not tc.get('fixture')}
    assert kernels == {'MemWriteSingleCheck', 'MatmulCheck'}, kernels
    assert_ran_under_slurm(cases, 'srun')


def test_binding_checks_pass_under_mpirun(cluster, reframe_bin, root, tmp_path):
    """Open MPI's mpirun inside the allocation leaves the thread binding to the map."""
    proc, cases = run_reframe(reframe_bin, root, cluster, tmp_path, '--system',
                              'testcluster:mpirun', '-n', 'BindingRenderingCheck.*binder=gomp',
                              '-p', 'gnu')
    assert proc.returncode == 0, failures(cases) or proc.stdout[-4000:]
    assert sum(tc['result'] == 'pass' for tc in cases) >= 3
    assert_ran_under_slurm(cases, 'mpirun')
