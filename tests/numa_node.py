"""A two-socket NUMA compute node with SMT, emulated by QEMU, reached over ssh.

Why: placement only matters on nodes with several packages, NUMA nodes and
hardware threads, and the machines the suite is developed on have one of each.
This starts such a node (2 packages x 2 cores x 2 threads, one NUMA node per
package, 1 GiB each) from Debian's own kernel and a busybox initramfs made here.
The host's ``/`` is the guest's root, read-only over 9p with a tmpfs overlay,
so the checkout, its venv and the programs ReFrame builds run unchanged; the
``share`` directory is mounted read-write at the same path (ReFrame's stage
and output folders go there). ``sshd`` runs in the guest; the host reaches it
only through QEMU's user-mode network, on a port forwarded from 127.0.0.1.

QEMU numbers hardware-thread siblings adjacently: package p holds PUs
4p..4p+3 and is NUMA node p. Automatic NUMA balancing is switched off at boot
(``kernel.numa_balancing=0``) so pages stay where they were first touched, and
transparent huge pages are used only where a program asks (``madvise``, Debian's
default; ``always`` would place memory in 2 MiB steps, coarser than the checks'
arrays are split between threads).

By hand::

    python tests/numa_node.py start DIR [SHAPE]  # prints: export PLACEMENT_TEST_NUMA_SSH_CONFIG=...
    python tests/numa_node.py stop DIR

SHAPE is one of the seed studies' nodes (xeon-e5620, cometlake, bulldozer);
without it, the two-socket node above.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from daemon_wait import free_port, terminate, wait_until

#: Under TCG an Intel model is needed for the hardware threads to show (AMD models hide them).
CPU_MODEL = 'Haswell-noTSX,-pcid,-x2apic,-tsc-deadline,-invpcid'


@dataclass(frozen=True)
class Shape:
    """A node's shape as QEMU can express it: packages x dies x cores x threads, NUMA per die.

    QEMU numbers PUs package by package, die by die, core by core, hardware
    threads adjacent; one NUMA node per package (``dies=1``) or per die.
    """

    name: str
    packages: int
    cores: int                  #: per die
    threads: int = 1
    dies: int = 1               #: per package; each die its own NUMA node
    node_mem_mib: int = 1024    #: per NUMA node

    @property
    def pus(self) -> int:
        return self.packages * self.dies * self.cores * self.threads

    @property
    def numa_nodes(self) -> int:
        return self.packages * self.dies

    def smp(self) -> str:
        dies = f',dies={self.dies}' if self.dies > 1 else ''
        return (f'{self.pus},sockets={self.packages}{dies},cores={self.cores},'
                f'threads={self.threads}')


#: The node of make test-numa: 2 packages x 2 cores x 2 threads, 2 NUMA nodes.
TWO_SOCKET = Shape('placement-numa', packages=2, cores=2, threads=2)
#: The seed studies' nodes as QEMU can express them (config/systems/seednodes.py).
SEED_SHAPES = {
    'xeon-e5620': Shape('xeon-e5620', packages=2, cores=4, node_mem_mib=512),
    'cometlake': Shape('cometlake', packages=1, cores=8, threads=2),
    'bulldozer': Shape('bulldozer', packages=4, dies=2, cores=8, node_mem_mib=256),
}
#: The guest kernel's command line. Under TCG a vCPU can wait minutes for a host core,
#: so the boot avoids what waits on every vCPU at once: the crypto self-tests
#: (``cryptomgr.notests``; a test thread that cannot be preempted held one vCPU while the
#: others sat in a clocksource switch's ``stop_machine``, soft lockups until ssh timed out)
#: and a second clocksource switch after the TSC watchdog (``tsc=reliable``); the kernel
#: preempts fully, so a long loop in the kernel gives way to the stopper thread.
KERNEL_ARGS = ('console=ttyS0 quiet panic=-1 mitigations=off cryptomgr.notests tsc=reliable '
               'preempt=full')
#: Modules the initramfs loads (with their dependencies), in this order.
MODULES = ('virtio_pci', '9pnet_virtio', '9p', 'overlay', 'virtio_net')


class NumaNodeError(RuntimeError):
    """The node could not be started; the message says why (and carries the console log)."""


def kernel_release() -> str:
    """The running kernel's release if its image is readable, else the newest in /boot."""
    cands = [os.uname().release] + sorted(
        (p.name[len('vmlinuz-'):] for p in Path('/boot').glob('vmlinuz-*')), reverse=True)
    for rel in cands:
        if Path(f'/boot/vmlinuz-{rel}').is_file() and Path(f'/lib/modules/{rel}').is_dir():
            return rel
    raise NumaNodeError('no kernel image with modules in /boot and /lib/modules '
                        '(apt-get install linux-image-amd64)')


