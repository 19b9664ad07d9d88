"""The topology of a partition's compute node, captured there once and cached.

Why: maps must be computed for the node a job runs on. On a cluster ReFrame
runs on the login node, whose topology can differ from the compute nodes' in
every respect that matters to placement (packages, NUMA nodes, SMT). A
partition names its node's hwloc XML in ``extras['topology']``; without it, a
partition with a local scheduler is this machine, and any other partition gets
one job, submitted through the partition's own scheduler and launcher, that runs
``lstopo --of xml`` on the compute node (as ReFrame does for its own processor
detection). The XML is cached as ``<results>/topologies/<system>-<partition>.xml``
(``PLACEMENT_RESULTS``, default ``results/``); delete it to capture again. The
capture job runs in a folder beside the cache, so the results folder must be
one the compute nodes see, as the stage folder must.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..util import PlacementError, atomic, paths, repo_root

#: Runs on the compute node; the first tool hwloc installed there wins. ``--disallowed``
#: (hwloc 2) keeps the PUs the job's cgroup forbids and records the allowed ones, so a
#: job smaller than the node is announced as restricted, as under taskset.
CAPTURE = ('for t in lstopo-no-graphics lstopo hwloc-ls; do '
           'command -v $t >/dev/null && { $t --disallowed --of xml topology.xml 2>/dev/null || '
           'exec $t --of xml topology.xml; exit 0; }; done; '
           'echo "hwloc lstopo not found on $(hostname)" >&2; exit 1')


def cache_path(system: str, partition: str, node: str | None = None) -> Path:
    """Where the captured XML of ``system:partition`` (of its node ``node``) is kept."""
    results = paths.env_path('PLACEMENT_RESULTS') or repo_root() / 'results'
    tail = f'-{node}' if node else ''
    return results / 'topologies' / f'{system}-{partition}{tail}.xml'


def is_local(partition) -> bool:
    """Jobs of this partition run on this machine (no batch system, no remote host)."""
    return partition.scheduler.registered_name == 'local'


def capture(partition, dest: Path, node: str | None = None) -> Path:
    """Run the capture job on ``partition`` (on its node ``node``, when given) and store
    its XML at ``dest`` (atomically)."""
    from reframe.core.schedulers import Job

    # the job's folder must be one the compute node sees: beside the cache, in the results
    # folder (shared like ReFrame's stage folder), not this login node's /tmp
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f'.capture-{dest.stem}-', dir=dest.parent) as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)   # the ssh scheduler ships the current directory to the node
        try:
            job = Job.create(partition.scheduler, partition.launcher_type(),
                             name='placement-topology', workdir=tmp,
                             sched_access=partition.access)
            if node:
                job.pin_nodes = [node]     # as ReFrame's --distribute pins a case
            job.prepare([CAPTURE], [partition.local_env], trap_errors=True)
            job.submit()
            job.wait()
        except Exception as err:   # scheduler or connection errors of any kind
            raise PlacementError(f'capturing the topology of {partition.fullname} on its '
                                 f'compute node failed: {err}') from err
        finally:
            os.chdir(cwd)
        xml = Path(tmp, 'topology.xml')
        if not xml.is_file() or '<topology' not in xml.read_text(errors='replace'):
            err = Path(tmp, job.stderr).read_text(errors='replace').strip() \
                if Path(tmp, job.stderr).exists() else ''
            raise PlacementError(
                f'capturing the topology of {partition.fullname} on its compute node failed '
                f'(exit code {job.exitcode}): {err[-300:] or "no topology.xml came back"}; '
                "set extras['topology'] to an hwloc XML file of the node instead")
        atomic.write_text(dest, xml.read_text())
    return dest


def one_line(topo) -> str:
    """What a run report records of the node: shape and where the description came from."""
    smt = len(topo.pus) // max(1, topo.count('Core'))
    return (f"{topo.count('Package')} package(s), {len(topo.numa_nodes)} NUMA node(s), "
            f"{topo.count('Core')} cores, {len(topo.pus)} PUs, {smt} thread(s) per core "
            f"({topo.source})")


def topology_path(partition, node: str | None = None) -> str | None:
    """The hwloc XML for ``partition``'s compute node; None means this machine (local runs).

    ``node`` is the node a case is pinned to (``--distribute``): where the partition sets
    ``extras['topology_per_node']``, each node's own topology is captured there, once,
    so a node whose cgroup or cpuset differs gets maps for the PUs it really has;
    ``extras['topology']`` is then what a case pinned to no node uses.
    """
    if node and partition.extras.get('topology_per_node'):
        return _captured(partition, node)
    named = partition.extras.get('topology')
    if named:
        return named
    if is_local(partition):
        return None
    return _captured(partition, None)


def _captured(partition, node: str | None) -> str:
    """The cached capture of ``partition`` (on ``node``), made now if there is none."""
    dest = cache_path(partition.fullname.split(':')[0], partition.name, node)
    key = (partition.fullname, node)
    if not dest.is_file():
        if key in _FAILED:   # one attempt per process, not one per case
            raise _FAILED[key]
        try:
            capture(partition, dest, node)
        except PlacementError as err:
            _FAILED[key] = err
            raise
    return str(dest)


_FAILED: dict[tuple[str, str | None], PlacementError] = {}
