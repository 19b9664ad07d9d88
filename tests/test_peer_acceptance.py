"""The peer verdict in an acceptance run: a recorded session's cases spread over four nodes
as ReFrame's ``--distribute`` names them (``%.nid=nN``, ``job_nodelist``), one node slowed,
judged by ``placement acceptance summary``."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from placement import acceptance
from placement.judgement import peers, reading

from load_probe import with_load

ROOT = Path(__file__).resolve().parent.parent
#: four quiet sessions of one node, a minute apart: four nodes alike
SESSIONS = sorted((ROOT / "tests/fixtures/validation/dev2core-quiet-20261201thirteen")
                  .glob("run-*.json"))[:4]
NODES = ("n1", "n2", "n3", "n4")


def _distributed(slow: dict[str, float], fingerprint: dict[str, dict] | None = None) -> dict:
    """Session ``i`` of the set on node ``n(i+1)``, every value of a node in ``slow`` that
    many times worse."""
    sessions = [json.loads(p.read_text()) for p in SESSIONS]
    out = copy.deepcopy(sessions[0])
    cases = []
    for i, node in enumerate(NODES):
        src = sessions[i]
        for tc in src["runs"][0]["testcases"]:
            tc = copy.deepcopy(tc)
            if tc.get("fixture"):
                continue
            tc["display_name"] += f" %.part={tc['system']}:{tc['partition']} %.nid={node}"
            tc["unique_name"] += f"_{node}"
            tc["job_nodelist"] = [node]
            f = slow.get(node, 1.0)
            for var, runs in (tc.get("perf_launches") or {}).items():
                unit = (tc["perfvalues"].get(f"{tc['system']}:{tc['partition']}:{var}")
                        or [None] * 5)[4]
                worse = 1 / f if unit and unit.endswith("/s") else f
                tc["perf_launches"][var] = [x * worse for x in runs]
            if fingerprint is not None:
                tc["fingerprint"] = fingerprint[node]
            cases.append(tc)
    out["runs"] = [{**out["runs"][0], "testcases": cases}]
    return out


def _summary(tmp_path: Path, data: dict, monkeypatch) -> tuple[list[str], int]:
    path = tmp_path / "run-report-x.json"
    path.write_text(json.dumps(data))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "none"))
    return acceptance.summary([path], "generic", "quick", None, 10.0, False, [])


def test_the_cases_keep_their_nodes():
    rep = reading.run_report.from_data(_distributed({}), Path("x.json"))
    parts = peers.cases.partitions(rep)
    values, fps = parts["generic:default"]
    assert len(values) > 30 and not fps
    assert all(set(v.launches) == set(NODES) for v in values)


def test_a_slowed_node_fails_the_run_by_name(tmp_path, monkeypatch):
    lines, status = _summary(tmp_path, _distributed({"n3": 1 / 0.7}), monkeypatch)
    nodes = [ln for ln in lines if ln.startswith("NODES")]
    assert len(nodes) == 1 and nodes[0].startswith("NODES generic:default: n3 slower than "
                                                   "its 3 peers on "), lines
    assert status == 1 and "FAIL" in lines[-1] and "odd nodes of generic:default: n3" \
        in lines[-1], lines[-1]


def test_an_unchanged_partition_names_no_node(tmp_path, monkeypatch):
    lines, _ = _summary(tmp_path, _distributed({}), monkeypatch)
    nodes = [ln for ln in lines if ln.startswith("NODES")]
    assert nodes and "alike" in nodes[0], lines
    assert "odd nodes" not in lines[-1]


def test_a_cpuset_node_and_a_slow_node_are_both_named(tmp_path, monkeypatch):
    fp = {n: {"pus": 2, "pus_allowed": 2} for n in NODES}
    fp["n2"] = {"pus": 2, "pus_allowed": 1}
    lines, status = _summary(tmp_path, _distributed({"n4": 2.0}, fp), monkeypatch)
    assert "NODES generic:default: n2 topology differs from its 3 peers: 1 PU allowed of 2" \
        in lines
    assert status == 1 and "n4" in lines[-1] and "n2" in lines[-1], lines[-1]


def test_nodes_alike_but_unlike_the_declared_node_fail_the_run(tmp_path, monkeypatch):
    """Every node with SMT off, as the fingerprint case records it beside the declared node
    (its system file's topology): a NODES line, the nodes counted odd, the run FAIL."""
    fp = {n: {"cores": 2, "pus": 2, "pus_allowed": 2, "smt": 1} for n in NODES}
    data = _distributed({}, fp)
    for tc in data["runs"][0]["testcases"]:
        tc["declared_fingerprint"] = {"cores": 2, "pus": 4, "pus_allowed": 4, "smt": 2}
        tc["declared_topology"] = "topologies/mycluster.xml"
    lines, status = _summary(tmp_path, data, monkeypatch)
    assert ("NODES generic:default: 4 nodes (n1, n2, n3, n4) differ in topology from the "
            "declared node (topologies/mycluster.xml): pus 2 (declared 4); smt 1 (declared 2)"
            in lines), lines
    assert "COUNT generic: 4 nodes judged: 0 alike, 4 odd: n1, n2, n3, n4" in lines, lines
    assert status == 1 and "FAIL" in lines[-1], lines[-1]


def test_declared_nodes_the_session_did_not_run_on_are_counted_and_said(tmp_path,
                                                                        monkeypatch):
    """A partition the system file says has 6 nodes, judged on the 4 that ran (the others
    left out by --distribute=idle, a node list, or down): the COUNT line said "4 nodes
    judged" as if that were the partition. The nodes not run are said in the COUNT, a NOTE
    and the ACCEPTANCE line; its PASS is of the nodes that ran."""
    data = _distributed({})
    for tc in data["runs"][0]["testcases"]:
        tc["declared_nodes"] = 6
    lines, status = _summary(tmp_path, data, monkeypatch)
    assert "COUNT generic: 4 nodes judged: 4 alike, 0 odd, 2 declared not in this session" \
        in lines, lines
    assert ("NOTE generic:default: 4 of the 6 nodes the system file declares ran in this "
            "session: 2 not accepted by this run") in "\n".join(lines), lines
    assert status == 0 and "(2 of the 6 nodes of generic:default not in this session" \
        in lines[-1], lines[-1]
    # as many as declared, or a count the file does not give: nothing said
    for count in (4, 0, "4"):
        for tc in data["runs"][0]["testcases"]:
            tc["declared_nodes"] = count
        lines, _ = _summary(tmp_path, data, monkeypatch)
        assert "declared not in this session" not in "\n".join(lines), lines


def test_the_report_has_a_partition_section(tmp_path):
    from placement.report import partition_page, plots
    from placement.report.tables import Numbers
    rep = reading.run_report.from_data(_distributed({"n3": 2.0}), Path("x.json"))
    tests = sorted({c.test for c in rep.cases})[:4]        # a few, so the figures draw fast
    cases = [c for c in rep.cases if c.test in tests]
    (section,) = partition_page.partition_sections(cases, tmp_path, Numbers())
    nodes = section.tables[0]
    assert nodes.rows[0][:2] == ["n3", "slower"] and nodes.row_classes[0] == "bad"
    assert [r[1] for r in nodes.rows[1:]] == ["like its peers"] * 3
    if plots.available():
        assert (tmp_path / nodes.links[0]).is_file()
        assert (tmp_path / section.images[0][0]).is_file()


def test_the_partition_section_marks_nodes_unlike_the_declared_node(tmp_path):
    from placement.report import partition_page
    from placement.report.tables import Numbers
    data = _distributed({}, {n: {"pus": 2, "pus_allowed": 2, "smt": 1} for n in NODES})
    for tc in data["runs"][0]["testcases"]:
        tc["declared_fingerprint"] = {"pus": 4, "pus_allowed": 4, "smt": 2}
        tc["declared_topology"] = "topologies/mycluster.xml"
    rep = reading.run_report.from_data(data, Path("x.json"))
    tests = sorted({c.test for c in rep.cases})[:2]
    cases = [c for c in rep.cases if c.test in tests]
    (section,) = partition_page.partition_sections(cases, tmp_path, Numbers())
    nodes, topo = section.tables[:2]
    assert [r[1] for r in nodes.rows] == ["unlike the declared node"] * 4
    assert topo.row_classes == ["bad"] * 4


def test_a_baseline_keeps_the_nodes_apart():
    """``baseline record`` of a distributed run: one entry per node, never one node's
    numbers over another's."""
    from placement.judgement import baselines
    data = _distributed({"n3": 2.0})
    for run_ in data["runs"]:
        for tc in run_["testcases"]:
            tc["node"] = tc["job_nodelist"][0]
    rep = reading.run_report.from_data(data, Path("x.json"))
    tree = baselines.store.from_run(rep, "generic")
    test = next(t for t in tree.values() if isinstance(t, dict) and "$index" in t)
    assert test["$index"][0] == "node" and ".nid" not in test["$index"]
    assert set(NODES) <= set(test)


def recorded_per_node(tmp_path: Path, monkeypatch) -> reading.run_report.RunReport:
    """A distributed run, each case saying its node, recorded as the baseline
    (``PLACEMENT_BASELINES`` under ``tmp_path``)."""
    from placement.judgement import baselines
    data = _distributed({})
    for run_ in data["runs"]:
        for tc in run_["testcases"]:
            tc["node"] = tc["job_nodelist"][0]
    rep = reading.run_report.from_data(data, Path("x.json"))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "baselines"))
    (tmp_path / "baselines").mkdir()
    baselines.store.write_atomic(tmp_path / "baselines" / "generic.yaml",
                           baselines.store.from_run(rep, "generic"))
    return rep