def missing_tools() -> str | None:
    """Why the node cannot start here, or None."""
    for tool, pkg in (('qemu-system-x86_64', 'qemu-system-x86'), ('busybox', 'busybox-static'),
                      ('cpio', 'cpio'), ('ssh', 'openssh-client'),
                      ('ssh-keygen', 'openssh-client'), ('/usr/sbin/sshd', 'openssh-server')):
        if shutil.which(tool) is None:
            return f'{tool} is not installed (apt-get install {pkg})'
    try:
        kernel_release()
    except NumaNodeError as err:
        return str(err)
    return None


def _module_closure(release: str) -> list[Path]:
    """Module files for MODULES and everything they depend on, dependencies first."""
    moddir = Path('/lib/modules') / release
    deps: dict[str, list[str]] = {}
    paths: dict[str, Path] = {}
    for line in (moddir / 'modules.dep').read_text().splitlines():
        mod, _, rest = line.partition(':')
        name = Path(mod).name.split('.ko')[0].replace('-', '_')
        paths[name] = moddir / mod
        deps[name] = [Path(d).name.split('.ko')[0].replace('-', '_') for d in rest.split()]
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order or name not in paths:
            return   # built into the kernel
        for d in deps[name]:
            visit(d)
        order.append(name)

    for m in MODULES:
        visit(m.replace('-', '_'))
    return [paths[n] for n in order]


INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod /lib/mod/$m || echo "insmod $m failed"; done
mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro,cache=loose hostroot /lower
mount -t tmpfs -o size=256m tmpfs /rw; mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot
for d in proc sys dev; do mount --move /$d /newroot/$d; done
mkdir -p /newroot/dev/pts; mount -t devpts devpts /newroot/dev/pts
for d in tmp run; do mount -t tmpfs tmpfs /newroot/$d; done
SHARE=$(cat /share.path)
mkdir -p /newroot$SHARE
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none share /newroot$SHARE
ip link set lo up; ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0; ip route add default via 10.0.2.2
echo 0 > /newroot/proc/sys/kernel/numa_balancing
echo madvise > /newroot/sys/kernel/mm/transparent_hugepage/enabled
echo "placement-numa-node: root ready"
exec chroot /newroot /bin/sh $SHARE/guest-setup.sh
"""

GUEST_SETUP = r"""#!/bin/sh
# Runs in the guest's root: a host key, the test key, a minimal login shell, sshd.
set -e
hostname {hostname}
mkdir -p /run/sshd /root/.ssh /etc/ssh/guest
chmod 700 /root/.ssh
cp {share}/id_ed25519.pub /root/.ssh/authorized_keys
chmod 600 /root/.ssh/authorized_keys
# jobs run `bash -l`: the host's profile may be slow under emulation
printf 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' > /root/.bashrc
cp /root/.bashrc /root/.profile; rm -f /root/.bash_profile /root/.bash_login
ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/guest/host_ed25519
echo "placement-numa-node: sshd starting"
exec /usr/sbin/sshd -D -e -f /dev/null -o HostKey=/etc/ssh/guest/host_ed25519 \
    -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no -o UsePAM=no \
    -o AuthorizedKeysFile=.ssh/authorized_keys -o UseDNS=no -o MaxSessions=64 \
    -o MaxStartups=64 -o 'Subsystem=sftp /usr/lib/openssh/sftp-server' -o PrintMotd=no
