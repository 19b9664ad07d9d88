"""The test Slurm's nodes on a host with cgroup v2 alone and no systemd (no D-Bus).

Why: a site's node (and the 16-core machines the partition is tried on) often has the
unified hierarchy only, and no systemd to ask for a scope: slurmd 22.05 then stopped at
``cgroup_dbus_attach_to_scope: cannot connect to dbus``, and, told to ignore systemd, made
its steps' scope at the root of the hierarchy, outside the node's cap. Here an emulated
node (QEMU, ``numa_node.py``, booted for this module alone) mounts cgroup2 as its only
hierarchy, and ``slurm_nodes.py`` starts a 2-node cluster in it with n2 capped at half
its CPUs: the jobs of n2 must run in their step's scope inside n2's group and be
throttled by its cap, those of n1 not; ``stop`` removes every group it made.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

import node_cgroups

pytestmark = [pytest.mark.numa, pytest.mark.slurm]

ROOT = Path(__file__).resolve().parents[1]
#: where the cluster lives in the guest (its own tmpfs): the group names carry its name
CLUSTER = '/tmp/cgv2'
#: the guest's share of its 2 vCPUs that n2 gets
SLOW = 0.5


@pytest.fixture(scope='module')
def guest(tmp_path_factory):
    """A 2-PU emulated node whose one cgroup hierarchy is cgroup2, with the 2-node cluster."""
    import shutil

    from numa_node import NumaNode, NumaNodeError, Shape, missing_tools

    why = missing_tools()
    if why:
        pytest.skip(f'no emulated node: {why} (scripts/ensure-system-tools.sh test)')
    for tool in ('munged', 'slurmctld', 'slurmd', 'srun'):
        if shutil.which(tool) is None:
            pytest.skip(f'{tool} is not installed (scripts/ensure-system-tools.sh test)')
    node = NumaNode(tmp_path_factory.mktemp('cgroup-v2-node'),
                    shape=Shape('placement-cgv2', packages=1, cores=2))
    try:
        node.start(timeout=180)
    except NumaNodeError as err:
        pytest.fail(f'the emulated node did not start: {err}', pytrace=False)
    try:
        yield node, _in(node, 'mount -t cgroup2 cgroup2 /sys/fs/cgroup && '
                              f'{_nodes_py()} start 2 {CLUSTER} --slow n2={SLOW}', 240)
    finally:
        node.stop()


def _nodes_py() -> str:
    """The checkout's slurm_nodes.py under the venv's Python (the guest's root is this
    host's, so both are at the same paths)."""
    return f'{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / "tests/slurm_nodes.py"))}'


def _in(node, command: str, timeout: float = 120) -> str:
    """``command`` run in the guest; its output, or the test fails with its error."""
    proc = node.ssh(f'cd {shlex.quote(str(ROOT))} && {command}', timeout=timeout)
    assert proc.returncode == 0, f'{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}'
    return proc.stdout


def _group(node: str) -> str:
    """The node's group as the guest's root sees it (the name ``slurm_nodes.py`` gives it)."""
    from slurm_nodes import SlurmNodes
    return f'/sys/fs/cgroup/{SlurmNodes(Path(CLUSTER), 2).cgroup(node).name}'


def _busy_job(guest_node, node: str) -> str:
    """A job that spins both of the node's CPUs for 2 s; what it printed (its host name and
    its own cgroup, as its namespace shows it)."""
    return _in(guest_node, f'SLURM_CONF={CLUSTER}/slurm.conf srun -w {node} -n1 -c2 sh -c '
                           '"hostname; cat /proc/self/cgroup; '
                           'for i in 1 2; do timeout 2 sh -c \'while :; do :; done\' & done; '
                           'wait; true"')


def _throttled(guest_node, node: str) -> int:
    """How many periods the node's group was throttled by its cap (``cpu.stat``)."""
    stat = _in(guest_node, f'cat {_group(node)}/cpu.stat')
    return int(dict(ln.split() for ln in stat.splitlines())['nr_throttled'])


def test_the_nodes_start_without_dbus(guest):
    node, started = guest
    assert f'export SLURM_CONF={CLUSTER}/slurm.conf' in started, started
    assert _in(node, 'stat -f -c %T /sys/fs/cgroup').strip() == 'cgroup2fs'
    assert 'IgnoreSystemd=yes' in _in(node, f'cat {CLUSTER}/cgroup.conf')


@pytest.mark.parametrize('name', ['n1', 'n2'])
def test_a_nodes_jobs_run_in_its_group_and_only_the_capped_one_is_throttled(guest, name):
    node, _ = guest
    before = _throttled(node, name)
    out = _busy_job(node, name)
    assert out.splitlines()[0] == name, out
    # the step's scope, in the cgroup namespace rooted at the node's group (seen from the
    # guest's root: the same scope under the group's folder)
    assert f'0::/{node_cgroups.SLICE}/{name}_slurmstepd.scope/' in out, out
    scope = f'{_group(name)}/{node_cgroups.SLICE}/{name}_slurmstepd.scope'
    assert _in(node, f'test -d {scope} && echo yes').strip() == 'yes'
    throttled = _throttled(node, name) - before
    if name == 'n2':
        assert _in(node, f'cat {_group(name)}/cpu.max').split()[0] == str(
            round(SLOW * 2 * node_cgroups.PERIOD_US))
        assert throttled > 10, throttled
    else:
        assert _in(node, f'cat {_group(name)}/cpu.max').split()[0] == 'max'
        assert throttled == 0, throttled


def test_stop_removes_every_group_it_made(guest):
    node, _ = guest
    _in(node, f'{_nodes_py()} stop {CLUSTER}', 120)
    left = _in(node, 'ls /sys/fs/cgroup').split()
    assert not [g for g in left if g.startswith('placement-')], left
