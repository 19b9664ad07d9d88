"""A partition's pooled baseline beside its nodes' own entries, on real 4-node sessions of
the node-health family (tests/fixtures/peers): recorded by `placement baseline record`, and
the baseline of a node that has no entry of its own (renamed, or down when the baseline was
recorded) in its HISTORY line."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
import yaml

from placement import cli
from placement import acceptance
from placement.judgement import baselines, reading
from placement.util import PlacementError

PEERS = Path(__file__).parent / "fixtures" / "peers"
#: a session of 4 alike nodes (its nodes weighted, load 7.7)
BASE = next((PEERS / "unchanged-20261202T0200").glob("run-*.json"))
#: another, an hour later (load 0.9)
LATER = next((PEERS / "unchanged-20261202T0309").glob("run-*.json"))
#: n3's CPU time capped at 50 % of its CPUs (load 1.5)
CAPPED = next((PEERS / "capped50-20261202T0303").glob("run-*.json"))
NODES = ["n1", "n2", "n3", "n4"]
POOL = "partition batch"


def _renamed(src: Path, out: Path, rename: dict[str, str] | None = None,
             drop: str = "") -> Path:
    """A recorded session with its nodes renamed (``rename``) or one node's cases left out
    (``drop``), as ReFrame would have written it."""
    data = json.loads(src.read_text())
    for r in data["runs"]:
        kept = []
        for tc in r["testcases"]:
            node = tc.get("node")
            if node and node == drop:
                continue
            if node in (rename or {}):
                new = rename[node]
                tc["node"], tc["job_nodelist"] = new, [new]
                tc["display_name"] = tc["display_name"].replace(f"%.nid={node}", f"%.nid={new}")
            kept.append(tc)
        r["testcases"] = kept
    out.write_text(json.dumps(data))
    return out


def _record(tmp_path: Path, monkeypatch, *sources: Path, add: bool = False) -> dict:
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "b"))
    args = ["baseline", "record", "--system", "testnodes"] + (["--add"] if add else [])
    for s in sources:
        args += ["--from", str(s)]
    assert cli.main(args) == 0
    return yaml.safe_load((tmp_path / "b" / "testnodes.yaml").read_text())


def _history(tmp_path: Path, session: Path) -> dict[str, str]:
    """The HISTORY lines of an acceptance summary of ``session``, by node."""
    lines, _ = acceptance.summary([session], "testnodes", "quick", None, 10.0, False, [])
    out = {}
    for ln in lines:
        if ln.startswith("HISTORY"):
            out[ln.split()[2].rstrip(":")] = ln
    return out


def test_record_writes_the_partitions_pooled_entry_beside_the_nodes(tmp_path, monkeypatch):
    """One entry per value for the partition, after the nodes' own: one number per node of
    the session, that node's median launch, each named."""
    data = _record(tmp_path, monkeypatch, BASE)
    test = data["NodeMemWriteSingleCheck"]
    assert test["$index"][0] == "node" and list(test)[1:] == NODES + [POOL]
    leaf = data["_samples"]["NodeMemWriteSingleCheck"][POOL]["gnu"]["small"]["gbps_1M"]
    (session,) = leaf["sessions"]
    assert session["session"] == reading.run_report.load(BASE).uuid and session["nodes"] == NODES
    own = [data["_samples"]["NodeMemWriteSingleCheck"][n]["gnu"]["small"]["gbps_1M"]
           ["sessions"][0]["runs"] for n in NODES]
    assert all(len(r) >= 3 for r in own)                    # launches per node...
    assert session["runs"] == pytest.approx([statistics.median(r) for r in own], rel=1e-5)
    ref = test[POOL]["gnu"]["small"]["gbps_1M"]                # ...one median each in the pool
    assert ref[3] == "GB/s" and min(session["runs"]) <= ref[0] <= max(session["runs"])
    stored = baselines.samples.entries(baselines.store.load(tmp_path / "b" / "testnodes.yaml"))
    pooled = stored[("NodeMemWriteSingleCheck", (POOL, "gnu", "small"), "gbps_1M")]
    assert pooled.pooled[0][1] == tuple(NODES) and len(pooled.sessions) == 1


