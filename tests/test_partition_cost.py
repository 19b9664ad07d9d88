"""A partition's run as ``benchmarks/partition_cost.py`` makes it, and the summary's per-node
baseline verdict read from each node's own subtree.

The benchmark packs recorded node-sessions into one family case per node: the run must read
as the members' cases on the renamed nodes, or the figures would time another run. The
summary's ``HISTORY`` lines judge each node against its own part of the baseline
(:func:`placement.acceptance.peer_lines.by_node`, split once): each node's part must hold
exactly the node's entries of the whole file, samples and intervals alike.
"""

from __future__ import annotations

import sys
from pathlib import Path

from placement.acceptance import peer_lines
from placement.judgement import baselines, reading
from placement.judgement.verdict import intervals

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import partition_cost  # noqa: E402


def test_a_resampled_run_reads_as_each_nodes_member_cases():
    src = partition_cost.node_sessions()
    data = partition_cost.partition(src, 5, 0, changed=False)
    families = [tc for tc in data["runs"][0]["testcases"] if reading.family.is_family(tc)]
    assert [tc["node"] for tc in families] == [f"nid{i:05d}" for i in range(5)]
    report = reading.run_report.from_data(data, Path("run.json"))
    members = [c for c in report.cases if c.raw.get("family_case")]
    assert len(members) == 5 * len(src[0][0])
    assert {c.raw["display_name"].split("%.nid=")[1] for c in members} == \
        {tc["node"] for tc in families}


def test_each_nodes_part_of_a_baseline_is_the_nodes_entries_of_the_whole():
    src = partition_cost.node_sessions()
    report = reading.run_report.from_data(partition_cost.partition(src, 4, 1, changed=False),
                                          Path("run.json"))
    tree = baselines.store.from_run(report, "testnodes")
    parts = peer_lines.by_node(tree)
    assert sorted(parts) == [f"nid{i:05d}" for i in range(4)]
    for node, part in parts.items():
        own = peer_lines.entries_by_node(tree)[node]
        assert set(baselines.samples.entries(part, "run")) == own
        assert {e for e in intervals.entries(part)} == \
            {e for e in intervals.entries(tree) if node in map(str, e[1])}
