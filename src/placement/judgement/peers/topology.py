"""The topology side of the peer verdict: each node's hwloc fingerprint against the one
most of the partition's nodes share.

Why apart from the values: a fingerprint is not measured but read, so it has no noise
to test; a node that differs gets its own line (``n2 topology differs from its 3 peers:
1 PU allowed of 2``) whatever its values say, and fingerprints that differ with no
majority say the partition has none to judge by.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..rules import MIN_NODES, PEER_MEMORY_SLACK


@dataclass(frozen=True)
class TopologyDiff:
    """A node whose topology fingerprint differs from the majority's."""

    node: str
    peers: int
    diffs: tuple[str, ...]

    def line(self, where: str) -> str:
        return (f"NODES {where}: {self.node} topology differs from its {self.peers} peers: "
                + "; ".join(self.diffs))


def topology_diffs(fingerprints: Mapping[str, Mapping[str, Any]], nodes: Sequence[str]
                   ) -> tuple[list[TopologyDiff], bool]:
    """The nodes whose fingerprint differs from the one most nodes share (more than half
    of those with one), and whether the fingerprints differ with no such majority."""
    have = [n for n in nodes if n in fingerprints]
    if len(have) < MIN_NODES:
        return [], False
    fingerprints = memory_snapped({n: fingerprints[n] for n in have})
    frozen = {n: tuple(sorted((k, str(v)) for k, v in fingerprints[n].items())) for n in have}
    common, count = Counter(frozen.values()).most_common(1)[0]
    if 2 * count <= len(have):
        return [], True
    major = dict(common)
    return [TopologyDiff(n, len(have) - 1, fingerprint_diffs(
        {k: str(v) for k, v in fingerprints[n].items()}, major))
        for n in have if frozen[n] != common], False


def memory_snapped(fingerprints: Mapping[str, Mapping[str, Any]]
                   ) -> dict[str, dict[str, Any]]:
    """The fingerprints with each memory size within :data:`PEER_MEMORY_SLACK` (or one unit
    of the size as printed) of the nodes' median set to that median.

    Why: a node's memory as hwloc reports it moves with what the kernel keeps for itself,
    and rounded to whole GiB it flips between two numbers on nodes that are alike (8 and
    9 GiB on the 4-node test cluster); a DIMM missing moves it far more."""
    out = {n: dict(fp) for n, fp in fingerprints.items()}
    fields = {k for fp in out.values() for k in fp if "memory" in k}
    for k in fields:
        vals = [fp[k] for fp in out.values() if isinstance(fp.get(k), (int, float))]
        if not vals:
            continue
        mid = statistics.median(vals)
        for fp in out.values():
            v = fp.get(k)
            if isinstance(v, (int, float)) and abs(v - mid) <= max(1, PEER_MEMORY_SLACK * mid):
                fp[k] = mid
    return out


def fingerprint_diffs(own: Mapping[str, str], major: Mapping[str, str],
                      against: str = "its peers") -> tuple[str, ...]:
    """What differs, in words: ``1 PU allowed of 2`` for the allowed cpuset, else
    ``FIELD VALUE (its peers VALUE)`` (``against``: whose value it differs from)."""
    out = []
    for k in sorted(set(own) | set(major)):
        a, b = own.get(k, "none"), major.get(k, "none")
        if a == b:
            continue
        if k == "pus_allowed":
            total = own.get("pus", major.get("pus", "?"))
            out.append(f"{a} PU{'' if a == '1' else 's'} allowed of {total}")
        else:
            out.append(f"{k} {a} ({against} {b})")
    return tuple(out)
