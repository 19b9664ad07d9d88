"""Report generation from real ReFrame run reports (tests/fixtures/runreports/).

The fixtures come from `tests/fixtures/runreports/checks` run here: once
with no baseline, once against the baseline recorded from the first run.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from placement import cli, runreport, stats
from placement.errors import PlacementError

FIX = Path(__file__).parent / "fixtures" / "runreports"
FIRST = FIX / "generic-first-run.json"
WITH_BASE = FIX / "generic-with-baseline.json"


def test_load_real_report_has_cases_with_samples():
    rep = runreport.load(WITH_BASE)
    assert rep.systems == ["generic"]
    npb = [c for c in rep.cases if c.test == "ReportNpbShaped"]
    assert npb and all(len(c.samples["time"]) == 5 for c in npb)
    c = npb[0]
    assert {"benchmark", "npb_class", "num_threads", "affinity"} <= c.params.keys()
    assert isinstance(c.params["num_threads"], int)
    assert "time" in c.primary_vars() and "time_run0" not in c.primary_vars()
    assert "stddev" not in c.primary_vars()
    assert c.perf["time"].ref is not None  # the second run had references


def test_summary_matches_perfvalue_mean():
    c = next(c for c in runreport.load(FIRST).cases if c.test == "ReportNpbShaped")
    s = c.summary("time")
    assert s.n == 5 and s.mean == pytest.approx(c.perf["time"].value, rel=1e-9)
    assert s.half_width > 0


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    assert cli.main(["report", "--run", str(WITH_BASE), "--output", str(out), "--no-compare"]) == 0
    (d,) = out.iterdir()
    return d


def test_report_files_and_sections(report_dir: Path):
    names = {p.name for p in report_dir.iterdir()}
    assert {"index.html", "README.md", "numbers.csv"} <= names
    html = (report_dir / "index.html").read_text()
    for section in ("npb-tables", "npb-scaling", "runs", "numa", "regressions", "provenance"):
        assert f'id="{section}"' in html
    assert "<script" not in html
    for png in (p for p in report_dir.iterdir() if p.suffix == ".png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{png.name}"' in html  # relative paths: opens from disk
    assert report_dir.name.startswith("generic-")


def test_csv_has_every_table_number(report_dir: Path):
    rows = list(csv.DictReader(open(report_dir / "numbers.csv")))
    sections = {r["section"] for r in rows}
    assert {"npb", "scaling", "runs", "numa", "regression", "values"} <= sections
    run = runreport.load(WITH_BASE)
    c = next(c for c in run.cases if c.test == "ReportNpbShaped")
    mean = c.summary("time").mean
    assert any(r["quantity"] == "time" and float(r["value"]) == pytest.approx(mean, rel=1e-5)
               for r in rows if r["section"] == "npb")


def test_regression_rows_follow_reframe_verdict(report_dir: Path):
    md = (report_dir / "README.md").read_text()
    assert "Against the stored baseline" in md
    run = runreport.load(WITH_BASE)
    failed = [c for c in run.cases if any(pv.result == "fail" for pv in c.perf.values())]
    rows = list(csv.DictReader(open(report_dir / "numbers.csv")))
    assert len([r for r in rows if r["section"] == "regression" and r["quantity"] == "baseline"]) \
        == sum(1 for c in run.cases for v in c.primary_vars() if c.perf[v].ref)
    assert failed  # the fixture holds real failures, shown as "outside threshold"
    assert "| yes |" in md


def test_latest_and_bad_inputs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path / "res"))
    assert cli.main(["report", "--latest", "--output", str(tmp_path)]) == 2
    assert "no run reports" in capsys.readouterr().err
    runs = tmp_path / "res" / "runs"
    runs.mkdir(parents=True)
    (runs / "run-report-9.json").write_text("{ not json")
    assert cli.main(["report", "--latest", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "not a ReFrame run report" in err and "Traceback" not in err
    (runs / "run-report-9.json").write_text(json.dumps({"foo": 1}))
    assert cli.main(["report", "--run", str(runs / "run-report-9.json")]) == 2
    assert cli.main(["report", "--run", str(tmp_path / "missing.json")]) == 2
    assert not (tmp_path / "o").exists()


def test_latest_picks_newest(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run-report-0.json").write_bytes(FIRST.read_bytes())
    (runs / "run-report-1.json").write_bytes(WITH_BASE.read_bytes())
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path))
    assert runreport.latest(runs).name == "run-report-1.json" or \
        runreport.latest(runs).stat().st_mtime >= (runs / "run-report-0.json").stat().st_mtime
    assert cli.main(["report", "--latest", "--no-compare", "--output", str(tmp_path / "r")]) == 0
    assert Path(capsys.readouterr().out.strip()).is_dir()


def test_stats_ci_and_tests():
    s = stats.summarize([1.0, 1.1, 0.9, 1.05, 0.95])
    assert s.mean == pytest.approx(1.0)
    assert s.half_width == pytest.approx(2.776 * s.sd / 5 ** 0.5, rel=1e-3)
    assert stats.against_value(s, 1.0).significant is False
    assert stats.against_value(s, 1.5).significant is True
    assert stats.against_value(stats.Summary(1.0), 2.0).significant is None
    b = stats.summarize([2.0, 2.1, 1.9, 2.05, 1.95])
    assert stats.welch(s, b).significant is True
    r = stats.ratio(stats.Summary(0.41), stats.Summary(0.22))
    assert r.mean == pytest.approx(1.8636, rel=1e-3) and r.half_width is None
