"""The confirmation session of a ``--distribute`` run: what it reruns on which node, and what
it says per node.

A partition's session here is one real session of the quick kernels
(``fixtures/aa-launches/``) per node, renamed as ReFrame's ``--distribute`` names its
per-node copies (``%.part=... %.nid=nX``, each copy's hash ReFrame's of that name, its
variants numbered by the nodes given): the hash that selects a check before it is copied is
then the plain session's own, as ReFrame computed it. What ReFrame itself selects with the
constructed options (``reframe --list --distribute`` against the 4-node test Slurm) is the
live test at the end; the whole acceptance run with its confirmation is in
``test_partition_live.py``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from placement import acceptance
from placement.acceptance import distributed
from placement.judgement import reading

LAUNCHES = sorted((Path(__file__).parent / "fixtures" / "aa-launches").glob("*.json"))
ROOT = Path(__file__).resolve().parents[1]
NODES = ["n1", "n2", "n3", "n4"]
CASE = "MemWriteSingleCheck %scale=small"
WHERE = "generic:default"


def _reframe_hash(display_name: str) -> str:
    """ReFrame 4's ``hashcode`` of a test's display name (``RegressionTest.hashcode``)."""
    basename, *params = display_name.split(" %")
    m = hashlib.sha256(basename.encode())
    for p in sorted(params):
        m.update(p.encode())
    return m.hexdigest()[:8]


def _partition(sessions: list[dict], nodes: list[str], slow: dict[str, float] = None) -> dict:
    """One run report of ``--distribute``: node ``nodes[i]`` measured as ``sessions[i]``,
    a node of ``slow`` that many times slower on every value."""
    data = copy.deepcopy(sessions[0])
    cases, variant = [], 0
    for node, session in zip(nodes, sessions):
        for tc in copy.deepcopy(session["runs"][0]["testcases"]):
            factor = (slow or {}).get(node, 1.0)
            for key, tup in (tc.get("perfvalues") or {}).items():
                if isinstance(tup[0], (int, float)):
                    higher = tup[4] not in ("s", "us", "ms", "ns")
                    tup[0] = tup[0] / factor if higher else tup[0] * factor
                    var = key.rsplit(":", 1)[-1]
                    if var in (tc.get("perf_launches") or {}):
                        tc["perf_launches"][var] = [x / factor if higher else x * factor
                                                    for x in tc["perf_launches"][var]]
            tc["display_name"] += f" %.part={WHERE} %.nid={node}"
            tc["hashcode"] = _reframe_hash(tc["display_name"])
            tc["unique_name"] = f"{tc['unique_name'].rsplit('_', 1)[0]}_{variant}"
            variant += 1
            cases.append(tc)
    data["runs"][0]["testcases"] = cases
    return data


def _failed(data: dict, name: str, node: str) -> dict:
    """A copy where ReFrame failed the case ``name`` on ``node`` on its reference."""
    data = copy.deepcopy(data)
    for tc in data["runs"][0]["testcases"]:
        if tc["display_name"] == f"{name} %.part={WHERE} %.nid={node}":
            tc.update(result="fail", fail_phase="performance", fail_reason=(
                "performance error: failed to meet reference(s): gbps_1M=1.0 GB/s, "
                "expected 3.0 (l=1.5, u=inf)"))
    return data


def _write(tmp: Path, name: str, data: dict) -> Path:
    p = tmp / name
    p.write_text(json.dumps(data))
    return p


def _one(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def no_baseline(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))   # ReFrame's references only
    return tmp_path


def _calm(tmp: Path, name: str, nodes: list[str] = NODES, slow=None) -> Path:
    """A partition whose nodes are one session each (the same session: no node apart)."""
    one = _one(LAUNCHES[-1])
    return _write(tmp, name, _partition([one] * len(nodes), nodes, slow))


def test_the_hash_of_a_check_before_it_was_copied_is_reframes():
    plain = _one(LAUNCHES[-1])["runs"][0]["testcases"]
    copies = _partition([_one(LAUNCHES[-1])], ["n2"])["runs"][0]["testcases"]
    assert [distributed.base_hash(tc) for tc in copies] == [tc["hashcode"] for tc in plain]
    assert all(reading.run_report.node_named(tc) == "n2" for tc in copies)


def test_a_failed_case_reruns_on_the_node_where_it_failed(no_baseline):
    first = _write(no_baseline, "first.json", _failed(_one(_calm(no_baseline, "c.json")),
                                                      CASE, "n2"))
    chosen = acceptance.selection([first], "generic")
    plain = {tc["display_name"]: tc["hashcode"]
             for tc in _one(LAUNCHES[-1])["runs"][0]["testcases"]}
    assert chosen.hashes == [plain[CASE]] and chosen.nodes == ["n2"]
    assert chosen.lines() == [plain[CASE], "nodes n2"]
    assert "on node(s) n2" in chosen.what
    # the same command line's output (what acceptance.sh reads)
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "placement"), "acceptance", "confirm",
                          str(first), "--system", "generic"], capture_output=True, text=True,
                         env={**os.environ, "PLACEMENT_BASELINES": str(no_baseline)})
    assert out.stdout.split("\n")[:-1] == [plain[CASE], "nodes n2"], out.stderr


def test_a_case_that_passed_on_its_node_again_is_dismissed_for_that_node(no_baseline):
    first = _write(no_baseline, "first.json", _failed(_one(_calm(no_baseline, "c.json")),
                                                      CASE, "n2"))
    # the confirmation ran on n2 alone: ReFrame numbered its copies afresh
    again = _write(no_baseline, "again.json", _partition([_one(LAUNCHES[-2])], ["n2"]))
    assert {tc["unique_name"] for tc in _one(again)["runs"][0]["testcases"]} & \
        {tc["unique_name"] for tc in _one(first)["runs"][0]["testcases"]}
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=again)
    un = [ln for ln in rec.lines if ln.startswith("UNCONFIRMED ")]
    assert len(un) == 1 and f"{CASE} %.part={WHERE} %.nid=n2" in un[0], rec.lines
    assert rec.exit_status == 0, rec.lines
    assert rec.confirmation["nodes"] == [{"partition": WHERE, "node": "n2",
                                          "outcome": "dismissed", "line": un[0]}]
    # failed there again: it stands, confirmed on n2
    worse = _write(no_baseline, "worse.json", _failed(_one(again), CASE, "n2"))
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=worse)
    assert rec.exit_status == 1 and " confirmed 1 of 1" in rec.line, rec.lines
    assert [(e["node"], e["outcome"]) for e in rec.confirmation["nodes"]] == [("n2", "confirmed")]


def test_a_nodes_line_reruns_the_whole_distribute_set(no_baseline):
    first = _calm(no_baseline, "first.json", slow={"n2": 3.0})
    rec = acceptance.verdict_record([first], "generic", "quick")
    assert any(re.match(rf"NODES {WHERE}: n2 slower", ln) for ln in rec.lines), rec.lines
    chosen = acceptance.selection([first], "generic")
    plain = {tc["hashcode"] for tc in _one(LAUNCHES[-1])["runs"][0]["testcases"]
             if not tc.get("fixture") and tc["result"] in ("pass", "fail")}
    assert set(chosen.hashes) == plain and chosen.nodes == [], chosen
    assert chosen.lines() == chosen.hashes and "every node" in chosen.what


def test_a_nodes_line_stands_only_if_its_node_is_named_again(no_baseline):
    first = _calm(no_baseline, "first.json", slow={"n2": 3.0})
    again = _calm(no_baseline, "again.json", slow={"n2": 3.0})
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=again)
    said = [ln for ln in rec.lines if ln.startswith("CONFIRMED NODES ")]
    assert len(said) == 1 and said[0].startswith(f"CONFIRMED NODES {WHERE} n2: [first session: "
                                                 "n2 slower"), rec.lines
    assert rec.exit_status == 1 and "odd nodes of generic:default: n2" in rec.line
    assert " confirmed 1 of 1" in rec.line, rec.line
    assert rec.confirmation["nodes"] == [{"partition": WHERE, "node": "n2",
                                          "outcome": "confirmed", "line": said[0]}]
    assert [n.node for n in rec.odd_nodes] == ["n2"]
    assert rec.nodes["odd"] == ["n2"] and rec.lines[0].endswith("1 odd: n2"), rec.lines
    # the node as its peers again: dismissed, said, and no longer an odd node
    calm = _calm(no_baseline, "calm.json")
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=calm)
    said = [ln for ln in rec.lines if ln.startswith("UNCONFIRMED NODES ")]
    assert len(said) == 1 and said[0].startswith(f"UNCONFIRMED NODES {WHERE} n2: "), rec.lines
    assert "odd nodes" not in rec.line and rec.exit_status == 0, rec.lines
    assert " confirmed 0 of 1" in rec.line
    assert rec.confirmation["nodes"][0]["outcome"] == "dismissed" and not rec.odd_nodes
    # the count a site reads first agrees: the dismissed node counts alike
    assert rec.nodes["odd"] == [] and rec.lines[0].endswith(", 0 odd"), rec.lines
    finding = [f for f in rec.findings if f.line == said[0]][0]
    assert finding.kind == "UNCONFIRMED" and finding.node == "n2"


@pytest.mark.parametrize("how", ["absent", "skipped"])
def test_a_node_the_confirmation_did_not_run_again_stands(no_baseline, how):
    """A node named slower that the confirmation session left out (a drained node) or
    skipped was dismissed by its absence, the others alike: the run read PASS with the node
    3x slower. It stands, as not run again, and nothing is counted confirmed."""
    first = _calm(no_baseline, "first.json", slow={"n2": 3.0})
    data = _one(_calm(no_baseline, "calm.json"))
    cases = data["runs"][0]["testcases"]
    if how == "absent":
        data["runs"][0]["testcases"] = [tc for tc in cases
                                        if reading.run_report.node_named(tc) != "n2"]
    else:
        for tc in cases:
            if reading.run_report.node_named(tc) == "n2":
                tc.update(result="skip", fail_phase=None, perfvalues={})
    again = _write(no_baseline, "again.json", data)
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=again)
    assert rec.exit_status == 1 and "odd nodes of generic:default: n2" in rec.line, rec.lines
    assert not any(ln.startswith("UNCONFIRMED NODES ") for ln in rec.lines), rec.lines
    assert " confirmed " not in rec.line.replace("not confirmed", ""), rec.line
    assert "did not run 1 of the first session's failures again" in rec.line, rec.line
    assert {"case": "node n2", "sysenv": WHERE, "var": ""} in rec.confirmation["not_run"]


def test_a_loaded_node_the_confirmation_did_not_run_again_stands(no_baseline):
    """The load line of a node the confirmation left out was dismissed on the other
    nodes' quiet: it stands, not run again."""
    from load_probe import with_load
    busy = {"n1": 85.0, "n2": 3.0, "n3": 3.0, "n4": 3.0}
    first = _write(no_baseline, "first.json",
                   with_load(_one(_calm(no_baseline, "c.json")), busy))
    rec = acceptance.verdict_record([first], "generic", "quick")
    assert rec.exit_status == 1 and " node=loaded" in rec.line, rec.lines
    data = with_load(_one(_calm(no_baseline, "calm.json")), 3.0)
    data["runs"][0]["testcases"] = [tc for tc in data["runs"][0]["testcases"]
                                    if reading.run_report.node_named(tc) != "n1"]
    again = _write(no_baseline, "again.json", data)
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=again)
    assert rec.exit_status == 1 and " node=loaded" in rec.line, rec.lines
    assert not any(ln.startswith("UNCONFIRMED NODE ") for ln in rec.lines), rec.lines
    assert {"case": "load of n1", "sysenv": "generic", "var": ""} in \
        rec.confirmation["not_run"], rec.confirmation
    # run there again and quiet: dismissed, as before
    quiet = _write(no_baseline, "quiet.json", with_load(_one(_calm(no_baseline, "q.json")), 3.0))
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=quiet)
    assert any(ln.startswith("UNCONFIRMED NODE ") for ln in rec.lines), rec.lines


