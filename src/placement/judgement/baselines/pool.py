"""A partition's pooled entry: its nodes, measured in earlier sessions, as a baseline for any
node of the partition.

``baseline record`` keeps a distributed run per node (``node`` in the test's ``$index``),
and each node is judged against its own entries. A node with none (replaced, renamed, added
to the partition, or down when the baseline was recorded) would go unjudged; so each value
also gets the partition's pooled entry, at the node level under the key ``partition
<name>`` (no host name holds a space: no node's entry is ever taken for it, and ReFrame,
which looks entries up by the node's name, never reads it).

Its samples hold **one number per node per session**, the median of that node's launches
in that session, with the nodes named::

    gbps:
      higher_is_better: true
      sessions:
      - {session: <uuid>, nodes: [n1, n2, n3, n4], runs: [9.61, 9.55, 9.70, 9.58]}

The unit that varies across a partition is the node, over time the session, and the
verdict reads the pool so (:func:`in_stead`): a stored session is one session, its runs
the spread between nodes, and the node judged against it is one number too, the median of
its launches. Its change is then tested against the spread between nodes and the spread
between sessions (with one stored session: borrowed from the run's values), never a
node's launches as draws of the partition, nor the nodes of one session as sessions. A
session measured on one node alone adds nothing to the pool (it says nothing of how nodes
differ).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from ...util import PlacementError
from .shape import SAMPLES_KEY, short

#: the pooled entry's key at the node level: ``partition batch``
PREFIX = "partition "
#: the fewest nodes a session gives the pool
MIN_NODES = 2


def key(partition: str) -> str:
    """The pooled entry's key of ``partition`` at the node level."""
    return PREFIX + partition


def is_key(k: Any) -> bool:
    """Whether an index value is a partition's pooled entry, not a node."""
    return isinstance(k, str) and k.startswith(PREFIX)


def node_level(index: Sequence[str]) -> int | None:
    """Where ``node`` stands in a test's ``$index`` (None: the test is not kept per node)."""
    return list(index).index("node") if "node" in index else None


def groups(raw: Sequence[dict], sessions: Sequence[tuple[str | None, list[float]]],
           name: str) -> tuple:
    """A pooled leaf's sessions as ``(session id, nodes, medians)``, ``()`` for a leaf that
    names no nodes; a leaf whose sessions name their nodes only in part, or names that do
    not match its runs, is one line."""
    named = [g for g in raw if "nodes" in g]
    if not named:
        return ()
    accepted = ("a pooled entry's sessions are {session: id, nodes: [node, ...], runs: "
                "[one median per node]}")
    if len(named) != len(raw):
        raise PlacementError(f"{name}: some sessions name their nodes and some do not; "
                             f"{accepted}; nothing was written")
    out = []
    for g, (sid, runs) in zip(raw, sessions):
        nodes = g["nodes"]
        if (not isinstance(nodes, list) or len(nodes) != len(runs)
                or not all(isinstance(n, str) and n for n in nodes)
                or len(set(nodes)) != len(nodes)):
            raise PlacementError(f"{name}: nodes {short(nodes)} are not one distinct node name "
                                 f"per run; {accepted}; nothing was written")
        out.append((sid, tuple(nodes), tuple(runs)))
    return tuple(out)


def written(pooled: Iterable[tuple]) -> list[dict]:
    """Pooled sessions as the file writes them."""
    return [{"session": sid, "nodes": list(nodes), "runs": list(runs)}
            for sid, nodes, runs in pooled]


def is_pooled(leaf: dict) -> bool:
    """Whether a samples leaf (as written) is a pooled entry."""
    return any(isinstance(g, dict) and "nodes" in g for g in leaf.get("sessions") or [])


