"""A throw-away several-node Slurm cluster on this host: one slurmctld, N slurmd (n1..nN).

Why: a partition is accepted node against node (``--distribute``), and that needs a
real Slurm with several nodes whose jobs land where ReFrame pins them. Each slurmd
runs under ``unshare --uts`` with its own hostname, all at ``NodeAddr=127.0.0.1``
with one ``Port=`` each; ``SlurmdSpoolDir``, ``SlurmdPidFile`` and ``SlurmdLogFile``
hold ``%n``. The nodes share this host's CPUs and memory: they are the same hardware,
measured one job at a time (the ``testnodes`` system runs one job at a time).

A node can be made odd before it starts (``node_cgroups.py``): ``slow={'n2': 0.5}``
caps its CPU time at half its CPUs, ``cpus={'n3': '1'}`` leaves it those PUs; its
slurmd and every job it starts run in that cgroup. Every node's cgroup has the largest
CPU weight, so that a node's job gets this host's cores before its other work does (a
busy host would otherwise leave each job less than the cap); where no cgroup can be made
(not root) the unchanged nodes start without one. On a host with cgroup v2 alone and no
systemd, each slurmd runs in a cgroup namespace rooted at its node's group, with a
``cgroup.conf`` that keeps slurmd off D-Bus (:data:`CGROUP_V2_CONF`): slurmd puts its steps
in a scope of its own making, and the namespace keeps that scope inside the group.

Same shape as ``slurm_cluster.py`` (its config text, munged and slurmctld start and
pid-file stop are reused): one directory, loopback only, daemons stopped by their pids.

By hand::

    python tests/slurm_nodes.py start [N] [DIR] [--slow NODE=FRACTION] [--cpus NODE=LIST]
        # prints: export SLURM_CONF=DIR/slurm.conf PLACEMENT_TESTNODES_SLURM_CONF=...
    python tests/slurm_nodes.py stop [DIR]
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from pathlib import Path

from daemon_wait import free_port
from node_cgroups import CgroupError, NodeCgroup, version
from slurm_cluster import SlurmCluster, SlurmClusterError, conf_text, node_line

#: Where ``start``/``stop`` by hand keep the cluster when no directory is given.
DEFAULT_DIR = Path(tempfile.gettempdir()) / 'placement-slurm-nodes'
#: Nodes a cluster has unless told otherwise (the peer verdict works from 3 up).
DEFAULT_NODES = 4
#: The partition's name, as ``config/systems/testnodes.py`` names it.
PARTITION = 'batch'
#: The environment variable ``config/systems/testnodes.py`` reads the slurm.conf from.
CONF_VAR = 'PLACEMENT_TESTNODES_SLURM_CONF'
#: cgroup.conf on a host with cgroup v2 and no systemd: slurmd (22.05) loads its cgroup
#: plugin even for task/affinity, and without these it asks systemd over D-Bus for its
#: steps' scope (``cgroup_dbus_attach_to_scope: cannot connect to dbus``); with them it
#: makes the scope and hands the controllers down itself, inside the node's group
CGROUP_V2_CONF = 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nCgroupAutomount=yes\n'


class SlurmNodes(SlurmCluster):
    """N nodes n1..nN in partition ``batch``, all state under ``root``.

    ``slow`` maps a node to the share of its own PUs' time it gets (its cpuset's where
    ``cpus`` gives one, else the host's); ``cpus`` maps a
    node to the PUs it keeps (a cpuset list). Both are kept in ``nodes.json`` so
    that ``stop`` by hand removes the cgroups it made.
    """

    def __init__(self, root: Path | str, n: int = DEFAULT_NODES,
                 slow: dict[str, float] | None = None,
                 cpus: dict[str, str] | None = None) -> None:
        super().__init__(root)
        self.nodes = [f'n{i}' for i in range(1, n + 1)]
        self.slow = dict(slow or {})
        self.cpus = dict(cpus or {})
        unknown = sorted((set(self.slow) | set(self.cpus)) - set(self.nodes))
        if unknown:
            raise SlurmClusterError(f'no such node {", ".join(unknown)} (nodes: '
                                    f'{self.nodes[0]}..{self.nodes[-1]})')
        self.state_file = self.root / 'nodes.json'

    # --- paths -----------------------------------------------------------------------------
    @property
    def env(self) -> dict[str, str]:
        return {'SLURM_CONF': str(self.conf), CONF_VAR: str(self.conf)}

    def daemons(self) -> list[str]:
        """Stop order: every slurmd, then slurmctld and munged."""
        return [f'slurmd-{n}' for n in self.nodes] + ['slurmctld', 'munged']

    def logs(self, lines: int = 25) -> str:
        return super().logs(lines)

    def cgroup(self, node: str) -> NodeCgroup:
        """The cgroup ``node``'s slurmd runs in: its weight, and its cap or cpuset if odd."""
        tag = self.root.name.replace('/', '-')
        return NodeCgroup(f'placement-{tag}-{node}', cpu_fraction=self.slow.get(node),
                          cpus=self.cpus.get(node))

    # --- set-up ----------------------------------------------------------------------------
    def _write_config(self) -> None:
        self._write_keys('state')
        nodes = '\n'.join(node_line(n, f'Port={free_port()}') + ' State=UNKNOWN'
                          for n in self.nodes)
        self.conf.write_text(conf_text(
            ctld=f'{self.node}(127.0.0.1)', ctld_port=free_port(), slurmd_port=free_port(),
            munge_socket=self.munge_socket, state=self.root / 'state',
            spool=self.root / 'spool-%n', files=self.root, node_line=nodes,
            slurmd_tag='-%n',
            partition=f'PartitionName={PARTITION} Nodes={_hostlist(self.nodes)} Default=YES '
                      'MaxTime=INFINITE State=UP OverSubscribe=NO'))
        if self.cgroup_v2:
            (self.conf.parent / 'cgroup.conf').write_text(CGROUP_V2_CONF)
        self.state_file.write_text(json.dumps({'nodes': len(self.nodes), 'slow': self.slow,
                                               'cpus': self.cpus}))

    def _start_slurmd(self, node: str) -> None:
        """The node's slurmd in its own UTS namespace (hostname ``node``) and cgroup."""
        (self.root / f'spool-{node}').mkdir(exist_ok=True)
        group = self.cgroup(node)
        slurmd = f'hostname {node} && exec slurmd -f {self.conf} -N {node}'
        try:
            group.create()
            script = group.namespace_words(slurmd) if self.cgroup_v2 else \
                f'{group.enter_command()} && {slurmd}'
        except CgroupError as err:
            if node in self.slow or node in self.cpus or self.cgroup_v2:
                raise SlurmClusterError(f'{node}: {err}') from err
            print(f'slurm_nodes.py: {node} starts without a cgroup of its own, so other '
                  f'work on this host slows its jobs ({err})', file=sys.stderr)
            script = slurmd
        self._start_daemon(f'slurmd-{node}', ['unshare', '--uts', 'sh', '-c', script])

    @functools.cached_property
    def cgroup_v2(self) -> bool:
        """Whether this host has the unified hierarchy alone (slurmd then runs each node in
        a cgroup namespace of its own group, :meth:`.NodeCgroup.namespace_words`)."""
        try:
            return version() == 2
        except CgroupError:
            return False

    def start(self, started: int | None = None) -> 'SlurmNodes':
        """munged, slurmctld, then the slurmd of the first ``started`` nodes (default all);
        return once those are idle. The others stay as a node never booted does
        (``unknown``, then ``down``): a large partition for ``scontrol`` and ``sinfo``."""
        self._check_tools(('munged', 'slurmctld', 'slurmd', 'sbatch', 'unshare'))
        self._write_config()
        self._start_controller()
        up = self.nodes[:len(self.nodes) if started is None else started]
        for node in up:
            self._start_slurmd(node)
        self._wait(f'{len(up)} nodes becoming idle', lambda: self._all_up(up), timeout=60)
        return self

    def _all_up(self, nodes: list[str]) -> bool:
        states = self.node_states()
        return all(states.get(n) in ('idle', 'mixed', 'allocated') for n in nodes)

    def node_states(self) -> dict[str, str]:
        """Each node's state as sinfo says it."""
        out = self._run('sinfo', '-h', '-N', '-p', PARTITION, '-o', '%N %T').stdout.split()
        return dict(zip(out[::2], out[1::2]))

    def stop(self) -> None:
        """Stop every daemon by its pid (TERM, then KILL), then remove the nodes' cgroups."""
        super().stop()
        for node in self.nodes:
            self.cgroup(node).remove()

    @classmethod
    def existing(cls, root: Path) -> 'SlurmNodes':
        """The cluster a ``start`` left in ``root`` (its node count and cgroups)."""
        try:
            saved = json.loads((Path(root) / 'nodes.json').read_text())
        except (OSError, ValueError):
            saved = {}
        return cls(root, saved.get('nodes', DEFAULT_NODES), saved.get('slow'), saved.get('cpus'))