def test_a_node_the_confirmation_could_not_judge_among_peers_stands(no_baseline):
    """A confirmation that reached two nodes only (the others not idle) cannot tell which
    of them is odd: the node named in the first session was dismissed by that, the run a
    PASS with the node 3x slower in both sessions."""
    first = _calm(no_baseline, "first.json", slow={"n2": 3.0})
    again = _calm(no_baseline, "again.json", nodes=["n1", "n2"], slow={"n2": 3.0})
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=again)
    assert rec.exit_status == 1 and "odd nodes of generic:default: n2" in rec.line, rec.lines
    assert not any(ln.startswith("UNCONFIRMED NODES ") for ln in rec.lines), rec.lines
    assert {"case": "node n2", "sysenv": WHERE, "var": ""} in rec.confirmation["not_run"]


@pytest.mark.parametrize("wait,outcome", [(85.0, "CONFIRMED"), (3.0, "UNCONFIRMED")])
def test_a_loaded_node_confirmed_on_that_node_alone(no_baseline, wait, outcome):
    """A confirmation run on the loaded node alone measures that node: loaded again, the
    line is confirmed; quiet, dismissed (it read as not run again either way)."""
    from load_probe import with_load
    busy = {"n1": 85.0, "n2": 3.0, "n3": 3.0, "n4": 3.0}
    first = _write(no_baseline, "first.json",
                   with_load(_one(_calm(no_baseline, "c.json")), busy))
    again = _write(no_baseline, "again.json",
                   with_load(_one(_calm(no_baseline, "a.json", nodes=["n1"])), wait))
    rec = acceptance.verdict_record([first], "generic", "quick", confirm=again)
    assert not rec.confirmation["not_run"], rec.confirmation
    if outcome == "CONFIRMED":
        assert rec.exit_status == 1 and " confirmed 1 of 1" in rec.line, rec.lines
    else:
        assert rec.exit_status == 0 and " confirmed 0 of 1" in rec.line, rec.lines
        assert any(ln.startswith("UNCONFIRMED NODE generic: ") for ln in rec.lines)


