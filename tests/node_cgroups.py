"""A cgroup around one test node's slurmd: less CPU time or fewer PUs for that node.

Why: a partition's odd node (one that throttles, a cpuset left behind by a job) is
made on purpose by putting one slurmd of ``slurm_nodes.py`` in a cgroup before it
starts. ``proctrack/linuxproc`` and ``task/affinity`` never move a job's processes
to a cgroup of their own, so every step the slurmd starts inherits the cap.

Both hierarchies:

Every node, odd or not, also gets the most CPU weight a group can have: the nodes share
this host's cores with whatever else runs on it, and a node's job should get the CPUs
as on a node of its own (one job at a time). Without it a busy host leaves each job less
than any cap, so a capped node measures like its peers and the cap shows nothing.

Both hierarchies:

* cgroup v1 (this kind of host: ``/sys/fs/cgroup/cpu`` and ``/sys/fs/cgroup/cpuset``
  mounted apart): the weight is ``cpu.shares``, the CPU cap ``cpu.cfs_quota_us`` over
  ``cpu.cfs_period_us`` in ``cpu/<name>``, the PUs are ``cpuset.cpus`` (with
  ``cpuset.mems``) in ``cpuset/<name>``; the shell that becomes the slurmd writes itself
  to each group's ``cgroup.procs``.
* cgroup v2 (``/sys/fs/cgroup/cgroup.controllers``): one group ``<name>`` with
  ``cpu.weight``, ``cpu.max`` (``QUOTA PERIOD``) and ``cpuset.cpus``; the root's
  ``cgroup.subtree_control`` gets ``+cpu +cpuset`` first. The group is the root of the
  slurmd's cgroup namespace (:meth:`NodeCgroup.namespace_words`): slurmd 22.05 on cgroup v2
  moves itself and every step it starts to ``system.slice/<node>_slurmstepd.scope`` under
  the root of the cgroup mount it sees, which would otherwise be the host's, outside any
  cap. The group's two children are made here: :data:`LAUNCH`, where the slurmd starts
  (a group whose controllers are handed down holds no process), and :data:`SLICE`.
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from placement.engine import cpulist

CGROUP = Path('/sys/fs/cgroup')
#: CFS period of the quota: 10 ms, not the kernel's 100 ms, so that a cap shows in
#: kernels whose timed parts last milliseconds (under 100 ms a burst can finish on the
#: quota of one period before the throttle holds it), as a node that throttles does
PERIOD_US = 10_000
#: the largest CPU weight of a group (v1 ``cpu.shares``, v2 ``cpu.weight``): a node's job
#: is served before the host's other work, as on a node of its own
SHARES_V1, WEIGHT_V2 = 262_144, 10_000
#: cgroup v2: the child of a node's group its slurmd starts in, and the slice slurmd
#: 22.05 makes its steps' scope in (its ``mkdir`` makes the scope, not the slice)
LAUNCH, SLICE = 'launch', 'system.slice'


class CgroupError(RuntimeError):
    """No cgroup can be made here (not root, no cpu/cpuset controller); the message says which."""


def version(root: Path = CGROUP) -> int:
    """1 where the v1 ``cpu`` and ``cpuset`` hierarchies are mounted, 2 on a unified one."""
    if (root / 'cpu' / 'cpu.cfs_quota_us').is_file() and (root / 'cpuset' / 'cpuset.cpus').is_file():
        return 1
    if (root / 'cgroup.controllers').is_file():
        return 2
    raise CgroupError(f'no cgroup v1 cpu/cpuset hierarchy and no cgroup v2 at {root}')


@dataclass
class NodeCgroup:
    """The cgroup(s) one node's slurmd runs in.

    ``cpu_fraction`` caps the node's CPU time at that share of the node's own PUs: those
    of ``cpus`` where it has a cpuset, else ``ncpus`` (0.5 on 2 CPUs: one CPU's worth; 0.6
    on a node given 4 PUs of 16: 2.4 CPUs, not 60 % of the host); ``cpus`` (a cpuset list,
    e.g. ``"1"``) leaves only those PUs;
    ``first`` gives the group the largest CPU weight (the host's other work waits).
    """

    name: str
    cpu_fraction: float | None = None
    cpus: str | None = None
    first: bool = True
    ncpus: int = field(default_factory=lambda: len(os.sched_getaffinity(0)))
    root: Path = CGROUP

    @property
    def quota_us(self) -> int | None:
        """The CFS quota per period; None when the node's CPU time is not capped."""
        if self.cpu_fraction is None:
            return None
        return max(1000, round(self.cpu_fraction * self.node_pus * PERIOD_US))

    @property
    def node_pus(self) -> int:
        """How many PUs the node has: its cpuset's where it has one, else the host's."""
        if self.cpus is None:
            return self.ncpus
        return len(cpulist.parse_list(self.cpus))

    def dirs(self) -> list[Path]:
        """The group folders: one per v1 controller in use, the one group on v2."""
        if version(self.root) == 2:
            return [self.root / self.name]
        out = []
        if self.cpu_fraction is not None or self.first:
            out.append(self.root / 'cpu' / self.name)
        if self.cpus is not None:
            out.append(self.root / 'cpuset' / self.name)
        return out

    def create(self) -> 'NodeCgroup':
        """Make the group(s) and set the cap; a :class:`CgroupError` where that is refused."""
        try:
            if version(self.root) == 2:
                self._create_v2()
            else:
                self._create_v1()
        except OSError as err:
            raise CgroupError(f'cannot set up cgroup {self.name}: {err}') from err
        return self

    def _create_v1(self) -> None:
        if self.cpu_fraction is not None or self.first:
            d = self.root / 'cpu' / self.name
            d.mkdir(exist_ok=True)
            if self.first:
                (d / 'cpu.shares').write_text(str(SHARES_V1))
            if self.cpu_fraction is not None:
                (d / 'cpu.cfs_period_us').write_text(str(PERIOD_US))
                (d / 'cpu.cfs_quota_us').write_text(str(self.quota_us))
        if self.cpus is not None:
            d = self.root / 'cpuset' / self.name
            d.mkdir(exist_ok=True)
            (d / 'cpuset.cpus').write_text(self.cpus)
            mems = (self.root / 'cpuset' / 'cpuset.mems').read_text().strip() or '0'
            (d / 'cpuset.mems').write_text(mems)

    def _create_v2(self) -> None:
        control = self.root / 'cgroup.subtree_control'
        wanted = [c for c, on in (('cpu', self.cpu_fraction is not None or self.first),
                                  ('cpuset', self.cpus is not None)) if on]
        enabled = control.read_text().split()
        for c in wanted:
            if c not in enabled:
                control.write_text(f'+{c}')
        d = self.root / self.name
        d.mkdir(exist_ok=True)
        if self.first:
            (d / 'cpu.weight').write_text(str(WEIGHT_V2))
        if self.quota_us is not None:
            (d / 'cpu.max').write_text(f'{self.quota_us} {PERIOD_US}')
        if self.cpus is not None:
            (d / 'cpuset.cpus').write_text(self.cpus)
        for child in (LAUNCH, SLICE):
            (d / child).mkdir(exist_ok=True)

    def namespace_words(self, inner: str) -> str:
        """cgroup v2: shell words that run ``inner`` in a cgroup namespace rooted at the
        group, from its :data:`LAUNCH` child, with cgroup2 mounted anew at the root's
        place (in a mount namespace of its own, the host's mount taken off first), so that
        every cgroup path slurmd makes is inside the group. ``inner`` is run by ``sh -c``; the words keep the pid (``exec``)."""
        d = self.root / self.name
        inside = (f'echo $$ > {d / LAUNCH / "cgroup.procs"} && '
                  f'umount {self.root} && mount -t cgroup2 cgroup2 {self.root} && {inner}')
        return (f'echo $$ > {d / "cgroup.procs"} && '
                f'exec unshare --cgroup --mount sh -c {shlex.quote(inside)}')

    def enter_command(self) -> str:
        """Shell words that move the shell running them (``$$``) into the group(s)."""
        return ' && '.join(f'echo $$ > {d / "cgroup.procs"}' for d in self.dirs()) or 'true'

    def members(self) -> list[int]:
        """The processes in the group and the groups below it (the slurmd and its jobs)."""
        pids: set[int] = set()
        for d in self.dirs():
            for procs in d.rglob('cgroup.procs'):
                pids.update(int(p) for p in procs.read_text().split())
        return sorted(pids)

    def remove(self, timeout: float = 10.0) -> None:
        """Remove the group(s), the groups below first, once their processes have ended (a
        group with members stays)."""
        end = time.monotonic() + timeout
        below = [p for d in self.dirs() for p in d.rglob('*') if p.is_dir()]
        for d in sorted(below, key=lambda p: -len(p.parts)) + list(reversed(self.dirs())):
            while d.exists():
                try:
                    d.rmdir()
                except OSError:
                    if time.monotonic() > end:
                        break
                    time.sleep(0.2)