def _hostlist(nodes: list[str]) -> str:
    """``n[1-4]``: Slurm's compact form of n1..nN."""
    return f'n[1-{len(nodes)}]' if len(nodes) > 1 else nodes[0]


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    """``NODE=VALUE`` arguments of ``flag`` as a dict; a malformed one ends the run (exit 2)."""
    out = {}
    for v in values:
        node, sep, val = v.partition('=')
        if not sep or not node or not val:
            raise SystemExit(f'slurm_nodes.py: bad {flag} {v!r}: expected NODE=VALUE, '
                             'e.g. n2=0.5 or n3=1')
        out[node] = val
    return out


def parse_args(argv: list[str]) -> tuple[str, int, Path, dict[str, float], dict[str, str]]:
    """``start [N] [DIR] [--slow NODE=FRACTION]... [--cpus NODE=LIST]...`` or ``stop [DIR]``."""
    import argparse
    p = argparse.ArgumentParser(prog='slurm_nodes.py', usage=__doc__.split('By hand::')[1])
    p.add_argument('action', choices=('start', 'stop', 'status'))
    p.add_argument('args', nargs='*')
    p.add_argument('--slow', action='append', default=[])
    p.add_argument('--cpus', action='append', default=[])
    a = p.parse_args(argv)
    rest = list(a.args)
    n = DEFAULT_NODES
    if a.action == 'start' and rest and rest[0].isdigit():
        n = int(rest.pop(0))
    if n < 1 or len(rest) > 1:
        p.error('expected start [N] [DIR] or stop [DIR] (N at least 1)')
    root = Path(rest[0]) if rest else DEFAULT_DIR
    try:
        slow = {k: float(v) for k, v in _pairs(a.slow, '--slow').items()}
    except ValueError:
        p.error('--slow takes NODE=FRACTION, a number such as 0.5')
    return a.action, n, root, slow, _pairs(a.cpus, '--cpus')


def main(argv: list[str]) -> int:
    action, n, root, slow, cpus = parse_args(argv)
    if action == 'start':
        root.mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o700)
        try:
            cluster = SlurmNodes(root, n, slow, cpus)
        except SlurmClusterError as err:        # a node the cluster does not have
            print(f'slurm_nodes.py: {err}', file=sys.stderr)
            return 2
        cluster.start()
        print(f'export SLURM_CONF={cluster.conf} {CONF_VAR}={cluster.conf}')
    elif action == 'stop':
        SlurmNodes.existing(root).stop()
    else:
        c = SlurmNodes.existing(root)
        print(c.running(), c.node_states())
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))
    except SlurmClusterError as err:
        print(f'slurm_nodes.py: {err}', file=sys.stderr)
        sys.exit(1)