def test_each_node_gets_its_history_page(tmp_path, monkeypatch):
    """A distributed run recorded per node: a history page per node, from its cases alone."""
    from placement.report import node_history
    rep = recorded_per_node(tmp_path, monkeypatch)
    pages = node_history.write("generic", [rep], [], tmp_path / "reports")
    assert sorted(pages) == list(NODES)
    assert "History: generic node n2" in (pages["n2"] / "index.html").read_text()


PEER_SETS = sorted((ROOT / "tests/fixtures/peers").glob("*/set.yaml"))


@pytest.mark.parametrize("meta", PEER_SETS, ids=[p.parent.name for p in PEER_SETS])
def test_a_peer_set_was_recorded_after_the_peer_rules_were_fixed(meta):
    """Each live session started after the peer rules it names were fixed (those after
    PEERS_FIXED are the validation sessions), ran on the 4-node cluster, and a node given
    1 PU of 2 gets its topology line in every session of its set."""
    import datetime as dt
    import sys

    import yaml

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import provenance
    info = yaml.safe_load(meta.read_text())
    fixed = dt.datetime.fromisoformat(info["recorded_after_rules_fixed"].replace("Z", "+00:00"))
    assert fixed <= dt.datetime.fromisoformat(provenance.PEERS_FIXED.replace("Z", "+00:00"))
    runs = sorted(meta.parent.glob("run-*.json"))
    assert runs and info["what"] and info["loads"]
    for p in runs:
        rep = reading.run_report.load(p)
        start = dt.datetime.strptime(rep.session["time_start"], "%Y%m%dT%H%M%S%z")
        assert start > fixed, p.name
        (j,) = peers.cases.judge_report(rep)
        assert j.nodes == list(NODES)
        if info["condition"] == "pu1of2":
            assert any(t.node == "n2" and "1 PU allowed of 2" in t.line(j.where)
                       for t in j.topology), j.lines()