def test_the_same_case_of_two_sessions_is_its_hash_not_its_variant_number():
    first = {("A_0", "s", "e"): {"hashcode": "aaaa0000", "system": "s", "partition": "p",
                                 "environ": "e"},
             ("A_1", "s", "e"): {"hashcode": "bbbb1111", "system": "s", "partition": "p",
                                 "environ": "e"}}
    again = {("A_0", "s", "e"): {"hashcode": "bbbb1111", "system": "s", "partition": "p",
                                 "environ": "e", "result": "pass"}}
    assert distributed.same_cases(first, again) == {("A_1", "s", "e"): again[("A_0", "s", "e")]}


# --- what ReFrame selects with those options: the 4-node test Slurm ---------------------------

@pytest.mark.slurm
@pytest.mark.reframe
@pytest.mark.nodes
def test_reframe_selects_the_failed_copies_on_their_nodes(slurm_nodes, reframe_bin):
    cluster = slurm_nodes(4)
    env = {**os.environ, **cluster.env, "RFM_COLORIZE": "n"}
    base = [reframe_bin, "-C", str(ROOT / "config" / "settings.py"), "--system",
            "testnodes:batch", "--mode", "quick", "-t", "nodes", "--distribute=all"]

    def listed(*args: str) -> dict[str, str]:
        out = subprocess.run([*base, *args, "-l"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        found = re.findall(r"^- (.+) /([0-9a-f]{8})$", out.stdout, re.M)
        return {name: h for name, h in found}

    first = listed()          # the first session: the family once on every node
    assert {re.search(r"%\.nid=(\S+)", n).group(1) for n in first} == set(NODES)
    assert len(first) == len(NODES), first
    failed = [{"display_name": n, "hashcode": h} for n, h in first.items()
              if n.startswith("NodeHealthCheck") and ("%.nid=n2" in n or "%.nid=n4" in n)]
    assert len(failed) == 2
    hashes, nodes = distributed.selection(failed)
    assert nodes == ["n2", "n4"] and len(hashes) == 1
    args = [a for h in hashes for a in ("-n", f"/{h}")] + ["-J", f"nodelist={','.join(nodes)}"]
    again = listed(*args)
    # each failed copy again, the same name and hash, and nothing else
    assert {tc["display_name"]: tc["hashcode"] for tc in failed}.items() == again.items()
    # the whole distribute set: every check's hash, no node list
    every = distributed.selection([{"display_name": n} for n in first])[0]
    assert listed(*[a for h in every for a in ("-n", f"/{h}")]) == first
