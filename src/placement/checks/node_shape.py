"""Whether the node a job ran on is the node its maps were computed for.

A partition may name its node's topology in ``extras['topology']``; a file
copied from another cluster, a node replaced by a different model, or a
partition that mixes node types would have every map computed for the wrong
machine, and the binding checks would still pass where the wrong CPU numbers
happen to exist. So each placed job also prints, from the compute node's own
``/sys``, every online CPU with its package, core and NUMA node, and the check
compares that with the topology the maps came from: PU count, packages, NUMA
nodes and the numbering of each (which PUs share a package, a core, a node).
A difference is one line, and the placed check fails on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..engine import Topology, format_ranges

#: Runs on the compute node (POSIX sh): ``nodeshape host=H cpus=CPU:PACKAGE:CORE:NODE ...``.
SCRIPT = (
    "printf 'nodeshape host=%s cpus=' \"$(hostname)\"; "
    "for c in /sys/devices/system/cpu/cpu[0-9]*; do "
    "[ -r $c/topology/physical_package_id ] || continue; "
    "[ \"$(cat $c/online 2>/dev/null || echo 1)\" = 1 ] || continue; "
    "n=$(ls -d $c/node[0-9]* 2>/dev/null | head -n 1); "
    "printf '%s:%s:%s:%s ' ${c##*cpu} $(cat $c/topology/physical_package_id) "
    "$(cat $c/topology/core_id) ${n##*node}; done; echo")

_LINE = re.compile(r"^nodeshape host=(\S*) cpus=(.*)$", re.M)


@dataclass(frozen=True)
class NodeShape:
    """The node as its kernel describes it: per CPU, (package id, core id, NUMA node)."""

    host: str
    cpus: dict[int, tuple[int, int, int]]


def parse(text: str) -> NodeShape | None:
    """The first ``nodeshape`` line of a job's output; None if there is none or it is empty."""
    m = _LINE.search(text)
    if not m:
        return None
    cpus = {}
    for item in m.group(2).split():
        parts = item.split(":")
        if len(parts) == 4 and all(p.lstrip("-").isdigit() for p in parts[:3]):
            node = int(parts[3]) if parts[3].isdigit() else 0   # no NUMA in sysfs: one node
            cpus[int(parts[0])] = (int(parts[1]), int(parts[2]), node)
    return NodeShape(m.group(1), cpus) if cpus else None


def _partition(groups) -> set[frozenset[int]]:
    return {frozenset(g) for g in groups}


def _describe(pus: int, packages: int, nodes: int) -> str:
    return f"{pus} PUs, {packages} package(s), {nodes} NUMA node(s)"


def mismatch(topo: Topology, shape: NodeShape) -> str | None:
    """One line saying how the node differs from the topology, or None when they agree."""
    whole = set(topo.restricted_from) or set(topo.cpus)
    # a topology cut to the job's CPUs (taskset, a cgroup) is compared on those CPUs only
    keep = set(topo.cpus) if topo.restricted_from else set(shape.cpus)
    node_pkgs: dict[int, set[int]] = {}
    node_cores: dict[tuple[int, int], set[int]] = {}
    node_numa: dict[int, set[int]] = {}
    for cpu, (pkg, core, numa) in shape.cpus.items():
        if cpu not in keep:
            continue
        node_pkgs.setdefault(pkg, set()).add(cpu)
        node_cores.setdefault((pkg, core), set()).add(cpu)
        node_numa.setdefault(numa, set()).add(cpu)
    file_pkgs = list(topo.groups("Package").values())
    file_cores = list(topo.groups("Core").values()) or [[c] for c in topo.cpus]
    file_numa = {n: set(c) for n, c in topo.numa_nodes.items() if c}
    what = None
    if len(whole) != len(shape.cpus) or (len(file_pkgs), len(file_numa)) != \
            (len(node_pkgs), len(node_numa)):
        what = (f"it describes {_describe(len(whole), len(file_pkgs), len(file_numa))}, the "
                f"node has {_describe(len(shape.cpus), len(node_pkgs), len(node_numa))}")
    elif whole != set(shape.cpus):
        what = (f"it numbers the PUs {format_ranges(whole)}, the node "
                f"{format_ranges(shape.cpus)}")
    elif _partition(file_pkgs) != _partition(node_pkgs.values()):
        first = min(_partition(node_pkgs.values()), key=min)
        what = (f"its packages hold other PUs (the node's package of PU {min(first)} holds "
                f"{format_ranges(first)})")
    elif {n: c for n, c in file_numa.items()} != node_numa:
        what = "its NUMA nodes hold other PUs (" + "; ".join(
            f"node {n}: {format_ranges(c)}" for n, c in sorted(node_numa.items())) + " here)"
    elif _partition(file_cores) != _partition(node_cores.values()):
        f = min((c for c in file_cores if len(c) > 1), key=min, default=None)
        n = min((c for c in node_cores.values() if len(c) > 1), key=min, default=None)
        what = ("its cores hold other PUs: hardware-thread siblings "
                f"{format_ranges(f) if f else 'none'} in the file, "
                f"{format_ranges(n) if n else 'none'} on the node")
    if what is None:
        return None
    return (f"the topology {topo.source} is not the node this job ran on "
            f"({shape.host or 'unknown host'}): {what}; the maps were computed for another "
            "node: give the partition this node's own topology (extras['topology'], "
            "`lstopo --of xml` there) or remove it so the node's is captured")
