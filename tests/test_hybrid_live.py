"""Hybrid MPI+OpenMP jobs on the emulated two-socket node, under mpirun and under a real srun.

What is proved here: on a node with 2 packages x 2 cores x 2 hardware threads
and 2 NUMA nodes, ranks x threads laid out by the engine are where it said, per
rank and per thread, when Open MPI's ``mpirun`` starts them inside the node
(ReFrame's ssh scheduler) and when a real Slurm whose compute node is that guest
starts them with ``srun --cpu-bind`` (``numa_slurm.py``: slurmctld here, slurmd
there); the launchers' own reports agree; and the classic mistake, the ranks'
binding switched off, fails the check with the line that names it.
The guest's timings mean nothing (TCG emulation): only placement is judged.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import live_reframe

pytestmark = [pytest.mark.numa, pytest.mark.reframe, pytest.mark.slurm]

CHECKS = ('reframe_tests/hybrid_binding.py', 'reframe_tests/slurm_binding.py')


def _reframe(env: dict, reframe_bin, root, share: Path, name: str, *args: str,
             timeout: int = 900) -> tuple[subprocess.CompletedProcess, list[dict]]:
    report = share / f'{name}.json'
    proc = live_reframe.reframe(
        reframe_bin, root, CHECKS, '-p', 'gnu', '--prefix', str(share / name),
        '--report-file', str(report), *args, '-r', timeout=timeout,
        env={**env, 'PLACEMENT_RESULTS': str(share / 'results')})
    return proc, list(live_reframe.last_attempts(report, proc).values())


@pytest.fixture(scope='module')
def env(numa_node, numa_slurm):
    return {**numa_node.env, **numa_slurm.env}


@pytest.fixture(scope='module')
def mpirun_run(env, reframe_bin, root, numa_node):
    return _reframe(env, reframe_bin, root, numa_node.share, 'hybrid-mpi', '--system',
                    'testnuma:mpi', '-n', 'HybridBindingCheck', '--max-retries=1')


@pytest.fixture(scope='module')
def srun_run(env, reframe_bin, root, numa_node):
    return _reframe(env, reframe_bin, root, numa_node.share, 'hybrid-slurm', '--system',
                    'testnuma:slurm', '-n', 'HybridBindingCheck|SlurmCpuBindCheck',
                    '--max-retries=1')


def _ranks(tc: dict) -> dict[int, dict[int, str]]:
    """rank -> thread -> allowed CPUs, from the job's output."""
    text = Path(tc['outputdir'], 'rfm_job.out').read_text()
    out: dict[int, dict[int, str]] = {}
    for r, t, allowed in re.findall(r'^rank=(\d+) bindprobe thread=(\d+) cpu=\d+ allowed=(\S+)',
                                    text, re.M):
        out.setdefault(int(r), {})[int(t)] = allowed
    return out


def _by_layout(cases: list[dict], layout: str) -> dict:
    (tc,) = [tc for tc in cases if tc['display_name'].startswith(f'HybridBindingCheck {layout}')]
    return tc


@pytest.mark.parametrize('which', ['mpirun_run', 'srun_run'])
def test_every_layout_passes_on_two_packages(which, request):
    proc, cases = request.getfixturevalue(which)
    hybrid = [tc for tc in cases if tc['display_name'].startswith('HybridBindingCheck')]
    assert len(hybrid) == 8, [tc['display_name'] for tc in cases]
    bad = [f"{tc['display_name']}: {tc['result']}: {tc['fail_reason']}" for tc in cases
           if tc['result'] != 'pass']
    assert not bad, '\n'.join(bad)
    assert proc.returncode == 0
    # one rank per package, one thread per core: each rank holds one package's PUs
    tc = _by_layout(cases, '%domain=package %ranks_per_domain=1 %fill=1')
    assert _ranks(tc) == {0: {0: '0-1', 1: '2-3'}, 1: {0: '4-5', 1: '6-7'}}
    # two ranks per NUMA node, twice the threads: two threads share each core's place
    tc = _by_layout(cases, '%domain=numa %ranks_per_domain=2 %fill=2')
    assert _ranks(tc) == {r: {0: f'{2 * r}-{2 * r + 1}', 1: f'{2 * r}-{2 * r + 1}'}
                          for r in range(4)}


def test_open_mpi_reports_the_bindings_the_ranks_ran_with(mpirun_run):
    _, cases = mpirun_run
    tc = _by_layout(cases, '%domain=package %ranks_per_domain=2 %fill=1')
    err = Path(tc['outputdir'], 'rfm_job.err').read_text()
    assert re.search(r'MCW rank 2 bound to .*: \[\.\./\.\.\]\[BB/\.\.\]', err), err
    assert tc['layout'] == '4 ranks x 1 threads, 2 per package, 1 cores each'


def test_srun_binds_across_packages_as_slurm_reports(srun_run):
    _, cases = srun_run
    tc = _by_layout(cases, '%domain=package %ranks_per_domain=1 %fill=1')
    out = Path(tc['outputdir'], 'rfm_job.out').read_text()
    assert re.search(r'^rank=1 slurmbind localid=1 type=mask_cpu: list=0x0F,0xF0$', out, re.M)
    script = Path(tc['outputdir'], 'rfm_job.sh').read_text()
    assert '--ntasks-per-socket=1 --distribution=block:block --cpu-bind=cores' in script
    # the NUMA-domain layouts state each rank's mask explicitly
    tc = _by_layout(cases, '%domain=numa %ranks_per_domain=2 %fill=1')
    assert '--cpu-bind=mask_cpu:0x3,0xc,0x30,0xc0' in \
        Path(tc['outputdir'], 'rfm_job.sh').read_text()
    slurm = [tc for tc in cases if tc['display_name'].startswith('SlurmCpuBindCheck')]
    assert len(slurm) == 3 and all(tc['result'] == 'pass' for tc in slurm)


@pytest.mark.parametrize('partition', ['mpi', 'slurm'])
def test_ranks_left_unbound_fail_with_the_line_that_names_it(partition, env, reframe_bin, root,
                                                             numa_node):
    proc, cases = _reframe(env, reframe_bin, root, numa_node.share, f'unbound-{partition}',
                           '--system', f'testnuma:{partition}', '-n',
                           'HybridBindingCheck%domain=package%ranks_per_domain=1%fill=1',
                           '-S', 'rank_binding=none')
    (tc,) = [tc for tc in cases if tc['display_name'].startswith('HybridBindingCheck')]
    assert tc['result'] == 'fail' and proc.returncode != 0
    assert 'every rank runs on the same CPUs 0-3' in tc['fail_reason'], tc['fail_reason']
    assert 'ranks 0 and 1 share CPU(s) 0-3' in tc['fail_reason']