"""


class NumaNode:
    """One guest; its files (initramfs, keys, ssh config, console log) live in ``root``.

    ``share`` (default ``root/share``) is mounted read-write at the same path in the guest.
    """

    def __init__(self, root: Path | str, share: Path | str | None = None,
                 accel: str | None = None, forwards: tuple[int, ...] = (),
                 shape: Shape = TWO_SOCKET) -> None:
        self.root = Path(root).resolve()
        self.share = Path(share).resolve() if share else self.root / 'share'
        #: ``tcg`` (default), ``tcg,thread=single`` (one host thread taking the vCPUs in turn)
        #: or ``kvm`` where /dev/kvm boots a stock kernel (PLACEMENT_NUMA_ACCEL)
        self.accel = accel or os.environ.get('PLACEMENT_NUMA_ACCEL', 'tcg')
        self.key = self.root / 'id_ed25519'
        self.ssh_config = self.root / 'ssh_config'
        self.console = self.root / 'console.log'
        self.pid_file = self.root / 'qemu.pid'
        self.master_pid_file = self.root / 'ssh-master.pid'
        self.port: int | None = None
        #: More ports of 127.0.0.1 forwarded to the same port in the guest (a slurmd's)
        self.forwards = tuple(forwards)
        self.shape = shape

    @property
    def env(self) -> dict[str, str]:
        """What ReFrame's configuration (config/systems/testnuma.py) needs to reach the node."""
        return {'PLACEMENT_TEST_NUMA_SSH_CONFIG': str(self.ssh_config)}

    def logs(self) -> str:
        text = self.console.read_text(errors='replace') if self.console.exists() else '(none)'
        return f'--- {self.console} ---\n' + '\n'.join(text.splitlines()[-40:])

    # --- files ----------------------------------------------------------------------------
    def _initramfs(self) -> Path:
        tree = self.root / 'initramfs'
        shutil.rmtree(tree, ignore_errors=True)
        for d in ('bin', 'proc', 'sys', 'dev', 'lib/mod'):
            (tree / d).mkdir(parents=True)
        shutil.copy(shutil.which('busybox'), tree / 'bin' / 'busybox')
        names = []
        for mod in _module_closure(kernel_release()):
            if mod.suffix == '.xz':
                import lzma
                data, name = lzma.open(mod).read(), mod.name[:-3]
            elif mod.suffix == '.zst':
                data = subprocess.run(['zstd', '-dc', str(mod)], capture_output=True,
                                      check=True).stdout
                name = mod.name[:-4]
            else:
                data, name = mod.read_bytes(), mod.name
            (tree / 'lib' / 'mod' / name).write_bytes(data)
            names.append(name)
        (tree / 'modules.order').write_text('\n'.join(names) + '\n')
        (tree / 'share.path').write_text(str(self.share))
        init = tree / 'init'
        init.write_text(INIT)
        init.chmod(0o755)
        out = self.root / 'initramfs.cpio'
        files = subprocess.run(['find', '.'], cwd=tree, capture_output=True, text=True,
                               check=True).stdout
        with open(out, 'wb') as fp:
            subprocess.run(['cpio', '-o', '-H', 'newc', '--quiet'], cwd=tree, input=files.encode(),
                           stdout=fp, check=True)
        return out

    def _write_files(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.share.mkdir(parents=True, exist_ok=True)
        if not self.key.exists():
            subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', str(self.key)],
                           check=True)
        shutil.copy(f'{self.key}.pub', self.share / 'id_ed25519.pub')
        (self.share / 'guest-setup.sh').write_text(GUEST_SETUP.format(share=self.share, hostname=self.shape.name))
        self.port = free_port()
        self.ssh_config.write_text(f"""\
# Generated by tests/numa_node.py: the emulated NUMA node, through QEMU's port forward.
Host 127.0.0.1
  Port {self.port}
  User root
  IdentityFile {self.key}
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
  ControlPath {self.root}/ssh-master.sock
""")

    def accel_option(self) -> str:
        """QEMU's ``-accel``: ``tcg`` is TCG with a thread per vCPU; any other (``kvm``,
        ``tcg,thread=single``) is passed as is."""
        return 'tcg,thread=multi' if self.accel == 'tcg' else self.accel

    def qemu_command(self, initramfs: Path) -> list[str]:
        rel = kernel_release()
        shape = self.shape
        per = shape.cores * shape.threads          # PUs per NUMA node (a package or a die)
        cmd = ['qemu-system-x86_64', '-name', shape.name, '-nographic', '-no-reboot',
               '-accel', self.accel_option(),
               '-cpu', CPU_MODEL if self.accel.startswith('tcg') else 'host',
               '-smp', shape.smp(),
               '-m', f'{shape.numa_nodes * shape.node_mem_mib}M',
               '-kernel', f'/boot/vmlinuz-{rel}', '-initrd', str(initramfs),
               '-append', KERNEL_ARGS,
               '-serial', f'file:{self.console}',
               '-monitor', 'none',
               '-virtfs', 'local,path=/,mount_tag=hostroot,security_model=none,readonly=on,'
                          'multidevs=remap',
               '-virtfs', f'local,path={self.share},mount_tag=share,security_model=none,'
                          'multidevs=remap',
               '-netdev', f'user,id=n0,hostfwd=tcp:127.0.0.1:{self.port}-:22'
                          + ''.join(f',hostfwd=tcp:127.0.0.1:{p}-:{p}' for p in self.forwards),
               '-device', 'virtio-net-pci,netdev=n0']
        for p in range(shape.numa_nodes):
            cmd += ['-object', f'memory-backend-ram,id=m{p},size={shape.node_mem_mib}M',
                    '-numa', f'node,nodeid={p},cpus={p * per}-{p * per + per - 1},memdev=m{p}']
        return cmd

    # --- life cycle -----------------------------------------------------------------------
    def ssh(self, command: str, timeout: float = 60, master: bool = False
            ) -> subprocess.CompletedProcess:
        """Run ``command`` in the guest (through the shared connection once it is up)."""
        opts = ['-F', str(self.ssh_config)] + ([] if master else ['-o', 'ControlMaster=no'])
        return subprocess.run(['ssh', *opts, '127.0.0.1', command], capture_output=True,
                              text=True, timeout=timeout)

    def _pid(self, pid_file: Path) -> int | None:
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, 0)
        except (OSError, ValueError, IndexError):
            return None
        return pid

    def _ssh_ready(self) -> bool:
        if self._qemu is not None and self._qemu.poll() is not None:
            raise NumaNodeError(f'QEMU exited {self._qemu.returncode}: '
                                f'{self._qemu_err.read_text()[-2000:]}\n{self.logs()}')
        try:
            return self.ssh('true', timeout=20).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def start(self, timeout: float = 300, boots: int = 2) -> 'NumaNode':
        """Boot the guest and open the shared ssh connection; return once ssh works.

        A guest that is not up within ``timeout`` is stopped and booted afresh, ``boots``
        times in all: an emulated boot that stalls (vCPUs starved of host cores) rarely
        stalls twice, and a node that never comes up still fails with every console log.
        """
        why = missing_tools()
        if why:
            raise NumaNodeError(why)
        self._write_files()
        initramfs = self._initramfs()
        failures: list[str] = []
        for boot in range(1, boots + 1):
            try:
                return self._boot(initramfs, timeout)
            except NumaNodeError as err:
                kept = self.root / f'console-boot{boot}.log'
                if self.console.exists():
                    self.console.replace(kept)
                failures.append(f'boot {boot} of {boots}: {err}'.replace(str(self.console),
                                                                          str(kept)))
        raise NumaNodeError('\n'.join(failures))

    def _boot(self, initramfs: Path, timeout: float) -> 'NumaNode':
        """One boot: QEMU started, ssh accepted, the shared connection open (else stopped)."""
        self._qemu_err = self.root / 'qemu.stderr'
        with open(self._qemu_err, 'w') as err:
            self._qemu = subprocess.Popen(self.qemu_command(initramfs), stdin=subprocess.DEVNULL,
                                          stdout=err, stderr=err, start_new_session=True)
        self.pid_file.write_text(f'{self._qemu.pid}\n')
        try:
            wait_until('the node accepting ssh', self._ssh_ready, timeout, NumaNodeError,
                       self.logs, poll=2)
            master = subprocess.Popen(
                ['ssh', '-F', str(self.ssh_config), '-M', '-N', '-o', 'ControlMaster=yes',
                 '127.0.0.1'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True)
            self.master_pid_file.write_text(f'{master.pid}\n')
            wait_until('the shared ssh connection',
                       lambda: (self.root / 'ssh-master.sock').exists(), 30, NumaNodeError,
                       self.logs)
        except BaseException:
            self.stop()
            raise
        return self

    _qemu: subprocess.Popen | None = None

    def stop(self) -> None:
        """Stop the shared connection and QEMU by their pids (TERM, then KILL)."""
        for pid_file in (self.master_pid_file, self.pid_file):
            pid = self._pid(pid_file)
            if pid is None:
                continue
            ours = self._qemu is not None and pid == self._qemu.pid
            # reap our own child while waiting, so kill(pid, 0) fails once it is gone
            terminate(pid, lambda: self._pid(pid_file) is not None, 10,
                      tick=self._qemu.poll if ours else lambda: None)
            if ours:
                self._qemu.wait(timeout=10)
        (self.root / 'ssh-master.sock').unlink(missing_ok=True)

    def running(self) -> bool:
        if self._qemu is not None:
            self._qemu.poll()
        return self._pid(self.pid_file) is not None


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] not in ('start', 'stop'):
        print(__doc__.split('By hand::')[1], file=sys.stderr)
        return 2
    shape = TWO_SOCKET
    if len(argv) > 3:
        if argv[3] not in SEED_SHAPES:
            print(f'error: unknown shape {argv[3]!r}: choose one of {", ".join(SEED_SHAPES)}',
                  file=sys.stderr)
            return 2
        shape = SEED_SHAPES[argv[3]]
    node = NumaNode(argv[2], shape=shape)
    if argv[1] == 'start':
        try:
            node.start()
        except NumaNodeError as err:
            print(f'error: {err}', file=sys.stderr)
            return 1
        env = {**node.env, 'PLACEMENT_TEST_SEED_SSH_CONFIG': str(node.ssh_config)}
        print(' '.join(f'export {k}={shlex.quote(v)}' for k, v in env.items()))
    else:
        node.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