def test_each_node_is_judged_against_its_own_sessions(tmp_path, monkeypatch):
    """With a per-node baseline, a HISTORY line per node: its values against its own
    stored session."""
    from placement.judgement import baselines
    data = _distributed({})
    for run_ in data["runs"]:
        for tc in run_["testcases"]:
            tc["node"] = tc["job_nodelist"][0]
    (tmp_path / "b").mkdir()
    baselines.store.write_atomic(tmp_path / "b" / "generic.yaml", baselines.store.from_run(
        reading.run_report.from_data(data, Path("x.json")), "generic"))
    path = tmp_path / "run-report-x.json"
    path.write_text(json.dumps(_distributed({"n3": 2.0})))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "b"))
    lines, status = acceptance.summary([path], "generic", "quick", None, 10.0, False, [])
    history = [ln for ln in lines if ln.startswith("HISTORY")]
    assert [ln.split()[2] for ln in history] == [f"{n}:" for n in NODES], lines
    assert "against its own 1 baseline session(s)" in history[0]
    assert status == 1


def test_a_node_left_busy_is_named_loaded_though_the_runs_median_case_is_quiet(
        tmp_path, monkeypatch):
    """A job left running on one node of four loads a quarter of the run's cases: the run's
    median case stays quiet, the node's own cases do not."""
    lines, status = _summary(tmp_path, with_load(_distributed({}), {
        "n1": 3.0, "n2": 4.0, "n3": 85.0, "n4": 2.0}), monkeypatch)
    (node,) = [ln for ln in lines if ln.startswith("NODE ")]
    assert node.startswith("NODE generic: n3 under a competing load: tasks waited for a CPU "
                           "85% of the time in the median of "), node
    assert status == 1 and " node=loaded" in lines[-1], lines[-1]
    # the count a site reads first says so too: the loaded node is not among the alike
    assert lines[0] == "COUNT generic: 4 nodes judged: 3 alike, 0 odd, 1 under a load: n3", \
        lines[0]
    lines, status = _summary(tmp_path, with_load(_distributed({}), dict.fromkeys(NODES, 3.0)),
                             monkeypatch)
    assert not [ln for ln in lines if ln.startswith("NODE ")] and status == 0, lines