class Pools:
    """A run's per-node values gathered into their partitions' pooled entries, as
    :func:`placement.judgement.baselines.store.from_run` walks the run's cases."""

    def __init__(self) -> None:
        #: (test, index values with the pool's key, var) -> the first node's reference leaf,
        #: the pooled samples leaf's fields but its sessions, each session's median per node
        self._acc: dict[tuple, tuple[list, dict, dict[str | None, dict[str, float]]]] = {}

    def add(self, test: str, partition: str, index: Sequence[str], keys: tuple,
            leaves: dict[str, list], sample_leaves: dict[str, Any]) -> None:
        """One case's values (``keys``: where they stand in the tree) into its pool."""
        at = node_level(index)
        if at is None:
            return
        node, pkeys = str(keys[at]), keys[:at] + (key(partition),) + keys[at + 1:]
        for var, sl in sample_leaves.items():
            _, head, by = self._acc.setdefault(
                (test, pkeys, var), (leaves[var], {"higher_is_better": sl["higher_is_better"]},
                                     {}))
            for flag in ("contended", "no_bound", "no_plain_bound"):
                if sl.get(flag) and not head.get(flag):
                    head[flag] = sl[flag]       # one node's state is the partition's
            for s in sl["sessions"]:
                by.setdefault(s["session"], {})[node] = float(f"{statistics.median(s['runs']):.6g}")

    def put(self, out: dict[str, Any], runs: dict[str, Any]) -> None:
        """Each pool of two nodes or more into the reference tree and the samples tree,
        after the nodes' own entries."""
        from ..peers.partition import node_order
        for (test, pkeys, var), (ref, head, by) in self._acc.items():
            sessions = []
            for sid, medians in by.items():
                nodes = sorted(medians, key=node_order)
                if len(nodes) >= MIN_NODES:
                    sessions.append({"session": sid, "nodes": nodes,
                                     "runs": [medians[n] for n in nodes]})
            if not sessions:
                continue
            centre = statistics.median(m for s in sessions for m in s["runs"])
            _at(out[test], pkeys)[var] = [float(f"{centre:.6g}"), *ref[1:]]
            _at(runs[test], pkeys)[var] = {**head, "sessions": sessions}


def in_stead(tree: dict[str, Any], node: str, partition: str) -> dict[str, Any]:
    """A run's entries (``tree``, as :func:`placement.judgement.baselines.store.from_run` gives
    them) of ``node`` alone, under its partition's pooled key, each value's launches
    reduced to their median: the node judged against the pool, where it has no entries of
    its own. One number, as each node of the pool is one: the pool's runs spread as nodes
    do, and a node's median differs from theirs by a node's spread, not a launch's."""
    pkey = key(partition)

    def moved(t: dict[str, Any], samples: bool) -> dict[str, Any]:
        out = {}
        for test, n in t.items():
            at = node_level(n.get("$index") or []) if isinstance(n, dict) else None
            if not str(test).startswith("_") and at is not None:
                out[test] = _renamed(n, at, node, pkey, samples)
        return out
    runs = tree.get(SAMPLES_KEY)
    return {**moved(tree, False),
            **({SAMPLES_KEY: moved(runs, True)} if isinstance(runs, dict) else {})}


def _renamed(n: dict, at: int, node: str, pkey: str, samples: bool, level: int = 0) -> dict:
    """The subtree of ``n`` whose key at depth ``at`` is ``node``, that key made ``pkey``
    (``samples``: its launches reduced to each session's median)."""
    out: dict = {}
    for k, v in n.items():
        if k == "$index" and level == 0:
            out[k] = v
        elif level == at:
            if str(k) == node:
                out[pkey] = _medians(v) if samples else v
        elif isinstance(v, dict):
            sub = _renamed(v, at, node, pkey, samples, level + 1)
            if sub:
                out[k] = sub
    return out


def _medians(n: Any) -> Any:
    """A samples subtree with each session's runs replaced by their median."""
    if isinstance(n, dict) and "higher_is_better" in n:
        return {**n, "sessions": [{**g, "runs": [statistics.median(g["runs"])]}
                                  for g in n["sessions"]]}
    return {k: _medians(v) for k, v in n.items()} if isinstance(n, dict) else n


def _at(tree: dict, keys: tuple) -> dict:
    for k in keys:
        tree = tree.setdefault(k, {})
    return tree
