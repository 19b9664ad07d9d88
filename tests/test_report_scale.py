"""A report of a large session draws a bounded number of figures and says where every value is.

A partition's acceptance session has hundreds of nodes; a figure per node and per series
made a report of 100k values take over ten minutes. The figures of one kind are now drawn
for at most :data:`placement.report.plots.MAX_ITEM_FIGURES` items (odd nodes, failed or
changed values first), the page says so, and every value stays in the table of all values
and in ``numbers.csv``. Here the bound is set to 3 and a recorded session is spread over 8
nodes (how the benchmark ``benchmarks/report_scale.py`` measures the time and memory).
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest

from placement.judgement import reading
from placement.report import plots
from placement.report.assembly import report_runs

ROOT = Path(__file__).resolve().parent.parent
SESSION = sorted((ROOT / "tests/fixtures/validation/dev2core-quiet-20261201thirteen")
                 .glob("run-*.json"))[0]
#: the memory-write checks alone: a series per node and thread count, few values to draw
TESTS = ("MemWriteThreadsCheck",)
NODES = [f"n{i}" for i in range(1, 9)]
LIMIT = 3


def _partition(slow: str) -> dict:
    """The session's memory-write cases on each of :data:`NODES` (``--distribute``'s names),
    ``slow``'s launches twice as slow."""
    data = json.loads(SESSION.read_text())
    cases = []
    for node in NODES:
        for tc in data["runs"][0]["testcases"]:
            if tc.get("fixture") or not tc["display_name"].startswith(TESTS):
                continue
            tc = copy.deepcopy(tc)
            tc["display_name"] += f" %.part={tc['system']}:{tc['partition']} %.nid={node}"
            tc["unique_name"] += f"_{node}"
            tc["job_nodelist"] = [node]
            if node == slow:
                tc["perf_launches"] = {v: [x / 2 for x in runs]
                                       for v, runs in tc["perf_launches"].items()}
            cases.append(tc)
    data["runs"] = [{**data["runs"][0], "testcases": cases}]
    return data


@pytest.fixture
def report(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    monkeypatch.setattr(plots, "MAX_ITEM_FIGURES", LIMIT, raising=False)
    path = tmp_path / "run-report-x.json"
    path.write_text(json.dumps(_partition("n6")))
    return report_runs([reading.run_report.load(path)], tmp_path / "reports", None,
                       compare_previous=False)


@pytest.mark.skipif(not plots.available(), reason="matplotlib (the reports extra) is missing")
def test_figures_are_bounded_and_the_page_says_where_every_value_is(report: Path):
    pngs = sorted(p.name for p in report.glob("*.png"))
    peers = [p for p in pngs if p.startswith("peers-")]
    series = [p for p in pngs if p.startswith("bw-")]
    # before: a figure for each of the 8 nodes, and for each node's series
    assert len(peers) == LIMIT and len(series) == LIMIT, pngs
    assert "peers-generic-default-n6.png" in peers      # the odd node first
    assert any(p.endswith("-node-n6.png") for p in series), series
    assert "partition-generic-default.png" in pngs      # every node in one heatmap
    page = (report / "index.html").read_text()
    assert f"Figures for {LIMIT} of the {len(NODES)} nodes" in page
    assert f"Figures for {LIMIT} of the {len(NODES)} bandwidth series" in page
    rows = list(csv.DictReader((report / "numbers.csv").open()))
    every = [r for r in rows if r["table"] == "all-values" and r["quantity"] == "value"]
    assert {r["row"].split(" node=")[1].split()[0] for r in every} == set(NODES)
    assert f"all {len(every)} measured values are in the table of all values" in page


def test_chosen_draws_what_needs_a_look_first():
    keys = list(range(10))
    assert plots.chosen(keys, lambda k: k in (7, 9), 3) == {7, 9, 0}
    assert plots.chosen(keys, lambda k: False, 3) == {0, 1, 2}
    assert plots.chosen(keys, lambda k: True, 20) == set(keys)
