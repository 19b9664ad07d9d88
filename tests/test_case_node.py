"""A case's node, read once (``reading.run_report.node_named``) and used everywhere: the
node-health family's ``node``, else ``--distribute``'s ``.nid``; never the job's node list."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from placement.judgement import baselines, peers, reading
from placement.judgement.reading.run_report import node_named

ROOT = Path(__file__).resolve().parents[1]
SESSION = sorted((ROOT / "tests/fixtures/validation/dev2core-quiet-20261201thirteen")
                 .glob("run-*.json"))[0]


@pytest.mark.parametrize("tc, node", [
    ({"node": "n2"}, "n2"),
    ({"node": ["n2"]}, "n2"),
    ({"display_name": "NodeCase %.part=s:p %.nid=n3"}, "n3"),
    ({"node": "n1", "display_name": "NodeCase %.nid=n3"}, "n1"),
    ({"job_nodelist": ["n4"]}, ""),                     # a plain run's job: no pinned node
    ({"job_nodelist": ["None"]}, ""),                   # a case that ran no job
    ({"node": "None"}, ""),
    ({"node": ""}, ""),
    ({"node": "n1\nACCEPTANCE x quick: PASS"}, ""),     # a name no scheduler gives
    ({"node": ["n1", "n2"]}, ""),
    ({"node": 7}, ""),
])
def test_node_named(tc, node):
    assert node_named(tc) == node


def _plain_run(nodes: list[str]) -> dict:
    """One session's cases as a plain run (no ``--distribute``) leaves them: each case's
    job on whichever node the scheduler chose, builds with ``['None']``."""
    data = json.loads(SESSION.read_text())
    cases = []
    for i, tc in enumerate(data["runs"][0]["testcases"]):
        tc = copy.deepcopy(tc)
        tc["job_nodelist"] = ["None"] if tc.get("fixture") else [nodes[i % len(nodes)]]
        cases.append(tc)
    data["runs"] = [{**data["runs"][0], "testcases": cases}]
    return data


def test_a_plain_run_on_several_nodes_has_no_node_and_no_peer_verdict(tmp_path):
    path = tmp_path / "run-report-plain.json"
    path.write_text(json.dumps(_plain_run(["n1", "n2", "n3", "n4"])))
    report = reading.run_report.load(path)
    assert {c.node for c in report.cases} == {None}
    assert peers.cases.partitions(report) == {}


def test_a_plain_run_is_recorded_without_a_node_index(tmp_path):
    """The first baseline after a plain acceptance run on a Slurm partition: no case is
    indexed by a ``node`` it does not record."""
    path = tmp_path / "run-report-plain.json"
    path.write_text(json.dumps(_plain_run(["n1", "n2"])))
    report = reading.run_report.load(path)
    system = report.cases[0].system
    tree = baselines.store.from_run(report, system)
    assert tree
    text = json.dumps(tree)
    assert '"node"' not in text and "None" not in text


@pytest.mark.parametrize("field, value", [
    ("partition", "batch\nACCEPTANCE testnodes quick: PASS 58 passed, 0 failed"),
    ("system", "sys\rx"),
    ("environ", "gnu\x1b[2K"),
    ("name", "T" * 300),
    ("partition", ""),
])
def test_a_name_that_could_forge_a_line_is_refused_in_one_line(tmp_path, field, value):
    from placement.util import PlacementError
    data = json.loads(SESSION.read_text())
    tc = next(t for t in data["runs"][0]["testcases"] if not t.get("fixture"))
    tc[field] = value
    path = tmp_path / "run-report-forged.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PlacementError) as err:
        reading.run_report.load(path)
    text = str(err.value)
    assert "\n" not in text and "\r" not in text and "\x1b" not in text and len(text) < 400
    assert f"its {field}" in text


def test_a_plain_run_whose_cases_say_their_node_gets_a_note_not_a_verdict(tmp_path,
                                                                         monkeypatch):
    """The same plain run with each case saying the node it landed on (as the node-health
    family's ``node`` does): no value was measured on two nodes, so no peer verdict, no
    COUNT line, one NOTE, and the outcome of the run whose nodes are unknown."""
    from placement import acceptance
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "none"))
    data = _plain_run(["n1", "n2", "n3", "n4"])
    unknown = tmp_path / "unknown" / "run-report-plain.json"
    unknown.parent.mkdir()
    unknown.write_text(json.dumps(data))
    for tc in data["runs"][0]["testcases"]:
        if not tc.get("fixture"):
            tc["node"] = tc["job_nodelist"][0]
    known = tmp_path / "run-report-plain.json"
    known.write_text(json.dumps(data))
    report = reading.run_report.load(known)
    (j,) = peers.cases.judge_report(report)
    assert j.unshared and len(j.nodes) == 4 and not j.fails and not j.gaps
    system = report.cases[0].system
    lines, status = acceptance.summary([known], system, "quick", None, 10.0, False, [])
    before, status_before = acceptance.summary([unknown], system, "quick", None, 10.0, False,
                                               [])
    assert [ln for ln in lines if ln.startswith(("COUNT", "NODES", f"NOTE {j.where}"))] == [
        f"NOTE {j.where}: no value was measured on two nodes (a run without --distribute): "
        "no peer verdict"], lines
    assert status == status_before
    assert lines[-1] == before[-1].replace(str(unknown), str(known))
