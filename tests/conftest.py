"""Shared fixtures: where the checkout is, which ``reframe`` to run, how to run
``scripts/acceptance.sh``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


#: fixtures that start or drive a live thing (a ReFrame run, a scheduler, an emulated node):
#: a test that asks for one is marked ``live`` and left out of ``make check``
LIVE_FIXTURES = frozenset({'reframe_bin', 'acceptance_sh', 'numa_node', 'numa_slurm', 'slurm',
                           'slurm_nodes', 'sge', 'sge_cluster', 'real_run', 'fake_node'})
#: the markers of tests that need a live cluster, an emulated node or a ReFrame run
LIVE_MARKERS = ('reframe', 'slurm', 'sge', 'numa', 'nodes')


def pytest_collection_modifyitems(config, items):
    """Marks ``live`` every test that asks for a live fixture or carries a live marker, so
    ``make check`` (``-m "not live"``) runs the rest alone."""
    for item in items:
        if (LIVE_FIXTURES & set(getattr(item, 'fixturenames', ()))
                or any(item.get_closest_marker(m) for m in LIVE_MARKERS)):
            item.add_marker(pytest.mark.live)


@pytest.fixture(scope='session')
def root() -> Path:
    """The checkout (config/, reframe_tests/, scripts/)."""
    return ROOT


@pytest.fixture(scope='session')
def reframe_bin() -> str:
    """The venv's ReFrame (``make venv``), else one on PATH: the version the suite pins."""
    for cand in (ROOT / '.venv' / 'bin' / 'reframe', shutil.which('reframe')):
        if cand and os.access(cand, os.X_OK):
            return str(cand)
    pytest.fail('reframe not found: run `make venv`')


@pytest.fixture(scope='session')
def acceptance_sh():
    """Runs ``scripts/acceptance.sh -m quick -s generic`` (one way for every test of an
    acceptance run): ``run(env, checks, *args, opts=(), prefix=None, timeout=900)``, with
    the acceptance options ``opts`` and, after ``--``, ReFrame's ``-c checks``, ``--prefix
    prefix`` when given and ``args``; returns the finished process, its output captured."""
    def run(env: dict, checks: Path, *args: str, opts: tuple[str, ...] = (),
            prefix: Path | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
        where = ['--prefix', str(prefix)] if prefix is not None else []
        return subprocess.run(
            [str(ROOT / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s', 'generic', *opts,
             '--', '-c', str(checks), *where, *args],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture(scope='session')
def numa_node(tmp_path_factory):
    """The emulated two-socket NUMA node (``numa_node.py``), one boot for the whole session.

    Skips with the reason where QEMU, the kernel, busybox or OpenSSH is missing;
    QEMU and the shared ssh connection are stopped by pid at the end.
    """
    from daemon_wait import free_port
    from numa_node import NumaNode, NumaNodeError, missing_tools

    why = missing_tools()
    if why:
        pytest.skip(f'no emulated NUMA node: {why} (scripts/ensure-system-tools.sh test)')
    # one more forwarded port: the guest's slurmd, for numa_slurm
    node = NumaNode(tmp_path_factory.mktemp('numa-node'), forwards=(free_port(),))
    try:
        node.start(timeout=180)     # a boot takes 15-60 s here; a stalled one is retried
    except NumaNodeError as err:
        pytest.fail(f'the emulated NUMA node did not start: {err}', pytrace=False)
    yield node
    node.stop()
    assert not node.running(), 'QEMU left running'


@pytest.fixture(scope='session')
def numa_slurm(numa_node):
    """A real Slurm whose one compute node is the emulated NUMA node (``numa_slurm.py``)."""
    import shutil

    from numa_slurm import GuestSlurm
    from slurm_cluster import SlurmClusterError

    for tool in ('munged', 'slurmctld', 'slurmd', 'sbatch'):
        if shutil.which(tool) is None:
            pytest.skip(f'{tool} is not installed (scripts/ensure-system-tools.sh test)')
    cluster = GuestSlurm(numa_node, numa_node.forwards[0])
    try:
        cluster.start()
    except SlurmClusterError as err:
        cluster.stop()
        pytest.fail(f'Slurm on the emulated node did not start: {err}', pytrace=False)
    yield cluster
    cluster.stop()


@pytest.fixture(scope='module')
def slurm(tmp_path_factory):
    """A one-node test Slurm cluster (``slurm_cluster.py``) for one test module."""
    from slurm_cluster import SlurmCluster, SlurmClusterError
    if shutil.which('slurmctld') is None:
        pytest.skip('slurmctld is not installed (scripts/ensure-system-tools.sh test)')
    c = SlurmCluster(tmp_path_factory.mktemp('slurm'))
    try:
        c.start()
    except SlurmClusterError as err:
        c.stop()
        pytest.fail(f'the test Slurm cluster did not start: {err}', pytrace=False)
    yield c
    c.stop()


@pytest.fixture(scope='session')
def slurm_nodes(tmp_path_factory):
    """Starts several-node test Slurm clusters (``slurm_nodes.py``) for the session:
    ``start(n=4, slow={'n2': 0.5}, cpus={'n3': '1'})`` returns a running
    :class:`~slurm_nodes.SlurmNodes`; every one is stopped by pid, and its cgroups
    removed, at the end. Skips where Slurm or ``unshare`` is missing; fails, with
    the daemons' logs, where a cluster does not come up."""
    from slurm_cluster import SlurmClusterError
    from slurm_nodes import SlurmNodes

    for tool in ('slurmctld', 'slurmd', 'munged', 'unshare'):
        if shutil.which(tool) is None:
            pytest.skip(f'{tool} is not installed (scripts/ensure-system-tools.sh test)')
    started: list[SlurmNodes] = []

    def start(n: int = 4, slow: dict | None = None, cpus: dict | None = None) -> SlurmNodes:
        root = tmp_path_factory.mktemp('nodes')
        os.chmod(root, 0o700)
        c = SlurmNodes(root, n, slow, cpus)
        started.append(c)
        try:
            c.start()
        except SlurmClusterError as err:
            pytest.fail(f'the test Slurm nodes did not start: {err}', pytrace=False)
        return c

    yield start
    for c in started:
        c.stop()
    left = {d: p for c in started for d, p in c.running().items() if p}
    assert not left, f'daemons left running: {left}'