def test_one_nodes_declared_states_mark_the_pool_and_no_other_node(tmp_path, monkeypatch):
    """A check that names its states (``no_bound``) on n2 alone: the pool carries them (one
    node's states are the partition's), n1's own entry does not."""
    data = json.loads(BASE.read_text())
    for tc in data["runs"][0]["testcases"]:
        if tc["display_name"].startswith("NodeMemWriteCheck") and tc.get("node") != "n2":
            tc.pop("no_bound", None)
    src = tmp_path / "base.json"
    src.write_text(json.dumps(data))
    runs = _record(tmp_path, monkeypatch, src)["_samples"]["NodeMemWriteCheck"]

    def leaf(where: str) -> dict:
        return runs[where]["gnu"]["small"]["scatter"][2]["gbps"]   # threads=full: 2 PUs
    assert "no_bound" in leaf("n2") and "no_bound" in leaf(POOL)
    assert "no_bound" not in leaf("n1") and "no_bound" not in leaf("n3")


def test_add_keeps_the_pools_sessions_each_with_its_nodes(tmp_path, monkeypatch):
    """``--add`` of a session in which n4 was down: the pool keeps both sessions, the
    second of three nodes."""
    _record(tmp_path, monkeypatch, BASE)
    data = _record(tmp_path, monkeypatch, _renamed(LATER, tmp_path / "l.json", drop="n4"),
                   add=True)
    leaf = data["_samples"]["NodeMemWriteSingleCheck"][POOL]["gnu"]["small"]["gbps_1M"]
    assert [s["nodes"] for s in leaf["sessions"]] == [NODES, NODES[:3]]
    assert [len(s["runs"]) for s in leaf["sessions"]] == [4, 3]


def test_a_renamed_node_is_judged_against_the_pool_and_named(tmp_path, monkeypatch):
    """n3, capped, comes back as n5: no entry of its own, so its partition's pooled entry
    judges it, and it is named slower; the others keep their own entries."""
    _record(tmp_path, monkeypatch, BASE)
    lines = _history(tmp_path, _renamed(CAPPED, tmp_path / "run-report-x.json", {"n3": "n5"}))
    assert sorted(lines) == ["n1", "n2", "n4", "n5"], lines
    assert all("against its own 1 baseline session(s)" in lines[n] for n in ("n1", "n2", "n4"))
    assert ("no entries of its own, against partition batch's pooled baseline (4 nodes, "
            "1 session(s))") in lines["n5"]
    assert "slower than its baseline" in lines["n5"], lines["n5"]


def test_an_unchanged_renamed_node_is_judged_and_not_named(tmp_path, monkeypatch):
    _record(tmp_path, monkeypatch, BASE)
    lines = _history(tmp_path, _renamed(LATER, tmp_path / "run-report-x.json", {"n2": "n7"}))
    assert "pooled baseline (4 nodes" in lines["n7"]
    assert "slower" not in lines["n7"] and " 0 regressed" in lines["n7"], lines["n7"]


def test_a_node_down_when_the_baseline_was_recorded_is_judged_against_the_pool(
        tmp_path, monkeypatch):
    """n3 was down when the baseline was recorded: the pool of n1, n2 and n4 judges it when
    it comes back (capped), while it has no entry of its own."""
    _record(tmp_path, monkeypatch, _renamed(BASE, tmp_path / "base.json", drop="n3"))
    lines = _history(tmp_path, _renamed(CAPPED, tmp_path / "run-report-x.json"))
    assert "against partition batch's pooled baseline (3 nodes, 1 session(s))" in lines["n3"]
    assert "slower than its baseline" in lines["n3"], lines["n3"]
    assert "against its own" in lines["n1"]


def test_a_pooled_session_whose_nodes_do_not_match_its_runs_is_refused(tmp_path, monkeypatch):
    """A hand edit that drops a node name from a pooled session: one line naming the entry."""
    path = tmp_path / "b" / "testnodes.yaml"
    _record(tmp_path, monkeypatch, BASE)
    text = path.read_text().replace("nodes: [n1, n2, n3, n4]", "nodes: [n1, n2, n3]", 1)
    assert text != path.read_text()
    path.write_text(text)
    with pytest.raises(PlacementError, match=r"partition batch.*not one distinct node name "
                                             r"per run.*nothing was written"):
        baselines.store.load(path)