def _unusable(data: dict, nodes: tuple[str, ...], value: float) -> dict:
    """``data`` with every launch of ``nodes`` set to ``value`` (NaN, inf, 0, negative)."""
    for tc in data["runs"][0]["testcases"]:
        if tc["job_nodelist"][0] in nodes:
            tc["perf_launches"] = {var: [value] * len(runs)
                                   for var, runs in (tc.get("perf_launches") or {}).items()}
    return data


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0, -1.0])
def test_a_node_with_no_usable_value_makes_the_run_incomplete(tmp_path, monkeypatch, value):
    lines, status = _summary(tmp_path, _unusable(_distributed({}), ("n4",), value), monkeypatch)
    nodes = [ln for ln in lines if ln.startswith("NODES")]
    assert nodes[0].startswith("NODES generic:default: n4 not judged: 0 usable values of "), lines
    assert nodes[1].startswith("NODES generic:default: 3 nodes alike on "), nodes
    assert lines[0] == "COUNT generic: 3 nodes judged: 3 alike, 0 odd, 1 not judged: n4"
    assert status == 4 and " INCOMPLETE " in lines[-1] and "n4 of generic:default not " \
        "judged by its peers" in lines[-1], lines[-1]


def test_every_node_unusable_is_incomplete_not_a_pass(tmp_path, monkeypatch):
    lines, status = _summary(tmp_path, _unusable(_distributed({}), NODES, float("nan")),
                             monkeypatch)
    assert status == 4 and " INCOMPLETE " in lines[-1], lines[-1]
    assert lines[0] == "COUNT generic: 0 nodes judged: 0 alike, 0 odd, 4 not judged: n1, n2, " \
        "n3, n4"
    assert not any("alike on" in ln for ln in lines), lines


def test_a_node_unusable_beside_a_slow_one_is_no_peer_of_it(tmp_path, monkeypatch):
    lines, status = _summary(tmp_path, _unusable(_distributed({"n3": 1 / 0.7}), ("n4",),
                                                 float("nan")), monkeypatch)
    assert any(ln.startswith("NODES generic:default: n3 slower than its 2 peers on ")
               for ln in lines), lines
    assert status == 1 and " FAIL " in lines[-1]
