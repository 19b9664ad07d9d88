"""A real Slurm whose compute node is the emulated NUMA node: slurmctld here, slurmd in the guest.

Why: ``srun --cpu-bind`` only means something on a node with several packages
and NUMA nodes, and the machines the suite is developed on have one of each.
The controller (``munged`` + ``slurmctld``) runs on this host; the guest of
``numa_node.py`` runs ``munged`` + ``slurmd`` with the same munge key, so jobs
submitted here run there, as on a cluster. QEMU's user-mode network carries the
traffic both ways: the controller reaches ``slurmd`` through a port forwarded
from 127.0.0.1 (``NumaNode(forwards=...)``), and the guest reaches the
controller at 10.0.2.2, QEMU's address for this host. So the guest reads its
own ``slurm.conf`` (the same but for the controller's address); jobs get it
through ``SLURM_CONF`` in the partition's environment (config/systems/testnuma.py).

All files live in a folder of the guest's shared directory, so the host can read
the guest's ``slurmd`` log; the guest daemons' pids, spool and munge socket stay
in the guest's own ``/run``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from slurm_cluster import SlurmCluster, SlurmClusterError, conf_text
from daemon_wait import free_port

#: The node as Slurm sees it: QEMU's 2 packages x 2 cores x 2 threads, 1 GiB per NUMA node.
NODE = 'placement-numa'
NODE_SHAPE = 'CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=1500'
#: QEMU's user-mode network: the host, as the guest reaches it.
HOST_FROM_GUEST = '10.0.2.2'
GUEST_RUN = '/run/placement-slurm'


class GuestSlurm(SlurmCluster):
    """Controller on this host, the emulated node as its one compute node (partition ``numa``)."""

    def __init__(self, node, slurmd_port: int, root: Path | None = None) -> None:
        super().__init__(root or node.share / 'slurm')
        self.numa = node
        self.slurmd_port = slurmd_port
        self.guest_conf = self.root / 'slurm-guest.conf'

    @property
    def env(self) -> dict[str, str]:
        return {'SLURM_CONF': str(self.conf),
                'PLACEMENT_TEST_NUMA_SLURM_GUEST_CONF': str(self.guest_conf)}

    def _write_config(self) -> None:
        for sub in ('munge', 'state'):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / 'munge').chmod(0o700)
        key = self.root / 'munge' / 'munge.key'
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (self.root / 'plugstack.conf').write_text('')
        node_line = f'NodeName={NODE} NodeAddr=127.0.0.1 Port={self.slurmd_port} {NODE_SHAPE} ' \
                    'State=UNKNOWN'
        common = dict(ctld_port=free_port(), slurmd_port=self.slurmd_port,
                      state=self.root / 'state', node_line=node_line, mpi='none',
                      partition=f'PartitionName=numa Nodes={NODE} Default=YES '
                                'MaxTime=INFINITE State=UP OverSubscribe=NO')
        self.conf.write_text(conf_text(
            ctld=f'{self.node}(127.0.0.1)', munge_socket=self.munge_socket,
            spool=self.root / 'spool', files=self.root, **common))
        # the guest: the controller at QEMU's host address, its own socket, spool and pids
        guest = Path(GUEST_RUN)
        text = conf_text(ctld=f'{self.node}({HOST_FROM_GUEST})',
                         munge_socket=guest / 'munge.socket', spool=guest / 'spool',
                         files=guest, **common)
        # the guest's slurmd log is read here: it goes to the shared folder
        text = text.replace(f'SlurmdLogFile={guest / "slurmd.log"}',
                            f'SlurmdLogFile={self.root / "guest-slurmd.log"}')
        self.guest_conf.write_text(text)

    def logs(self) -> str:
        parts = [super().logs()]
        for f in (self.root / 'guest-slurmd.log', self.root / 'guest-munged.log'):
            text = f.read_text(errors='replace') if f.exists() else '(no log)'
            parts.append(f'--- {f} ---\n' + '\n'.join(text.splitlines()[-30:]))
        return '\n'.join(parts) + '\n' + self.numa.logs()

    def _guest(self, command: str, what: str) -> None:
        proc = self.numa.ssh(command, timeout=120)
        if proc.returncode != 0:
            raise SlurmClusterError(f'{what} in the guest exited {proc.returncode}: '
                                    f'{proc.stderr.strip()[-1500:]}\n{self.logs()}')

    def start(self) -> 'GuestSlurm':
        """Start munged and slurmctld here, munged and slurmd in the guest; wait for idle."""
        self._write_config()
        self._start_controller()
        m = self.root / 'munge'
        g = GUEST_RUN
        quiet = '</dev/null >/dev/null 2>&1'
        self._guest(
            # slurmd (22.05) starts its cgroup plugin even for task/affinity alone, and its
            # cgroup/v2 needs systemd's dbus: v1 hierarchies, as on the host, are enough
            'mount -t tmpfs cgroup /sys/fs/cgroup && for c in cpuset freezer memory devices; do '
            'mkdir -p /sys/fs/cgroup/$c && mount -t cgroup -o $c $c /sys/fs/cgroup/$c; done && '
            'mkdir -p /sys/fs/cgroup/systemd && '
            'mount -t cgroup -o none,name=systemd systemd /sys/fs/cgroup/systemd && '
            f'mkdir -p {g}/spool && chmod 755 {g} && '
            f'cp {shlex.quote(str(m / "munge.key"))} {g}/munge.key && chmod 400 {g}/munge.key && '
            f'munged --force --key-file={g}/munge.key --socket={g}/munge.socket '
            f'--pid-file={g}/munged.pid --seed-file={g}/munged.seed '
            f'--log-file={shlex.quote(str(self.root / "guest-munged.log"))} {quiet} && '
            f'slurmd -f {shlex.quote(str(self.guest_conf))} {quiet}',
            'starting munged and slurmd')
        self._wait('the emulated node becoming idle in Slurm',
                   lambda: self.node_state() in ('idle', 'mixed', 'allocated'), timeout=120)
        return self
