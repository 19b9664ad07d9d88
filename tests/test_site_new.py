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
import re
import runpy
import shutil
import socket
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
    assert lines[1] == f'captured on node {slurm.node}; partition debug: 1 node(s)'
    assert lines[2] == (f"wrote {systems / 'mycluster.py'} (lines a site tunes are marked "
                        f"'# site:') and {systems / 'mycluster.xml'}")
    pus = os.cpu_count()
    assert lines[3].startswith('node: 1 package(s), 1 NUMA node(s), ') and f'{pus} PUs' in lines[3]
    assert lines[4] == 'thread sweep: 1, full, 2xfull' or lines[4].startswith('thread sweep: 1, 2')
    assert lines[-1].startswith('NODE READY mycluster: binding and memory-policy checks: ')
    assert ', 0 failed' in lines[-1]
    text = (systems / 'mycluster.py').read_text()
    assert "'access': ['--partition=debug', '--exclusive'],   # site:" in text
    assert f"os.path.join(HERE, 'mycluster.xml'),   # captured on {slurm.node}" in text
    assert f'The topology was captured on node {slurm.node}.' in text
    assert "'nodes': 1,   # the partition's nodes as slurm lists them" in text
    assert 'topology_per_node' not in text and 'two_node_launch' not in text
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


def system_of(path: Path) -> dict:
    """The one system a written system file defines, loaded as config/settings.py loads it."""
    sys.path.insert(0, str(ROOT / 'config'))
    try:
        return runpy.run_path(str(path))['site_configuration']['systems'][0]
    finally:
        sys.path.remove(str(ROOT / 'config'))


@pytest.mark.nodes
@pytest.mark.reframe
def test_a_four_node_partition(slurm_nodes, site_dir, reframe_bin, tmp_path):
    """The 4-node test Slurm (n1..n4): the node count from sinfo, one topology per node, a
    hostnames pattern that selects this host, the node captured named; the test Slurm's
    srun cannot start a task on a second node, so the file says so and the two-node
    ping-pong skips with that reason instead of failing in every session."""
    from slurm_nodes import PARTITION
    cluster = slurm_nodes(4)
    env = {**cluster.env, **site_dir}
    proc = site_new(env, 'fournodes', '--scheduler', 'slurm', '--partition', PARTITION,
                    '--no-check')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f'site fournodes: slurm partition {PARTITION}, launcher srun'
    m = re.fullmatch(rf'captured on node (n[1-4]); partition {PARTITION}: 4 node\(s\)', lines[1])
    assert m, lines
    node = m.group(1)
    (probe,) = [ln for ln in lines if ln.startswith('a task on a second node: ')]
    assert probe.endswith("; the two-node checks skip (extras['two_node_launch'] False)"), probe
    assert 'srun: error: ' in probe
    path = Path(site_dir['PLACEMENT_SYSTEMS'], 'fournodes.py')
    text = path.read_text()
    assert f'The topology was captured on node {node} (one of 4)' in text
    assert f"os.path.join(HERE, 'fournodes.xml'),   # captured on {node}" in text
    system = system_of(path)
    extras = system['partitions'][0]['extras']
    assert extras['nodes'] == 4 and extras['topology_per_node'] is True
    assert extras['two_node_launch'] is False
    assert "'nodes': 4,   # the partition's nodes as slurm lists them" in text
    (pattern,) = system['hostnames']
    assert re.match(pattern, socket.gethostname()) and '# site: the login hosts' in text
    # ReFrame selects the new system on this host by its hostnames alone (no --system), and
    # the two-node ping-pong skips with the probe's reason
    run = subprocess.run(
        [reframe_bin, '-C', 'config/settings.py', '-c', 'reframe_tests/kernels.py',
         '-n', 'PingPongCheck.*two-nodes.*small', '-p', 'gnu', '--prefix', str(tmp_path / 'rfm'),
         '-r'], cwd=ROOT, env={**os.environ, **env, 'PLACEMENT_RESULTS': str(tmp_path / 'r')},
        capture_output=True, text=True, timeout=900)
    assert "selected system:   'fournodes'" in run.stdout, run.stdout[-3000:]
    assert "extras['two_node_launch'] False: its launcher did not start a task on a second " \
           "node" in run.stdout, run.stdout[-3000:]
    assert re.search(r'Ran \d+/\d+ test case\(s\)', run.stdout) and 'FAILED' not in run.stdout


def test_the_hostnames_pattern_is_this_hosts_name_or_a_prompt():
    from placement.site import system_file
    pattern = system_file.login_pattern('login1.cluster.example.org')
    assert [bool(re.match(pattern, h)) for h in ('login1', 'login1.cluster.example.org',
                                                 'login10', 'xlogin1')] == [True, True, False,
                                                                            False]
    assert system_file.login_pattern('localhost.localdomain') is None
    assert re.match(system_file.login_pattern(), socket.gethostname())
    answers = system_file.Answers('pbsone', 'pbs', 'workq', 'mpirun', ['-q workq'])
    text = system_file.system_file(answers, None)
    assert "'hostnames': ['^pbsone'],      # site: the login hosts' names" in text
    # a scheduler that did not say how many nodes: the site is asked, and each node's own
    # topology is captured where nodes can differ
    assert "'nodes': 1,   # site: nodes in the partition (pbs did not say)" in text
    assert "'topology_per_node': True," in text and 'two_node_launch' not in text


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
    (('x', '--scheduler', 'local', '--partition', 'batch'),
     '--scheduler local has none: leave it out'),
    (('x', '--scheduler', 'local', '--host', 'n1'), '--host names the node of --scheduler ssh'),
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
    # one queue instance (all.q@host) per host: the one host of the test queue
    assert "'nodes': 1,   # the partition's nodes as sge lists them" in text
    assert re.search(r'^captured on node \S+; partition all\.q: 1 node\(s\)$', proc.stdout, re.M)


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
