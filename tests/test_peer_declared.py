"""Each node's fingerprint against the node its system file declares: real hwloc XML (from
synthetic descriptions, as ``topologies/`` is made), fingerprinted by the node-health
family's own function on both sides."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from placement.engine import generate_xml
from placement.judgement import peers
from placement.testlib import node_health

pytestmark = pytest.mark.skipif(not (shutil.which("lstopo-no-graphics") or shutil.which("lstopo")),
                                reason="hwloc's lstopo makes the topologies")

ROOT = Path(__file__).resolve().parents[1]
WHERE = "mycluster:batch"
NODES = ("n1", "n2", "n3", "n4")
SOURCE = "topologies/mycluster.xml"
#: the declared node: 2 cores of 2 PUs, 16 GB in one NUMA node
SHAPE = "pack:1 [numa(memory={mem})] l3:1(size=16MiB) l2:2(size=1MiB) l1d:1(size=48KiB) " \
        "core:1 pu:{pus}"


def _fingerprint(tmp_path: Path, name: str, mem: str = "16GB", pus: int = 2,
                 allowed: str | None = None) -> dict[str, int]:
    """The node-health fingerprint of a node of :data:`SHAPE` (``allowed``: the cpuset its
    job may use, as ``lstopo --disallowed`` records a cgroup's)."""
    xml = generate_xml(SHAPE.format(mem=mem, pus=pus))
    if allowed is not None:
        head, tail = xml.split('allowed_cpuset="', 1)
        xml = head + f'allowed_cpuset="{allowed}' + tail[tail.index('"'):]
    path = tmp_path / f"{name}.xml"
    path.write_text(xml)
    return node_health.fingerprint(str(path))


def _declared(tmp_path: Path, **kw) -> peers.declared.DeclaredNode:
    return peers.declared.DeclaredNode(_fingerprint(tmp_path, "declared", **kw), SOURCE)


def _values(nodes=NODES, values: int = 12, seed: int = 0) -> list[peers.partition.PeerValue]:
    """Nodes alike on their values: 1 % apart, 3 launches each."""
    rng = np.random.default_rng(seed)
    out = []
    for j in range(values):
        base = rng.uniform(1, 100)
        out.append(peers.partition.PeerValue(
            f"v{j}", False, {n: list(base * np.exp(rng.normal(0, 0.01, 3))) for n in nodes}))
    return out


def _judge(fps: dict, declared) -> peers.partition.PeerJudgement:
    return peers.partition.judge(_values(), WHERE, fps, declared=declared)


def test_every_node_with_smt_off_fails_though_the_nodes_are_alike(tmp_path):
    fp = _fingerprint(tmp_path, "smt-off", pus=1)
    j = _judge({n: fp for n in NODES}, _declared(tmp_path))
    assert not j.topology and not j.topology_split
    assert j.lines() == [f"NODES {WHERE}: 4 nodes (n1, n2, n3, n4) differ in topology from the "
                         f"declared node ({SOURCE}): pus 2 (declared 4); smt 1 (declared 2)"]
    assert j.fails and j.named == list(NODES)
    (part,) = j.parts()
    assert part.node == "" and part.data == {
        "what": "declared", "nodes": list(NODES), "declared": SOURCE,
        "diffs": ["pus 2 (declared 4)", "smt 1 (declared 2)"]}


def test_every_node_missing_a_dimm_fails(tmp_path):
    fp = _fingerprint(tmp_path, "half", mem="8GB")
    j = _judge({n: fp for n in NODES}, _declared(tmp_path))
    assert j.fails
    assert j.lines() == [f"NODES {WHERE}: 4 nodes (n1, n2, n3, n4) differ in topology from the "
                         f"declared node ({SOURCE}): numa_memory_gib 7 (declared 15)"]


def test_every_node_with_a_cpuset_left_behind_fails(tmp_path):
    fp = _fingerprint(tmp_path, "cpuset", allowed="0x00000001")
    j = _judge({n: fp for n in NODES}, _declared(tmp_path))
    assert j.fails and j.lines()[0].endswith(f"({SOURCE}): 1 PU allowed of 4"), j.lines()


def test_nodes_as_declared_get_no_line(tmp_path):
    fp = _fingerprint(tmp_path, "node")
    # memory within what the kernel keeps for itself: 16 GiB declared, 15 on the nodes
    declared = _declared(tmp_path, mem="17GB")
    assert (declared.fingerprint["numa_memory_gib"], fp["numa_memory_gib"]) == (16, 15)
    j = _judge({n: fp for n in NODES}, declared)
    assert not j.declared and not j.fails
    assert j.lines() == [f"NODES {WHERE}: 4 nodes alike on 12 values (no node stands apart)"]


@pytest.mark.parametrize("declared", [None, peers.declared.DeclaredNode({}, "")])
def test_no_declared_node_no_line(tmp_path, declared):
    fp = _fingerprint(tmp_path, "smt-off", pus=1)
    j = _judge({n: fp for n in NODES}, declared)
    assert not j.declared and not j.fails


def test_one_node_unlike_a_declared_majority_gets_the_peers_line_alone(tmp_path):
    """Most nodes are the declared node: the peers' line names the odd one against it."""
    fp = _fingerprint(tmp_path, "node")
    fps = {n: fp for n in NODES} | {"n3": _fingerprint(tmp_path, "smt-off", pus=1)}
    j = _judge(fps, _declared(tmp_path))
    assert not j.declared and [t.node for t in j.topology] == ["n3"]
    assert j.named == ["n3"] and j.fails


def test_half_unlike_the_declared_node_are_named_in_one_line(tmp_path):
    """Two kinds, no majority among the peers: the declared node tells which is wrong."""
    fp = _fingerprint(tmp_path, "node")
    off = _fingerprint(tmp_path, "smt-off", pus=1)
    j = _judge({"n1": fp, "n2": fp, "n3": off, "n4": off}, _declared(tmp_path))
    assert j.topology_split
    assert [d.nodes for d in j.declared] == [("n3", "n4")]
    assert f"NODES {WHERE}: 2 nodes (n3, n4) differ in topology from the declared node " \
        f"({SOURCE}): pus 2 (declared 4); smt 1 (declared 2)" in j.lines()


def test_nodes_unlike_it_in_two_ways_get_a_line_each(tmp_path):
    off = _fingerprint(tmp_path, "smt-off", pus=1)
    half = _fingerprint(tmp_path, "half", mem="8GB")
    j = _judge({"n1": off, "n2": off, "n3": half, "n4": half}, _declared(tmp_path))
    assert [d.nodes for d in j.declared] == [("n1", "n2"), ("n3", "n4")]


def test_one_node_line_names_it(tmp_path):
    """A partition of two nodes as declared and one that is not (no peer majority of 3)."""
    fp = _fingerprint(tmp_path, "node")
    off = _fingerprint(tmp_path, "smt-off", pus=1)
    j = peers.partition.judge(_values(("n1", "n2")), WHERE, {"n1": fp, "n2": off},
                              declared=_declared(tmp_path))
    (d,) = j.declared
    assert d.line(WHERE) == (f"NODES {WHERE}: n2 topology differs from the declared node "
                             f"({SOURCE}): pus 2 (declared 4); smt 1 (declared 2)")
    assert [p.node for p in j.parts() if p.data.get("what") == "declared"] == ["n2"]
    assert j.fails


def test_a_capture_in_a_smaller_job_holds_no_node_to_its_cpuset(tmp_path):
    """``site new`` captured in a job allowed 1 PU: the nodes' jobs, allowed all 4, are as
    declared."""
    fp = _fingerprint(tmp_path, "node")
    j = _judge({n: fp for n in NODES}, _declared(tmp_path, allowed="0x00000001"))
    assert not j.declared and not j.fails


def test_a_declared_topology_without_memory_holds_no_node_to_it(tmp_path):
    """A study's topology (``topologies/cometlake.xml``, from a synthetic description
    without memory sizes) says nothing of memory: nodes are not held to 0 GiB."""
    bare = node_health.fingerprint(str(ROOT / "topologies" / "cometlake.xml"))
    assert bare["numa_memory_gib"] == 0
    (tmp_path / "node.xml").write_text(generate_xml(
        "pack:1 [numa(memory=32GB)] l3:1(size=16MiB) l2:8(size=256KiB) l1d:1(size=32KiB) "
        "core:1 pu:2"))
    fp = node_health.fingerprint(str(tmp_path / "node.xml"))
    j = _judge({n: fp for n in NODES}, peers.declared.DeclaredNode(bare, SOURCE))
    assert fp["numa_memory_gib"] == 30 and not j.declared


def test_many_nodes_are_named_up_to_a_limit(tmp_path):
    nodes = tuple(f"n{i}" for i in range(1, 31))
    d = peers.declared.DeclaredDiff(nodes, SOURCE, ("smt 1 (declared 2)",))
    assert d.line(WHERE).startswith(f"NODES {WHERE}: 30 nodes (n1, n2, ") and \
        "n20 and 10 more) differ in topology" in d.line(WHERE)


def test_the_fingerprint_case_records_the_declared_node(tmp_path):
    path = tmp_path / "mycluster.xml"
    path.write_text(generate_xml(SHAPE.format(mem="16GB", pus=2)))
    fp, shown = node_health.declared({"topology": str(path)})
    assert fp == node_health.fingerprint(str(path)) and shown == str(path)
    fp, shown = node_health.declared({"topology": str(ROOT / "topologies" / "cometlake.xml")})
    assert shown == "topologies/cometlake.xml" and fp["pus"] == 16
    (tmp_path / "broken.xml").write_text("<topology")
    for extras in ({}, {"topology": None}, {"topology": "live"},
                   {"topology": str(tmp_path / "absent.xml")},
                   {"topology": str(tmp_path / "broken.xml")}):
        assert node_health.declared(extras) == ({}, ""), extras


def test_the_declared_node_count_is_a_positive_whole_number_or_none():
    """``extras['nodes']`` as the fingerprint case records it: a count the summary holds
    the nodes seen against; anything else (none, 0, text, True) is no count."""
    from placement.testlib import node_health
    assert node_health.declared_count({"nodes": 16}) == 16
    for extras in ({}, {"nodes": 0}, {"nodes": -3}, {"nodes": "16"}, {"nodes": True},
                   {"nodes": 4.0}):
        assert node_health.declared_count(extras) == 0, extras
