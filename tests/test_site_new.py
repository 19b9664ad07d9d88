"""``placement site new``: a system file from the compute node, on the test clusters.

Against the test Slurm cluster the whole first day runs: the node's topology
captured through ``sbatch``, the system file and topology written, the sweep and
maps shown, the binding and memory-policy checks passed there, one READY line;
then a changed node is named change by change. Against the test Grid Engine and
the emulated NUMA node (ssh) the capture and the file are checked; bad answers
are one line each, with nothing written or the old file left as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def site_new(env: dict, *args: str, path: str | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, **env}
    if path is not None:
        full['PATH'] = path
    return subprocess.run([sys.executable, '-m', 'placement', 'site', 'new', *args],
                          capture_output=True, text=True, env=full, cwd=ROOT, timeout=1200)


@pytest.fixture
def site_dir(tmp_path):
    return {'PLACEMENT_SYSTEMS': str(tmp_path / 'systems'),
            'PLACEMENT_RESULTS': str(tmp_path / 'results')}


@pytest.mark.slurm
@pytest.mark.reframe
def test_first_day_on_the_test_slurm_cluster(slurm, site_dir, reframe_bin):
    env = {**slurm.env, **site_dir}
    proc = site_new(env, 'mycluster', '--scheduler', 'slurm', '--partition', 'debug')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    systems = Path(site_dir['PLACEMENT_SYSTEMS'])
    assert lines[0] == 'site mycluster: slurm partition debug, launcher srun'
    assert lines[1] == (f"wrote {systems / 'mycluster.py'} (lines a site tunes are marked "
                        f"'# site:') and {systems / 'mycluster.xml'}")
    pus = os.cpu_count()
    assert lines[2].startswith('node: 1 package(s), 1 NUMA node(s), ') and f'{pus} PUs' in lines[2]
    assert lines[3] == 'thread sweep: 1, full, 2xfull' or lines[3].startswith('thread sweep: 1, 2')
    assert lines[-1].startswith('NODE READY mycluster: binding and memory-policy checks: ')
    assert ', 0 failed' in lines[-1]
    text = (systems / 'mycluster.py').read_text()
    assert "'access': ['--partition=debug', '--exclusive'],   # site:" in text
    assert "os.path.join(HERE, 'mycluster.xml')" in text
    # ReFrame selects the new system and lists its checks
    listing = subprocess.run([reframe_bin, '-C', 'config/settings.py', '--system', 'mycluster',
                              '-c', 'reframe_tests/binding_probe.py', '-l'], cwd=ROOT,
                             env={**os.environ, **env}, capture_output=True, text=True)
    assert "selected system:   'mycluster'" in listing.stdout, listing.stdout[-2000:]
    # the node changes (here: the stored file is another node's): each change named
    shutil.copy(ROOT / 'topologies' / 'xeon-e5620.xml', systems / 'mycluster.xml')
    again = site_new(env, 'mycluster', '--scheduler', 'slurm', '--partition', 'debug',
                     '--no-check', '--force')
    assert again.returncode == 0, again.stderr
    assert f"the node changed since {systems / 'mycluster.xml'} was captured:" in again.stdout
    assert f'  PUs: 8 -> {pus}' in again.stdout and '  packages: 2 -> 1' in again.stdout
    assert '  NUMA nodes: 2 -> 1' in again.stdout
    assert again.stdout.splitlines()[-1].startswith('NOT CHECKED mycluster')


@pytest.mark.slurm
def test_a_partition_that_does_not_exist_is_one_line_and_writes_nothing(slurm, site_dir):
    proc = site_new({**slurm.env, **site_dir}, 'mycluster', '--scheduler', 'slurm',
                    '--partition', 'nope')
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("placement: error: slurm has no partition or queue 'nope' "
                                   "(it lists: debug)")
    assert not Path(site_dir['PLACEMENT_SYSTEMS'], 'mycluster.py').exists()


def test_no_lstopo_on_the_node_is_one_line_and_the_old_file_stays(site_dir, tmp_path):
    systems = Path(site_dir['PLACEMENT_SYSTEMS'])
    systems.mkdir()
    (systems / 'mine.py').write_text('# the site edited this\n')
    bare = tmp_path / 'bin'          # a PATH with the tools but no hwloc
    bare.mkdir()
    for tool in ('sh', 'bash', 'uname', 'hostname', 'cat', 'ls'):
        if shutil.which(tool):
            (bare / tool).symlink_to(shutil.which(tool))
    proc = site_new(site_dir, 'mine', '--scheduler', 'local', '--force', path=str(bare))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and 'lstopo' in proc.stderr
    assert 'Traceback' not in proc.stderr
    assert (systems / 'mine.py').read_text() == '# the site edited this\n'


@pytest.mark.parametrize('args, words', [
    (('Bad Name', '--scheduler', 'local'), "system name 'Bad Name'"),
    (('x', '--scheduler', 'ssh'), '--scheduler ssh needs --host'),
    (('x', '--scheduler', 'slurm'), '--scheduler slurm needs --partition'),
    (('x', '--scheduler', 'lsf'), "invalid choice: 'lsf'"),
])
def test_bad_answers_are_one_line(args, words, site_dir):
    proc = site_new(site_dir, *args)
    assert proc.returncode == 2 and words in proc.stderr and 'Traceback' not in proc.stderr


@pytest.mark.sge
def test_the_test_grid_engine_queue(site_dir, tmp_path_factory):
    from sge_cluster import SgeCluster, SgeClusterError
    if shutil.which('qsub') is None:
        pytest.skip('Grid Engine is not installed (scripts/ensure-system-tools.sh test)')
    c = SgeCluster(tmp_path_factory.mktemp('sge-site'))
    try:
        c.start()
    except (SgeClusterError, subprocess.SubprocessError, OSError) as err:
        c.stop()
        pytest.fail(f'the test Grid Engine cluster did not start: {err}', pytrace=False)
    try:
        proc = site_new({**c.env, **site_dir}, 'mysge', '--scheduler', 'sge', '--partition',
                        'all.q', '--no-check')
    finally:
        c.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = Path(site_dir['PLACEMENT_SYSTEMS'], 'mysge.py').read_text()
    assert "'scheduler': 'sge-access'" in text and "'name': 'all_q'" in text
    assert "'access': ['-q all.q', '-S /bin/bash']" in text


@pytest.mark.numa
@pytest.mark.reframe
def test_the_emulated_numa_node_over_ssh(numa_node, site_dir):
    env = {**numa_node.env, **site_dir, 'PLACEMENT_RESULTS': str(numa_node.share / 'site')}
    proc = site_new(env, 'mynuma', '--scheduler', 'ssh', '--host', '127.0.0.1',
                    '--access=-F', f'--access={numa_node.ssh_config}', '--no-check')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'node: 2 package(s), 2 NUMA node(s), 4 cores, 8 PUs, 2 thread(s) per core' \
        in proc.stdout
    assert 'thread sweep: 1, 2, 4, full, 2xfull' in proc.stdout
    assert 'scatter map, 8 threads: 0 4 2 6 1 5 3 7' in proc.stdout
