"""Where a memory policy becomes a ``numactl`` prefix.

A policy is ``NAME`` or ``NAME:NODES`` (``interleave:0,1``). Without nodes,
interleave and bind use the NUMA nodes the placement's CPUs are on (all nodes
for an unbound run), preferred uses the node of thread 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..util import PlacementError
from .cpulist import format_ranges, parse_list
from .maps import Placement
from .topology import Topology

POLICIES = ("first-touch", "local", "interleave", "preferred", "bind")
#: The kernel's name for each policy, as get_mempolicy(2) reports it (the probe prints it).
KERNEL_MODE = {"first-touch": "default", "local": "local", "interleave": "interleave",
               "preferred": "preferred", "bind": "bind"}


@dataclass(frozen=True)
class MemoryPolicy:
    """A resolved policy: its name, the NUMA nodes it names, and the prefix that applies it."""

    name: str
    nodes: tuple[int, ...]

    @property
    def prefix(self) -> list[str]:
        nodes = format_ranges(self.nodes)
        return {
            "first-touch": [],
            "local": ["numactl", "--localalloc"],
            "interleave": ["numactl", f"--interleave={nodes}"],
            "preferred": ["numactl", f"--preferred={nodes}"],
            "bind": ["numactl", f"--membind={nodes}"],
        }[self.name]


def placement_nodes(topo: Topology, placement: Placement) -> list[int]:
    """NUMA nodes the placement's CPUs are on (every node when unbound)."""
    if not placement.bound:
        return sorted(topo.numa_nodes)
    return sorted({topo.node_of(c) for c in placement.cpu_set})


def resolve(spec: str, topo: Topology, placement: Placement) -> MemoryPolicy:
    """Turn ``NAME[:NODES]`` into a MemoryPolicy, checking the nodes exist."""
    name, colon, nodes_text = spec.partition(":")
    if name not in POLICIES:
        raise PlacementError(f"unknown memory policy {name!r}: choose one of {', '.join(POLICIES)}"
                             " (optionally NAME:NODES, e.g. interleave:0,1)")
    if name in ("first-touch", "local"):
        if colon:
            raise PlacementError(f"policy {name!r} takes no node list (got {nodes_text!r})")
        return MemoryPolicy(name, ())
    if colon:       # "interleave:" names no node: refused, not read as plain interleave
        nodes = parse_list(nodes_text, what="NUMA node")
        if not nodes:       # "bind:," made numactl --membind= (an empty list)
            raise PlacementError(f"policy {spec!r} names no NUMA node: give NAME:NODES (e.g. "
                                 f"{name}:0,1), or {name} alone for the placement's nodes")
        for node in nodes:
            if node not in topo.numa_nodes:
                raise PlacementError(
                    f"policy {spec!r} names NUMA node {node}, which the topology lacks "
                    f"(nodes: {format_ranges(topo.numa_nodes)})")
    elif name == "preferred":
        nodes = [topo.node_of(placement.cpus[0])] if placement.bound else [min(topo.numa_nodes)]
    else:
        nodes = placement_nodes(topo, placement)
    if name == "preferred" and len(nodes) != 1:
        raise PlacementError(f"policy 'preferred' takes exactly one node, got {nodes_text!r}")
    return MemoryPolicy(name, tuple(sorted(set(nodes))))
