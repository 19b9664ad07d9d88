"""Report generation from real ReFrame run reports (tests/fixtures/runreports/).

The generic-* fixtures come from `tests/fixtures/runreports/checks` run here:
once with no baseline, once against the baseline recorded from the first run.
generic-npb-guards.json is NpbQuickCheck (EP and LU, class S, 3 repeats) run
here with the stability limit tightened (``-S cv_limit=2 -S min_judged_s=0``),
so real guards trip; xeon16-lu-collapse.json is the 16-core node's LU class A
at 32 threads, where the unpinned runs collapsed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from placement import cli
from placement.judgement import verdict, reading
from placement.report import provenance as report_provenance
from placement.report.sections import npb_sections
from placement.report.tables import Numbers, regression_table

FIX = Path(__file__).parent / "fixtures" / "runreports"
FIRST = FIX / "generic-first-run.json"
WITH_BASE = FIX / "generic-with-baseline.json"
NPB_GUARDS = FIX / "generic-npb-guards.json"
LU_COLLAPSE = FIX / "xeon16-lu-collapse.json"


def test_load_real_report_has_cases_with_samples():
    rep = reading.run_report.load(WITH_BASE)
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
    c = next(c for c in reading.run_report.load(FIRST).cases if c.test == "ReportNpbShaped")
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
    run = reading.run_report.load(WITH_BASE)
    c = next(c for c in run.cases if c.test == "ReportNpbShaped")
    mean = c.summary("time").mean
    assert any(r["quantity"] == "time" and float(r["value"]) == pytest.approx(mean, rel=1e-5)
               for r in rows if r["section"] == "npb")


def test_regression_rows_follow_reframe_verdict(report_dir: Path):
    md = (report_dir / "README.md").read_text()
    assert "Against the stored baseline" in md
    run = reading.run_report.load(WITH_BASE)
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
    # a verdict record that is none: said, and no report written
    (tmp_path / "rec.json").write_text("hello\n")
    good = str(FIRST)
    assert cli.main(["report", "--run", good, "--record", str(tmp_path / "rec.json"),
                     "--output", str(tmp_path / "o")]) == 2
    assert "not a verdict record" in capsys.readouterr().err
    assert cli.main(["report", "--run", good, "--record", str(tmp_path / "none.json"),
                     "--output", str(tmp_path / "o")]) == 2
    assert "cannot read the verdict record" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    # another run's record: its outcome would head this run's report
    from placement import acceptance
    other = acceptance.verdict_record([FIRST], "generic", "quick")
    other_path = tmp_path / "verdict-other.json"
    acceptance.record.write(other, other_path)
    failing = FIRST.parent / "generic-with-baseline.json"
    assert cli.main(["report", "--run", str(failing), "--record", str(other_path),
                     "--no-compare", "--exit-status", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "the verdict record of another run" in err
    assert not (tmp_path / "o").exists()
    # the run's own record, its report gzipped since (the record's name has no .gz)
    import gzip
    packed = tmp_path / "generic-first-run.json.gz"
    packed.write_bytes(gzip.compress(FIRST.read_bytes()))
    assert cli.main(["report", "--run", str(packed), "--record", str(other_path),
                     "--no-compare", "--output", str(tmp_path / "o")]) == 0


def test_latest_picks_newest(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run-report-0.json").write_bytes(FIRST.read_bytes())
    (runs / "run-report-1.json").write_bytes(WITH_BASE.read_bytes())
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path))
    assert reading.run_report.latest(runs).name == "run-report-1.json" or \
        reading.run_report.latest(runs).stat().st_mtime >= (runs / "run-report-0.json").stat().st_mtime
    assert cli.main(["report", "--latest", "--no-compare", "--output", str(tmp_path / "r")]) == 0
    assert Path(capsys.readouterr().out.strip()).is_dir()


def test_ratio_of_a_zero_time_has_no_spread():
    zero, some = reading.summary.summarize([0.0, 0.0, 0.0]), reading.summary.summarize([0.01, 0.0, 0.01])
    assert reading.summary.ratio(zero, some).mean == 0 and reading.summary.ratio(zero, some).half_width is None


def test_stats_ci_and_tests():
    s = reading.summary.summarize([1.0, 1.1, 0.9, 1.05, 0.95])
    assert s.mean == pytest.approx(1.0)
    assert s.half_width == pytest.approx(2.776 * s.sd / 5 ** 0.5, rel=1e-3)
    assert reading.summary.against_value(s, 1.0).significant is False
    assert reading.summary.against_value(s, 1.5).significant is True
    assert reading.summary.against_value(reading.summary.Summary(1.0), 2.0).significant is None
    b = reading.summary.summarize([2.0, 2.1, 1.9, 2.05, 1.95])
    assert reading.summary.welch(s, b).significant is True
    r = reading.summary.ratio(reading.summary.Summary(0.41), reading.summary.Summary(0.22))
    assert r.mean == pytest.approx(1.8636, rel=1e-3) and r.half_width is None


def test_npb_cases_carry_every_run_and_the_npb_version():
    rep = reading.run_report.load(NPB_GUARDS)
    npb = [c for c in rep.cases if c.test == "NpbQuickCheck"]
    assert len(npb) == 4
    for c in npb:
        assert all(len(c.samples[v]) == 3 for v in ("time", "mops", "wall"))
        assert c.summary("time").mean == pytest.approx(c.perf["time"].value, rel=1e-9)
        assert c.summary("time").n == 3
    assert report_provenance.npb_version([rep]) == "3.4"
    # LU's build has no RAND line: two builds, each as NPB reported it
    builds = report_provenance.npb_builds([rep])
    assert len(builds) == 2 and all(b.startswith("F77=gfortran FFLAGS=-O3 -fopenmp")
                                    and b.endswith("; compiled 22 Nov 2026") for b in builds)


def _report(tmp_path: Path, *runs: Path) -> Path:
    args = ["report", "--no-compare", "--output", str(tmp_path)]
    for r in runs:
        args += ["--run", str(r)]
    assert cli.main(args) == 0
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return d


def test_tripped_guards_are_listed_apart(tmp_path):
    rep = reading.run_report.load(NPB_GUARDS)
    failed = {(c.label(), v) for c in rep.cases for v, pv in c.perf.items()
              if v in verdict.guards.GUARD_VARS and pv.result == "fail"}
    assert failed  # the tightened limit tripped in this real run
    assert {(t.case.label(), t.var) for t in verdict.guards.trips(rep.cases)} == failed
    d = _report(tmp_path, NPB_GUARDS)
    md = (d / "README.md").read_text()
    assert "**Guards that tripped**" in md
    assert "4 case(s) carried guards" in md and f"{len(failed)} tripped" in md
    rows = [r for r in csv.DictReader(open(d / "numbers.csv")) if r["section"] == "guards"]
    assert {(r["row"], r["column"]) for r in rows if r["quantity"] == "limit"} == \
        {(f"NpbQuickCheck {label}", v) for label, v in failed}


def test_collapse_is_a_guard_not_a_baseline_regression(tmp_path):
    rep = reading.run_report.load(LU_COLLAPSE)
    lu = next(c for c in rep.cases if c.params.get("affinity") == "none")
    assert lu.perf["slowdown"].result == "fail" and lu.perf["stopped"].value == 3
    table = regression_table(rep.cases, Numbers())
    assert table is None or not any(row[3] in verdict.guards.GUARD_VARS for row in table.rows)
    md = (_report(tmp_path, LU_COLLAPSE) / "README.md").read_text()
    guard_rows = [ln for ln in md.splitlines() if "| collapsed:" in ln or "| stopped:" in ln]
    assert len(guard_rows) == 2 and all("benchmark=LU" in ln for ln in guard_rows)


def test_scaling_without_one_thread_runs_says_why(tmp_path):
    cases = [c for c in reading.run_report.load(NPB_GUARDS).cases if c.params.get("threads") == "full"]
    tables, scal = npb_sections(cases, tmp_path, Numbers(), figures=False)
    assert tables.tables and not scal.tables and "No speedup here" in scal.text
    every = reading.run_report.load(NPB_GUARDS).cases
    assert npb_sections(every, tmp_path, Numbers(), figures=False)[1].tables


def test_discussion_survives_regeneration(tmp_path):
    d = _report(tmp_path, NPB_GUARDS)
    (d / "discussion.md").write_text("**Pinning** helps `EP` *here*.\n\nSecond paragraph.\n")
    (d / "stale.png").write_bytes(b"")      # a figure the earlier report drew, no longer drawn
    (d / ".placement-report").write_text((d / ".placement-report").read_text() + "stale.png\n")
    (d / "by-hand.png").write_bytes(b"")    # put there by a person: not the report's own
    d2 = _report(tmp_path, NPB_GUARDS)
    assert d2 == d and (d / "discussion.md").exists() and not (d / "stale.png").exists()
    assert (d / "by-hand.png").exists()
    md = (d / "README.md").read_text()
    assert md.index("## Discussion") < md.index("## Regression summary")
    assert "**Pinning** helps `EP` *here*." in md
    page = (d / "index.html").read_text()
    assert "<p><strong>Pinning</strong> helps <code>EP</code> <em>here</em>.</p>" in page
    assert "<p>Second paragraph.</p>" in page


def test_npb_boxplots_one_figure_per_benchmark_and_class(tmp_path):
    d = _report(tmp_path, NPB_GUARDS)
    figures = sorted(p.name for p in d.glob("runs-*.png"))
    assert figures == ["runs-npbquickcheck-ep-s-time-generic-default-gnu.png",
                       "runs-npbquickcheck-lu-s-time-generic-default-gnu.png"]
    rows = [r for r in csv.DictReader(open(d / "numbers.csv")) if r["section"] == "runs"]
    # Mop/s and wall time of every run stay in the CSV, with no figure of their own
    assert {r["quantity"] for r in rows} == {"time", "mops", "wall"}
    assert len([r for r in rows if r["quantity"] == "time"]) == 4 * 3


def test_run_lists_pool_their_parts(tmp_path, capsys):
    """An acceptance run's .run list stands for all its parts; a bad list is a clear error."""
    lst = tmp_path / "acceptance-generic-quick-1.run"
    lst.write_text(f"{FIRST}\n{NPB_GUARDS}\n")
    assert reading.run_report.expand(str(lst)) == [FIRST, NPB_GUARDS]
    d = _report(tmp_path / "out", lst)
    assert "from 2 run(s)" in (d / "README.md").read_text()
    empty = tmp_path / "empty.run"
    empty.write_text("\n")
    for bad, says in ((empty, "empty run list"), (tmp_path / "missing.run", "not found")):
        assert cli.main(["report", "--run", str(bad), "--output", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err


#: markup in a case's name, a parameter and an acceptance line: text, never markup
EVIL = "<script>alert(1)</script> **bold** a|b [x](y)"


def test_strings_from_results_are_escaped_in_html_and_markdown(tmp_path):
    """A failed case named with HTML, bold, a table bar and a link, and a summary line
    holding them, show as their characters in README.md and index.html."""
    from markdown_it import MarkdownIt
    data = json.loads(WITH_BASE.read_text())
    tc = next(tc for r in data["runs"] for tc in r["testcases"] if tc["result"] == "fail")
    tc["display_name"] = f"ReportNpbShaped {EVIL}"
    tc["affinity"] = EVIL
    run = tmp_path / "run.json"
    run.write_text(json.dumps(data))
    from placement.acceptance import record
    lines = [f"FAIL {EVIL}", "ACCEPTANCE generic quick: FAIL 8 passed, 12 failed "
             "(12 perf regressions) report=run.json skipped=0"]
    answer = record.VerdictRecord("generic", "quick", "FAIL", 1, [str(run)], {}, lines,
                                  [record.Finding("FAIL", lines[0]),
                                   record.Finding("ACCEPTANCE", lines[1])])
    rec = record.write(answer, tmp_path / "verdict-run.json")
    assert cli.main(["report", "--run", str(run), "--output", str(tmp_path / "o"),
                     "--no-compare", "--record", str(rec)]) == 0
    (d,) = (tmp_path / "o").iterdir()
    md = (d / "README.md").read_text()
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    page = (d / "index.html").read_text()
    for html in (rendered, page):
        assert "<script" not in html and "<strong>bold</strong>" not in html
        assert '<a href="y"' not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt; **bold** a|b [x](y)" in html
    # the table bar stayed in its cell: the lead table's rows keep their seven cells
    lead = next(ln for ln in md.splitlines() if ln.startswith("| ReportNpbShaped \\<script"))
    assert lead.replace("\\|", "").count("|") == 8


def test_the_lead_says_which_failures_the_confirmation_showed_again(tmp_path):
    """The lead table's `confirmed` column reads the acceptance summary's UNCONFIRMED
    findings, as the confirmation makes them: one failed case passed its confirmation
    session."""
    from placement.acceptance import confirmation, record
    from placement.report import lead
    data = json.loads(WITH_BASE.read_text())
    failed = [tc for r in data["runs"] for tc in r["testcases"] if tc["result"] == "fail"]
    passed = {**failed[0], "result": "pass", "fail_phase": None}
    conf = confirmation.decide({0: failed[0], 1: failed[1]}, {0: passed, 1: failed[1]}, {}, {},
                               lambda tc: "performance")
    lines = conf.lines() + [f"ACCEPTANCE generic quick: FAIL 8 passed, 11 failed "
                            f"(11 perf regressions) report=x.json skipped=0{conf.text()}"]
    answer = record.VerdictRecord("generic", "quick", "FAIL", 1, ["x.json"], {}, lines,
                                  conf.findings() + [record.Finding("ACCEPTANCE", lines[-1])],
                                  confirmation={"ran": True, "confirmed": conf.confirmed})
    cases = reading.run_report.load(WITH_BASE).cases
    sec = lead.lead_section(cases, [], tmp_path, answer)
    (t, _) = sec.tables
    said = {r[0]: r[5] for r in t.rows}
    assert said[f"{failed[0]['display_name']} @generic:default+{failed[0]['environ']}"] \
        == "not confirmed"
    assert said[f"{failed[1]['display_name']} @generic:default+{failed[1]['environ']}"] \
        == "confirmed"
    # without a confirmation session: said so, never "confirmed"
    (t,) = lead.lead_section(cases, [], tmp_path).tables
    assert {r[5] for r in t.rows} == {"no confirmation session"}


def _on_nodes(nodes: list[str], tmp_path: Path) -> reading.run_report.RunReport:
    """The cases of ``WITH_BASE`` pinned to each of ``nodes``, as ``--distribute`` runs them."""
    import copy

    data = reading.run_report.read(WITH_BASE)
    tcs = data["runs"][0]["testcases"]
    every = []
    for node in nodes:
        for tc in tcs:
            tc = copy.deepcopy(tc)
            tc["node"] = node
            tc["display_name"] += f" %.nid={node}"
            every.append(tc)
    data["runs"][0]["testcases"] = every
    return reading.run_report.from_data(data, tmp_path / "run.json")


def test_a_distributed_run_keeps_each_nodes_npb_table_and_numa_matrix(tmp_path):
    """The same cases pinned to two nodes (``--distribute``): one NPB table and one NUMA
    matrix per node, named by the node; neither node's numbers replace the other's."""
    from placement.report.sections import numa_section

    rep = _on_nodes(["n1", "n2"], tmp_path)
    assert {c.where.rsplit(" ", 1)[-1] for c in rep.cases if c.node} == {"n1", "n2"}
    numbers = Numbers()
    titles = [t.title for s in npb_sections(rep.cases, tmp_path, numbers, figures=False)[:1]
              for t in s.tables]
    assert any("node n1" in t for t in titles) and any("node n2" in t for t in titles), titles
    numa = numa_section(rep.cases, tmp_path, Numbers())
    assert numa is not None
    names = [t.title for t in numa.tables]
    assert any("node n1" in t for t in names) and any("node n2" in t for t in names), names


def test_placement_reports_moves_the_report_as_it_does_for_acceptance(tmp_path, monkeypatch,
                                                                      capsys):
    """Without --output the report went to ./reports whatever PLACEMENT_REPORTS said (only
    scripts/acceptance.sh read it): a report by hand landed beside the checkout's others."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLACEMENT_REPORTS", str(tmp_path / "elsewhere"))
    assert cli.main(["report", "--run", str(FIRST), "--no-compare"]) == 0
    (written,) = (tmp_path / "elsewhere").iterdir()
    assert (written / "index.html").is_file() and not (tmp_path / "reports").exists()
    assert capsys.readouterr().out.strip() == str(written)


def test_an_empty_placement_reports_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLACEMENT_REPORTS", "")
    assert cli.main(["report", "--run", str(FIRST), "--no-compare"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PLACEMENT_REPORTS is empty" in err, err
    assert list(tmp_path.iterdir()) == []


def test_npb_times_at_the_timers_resolution_give_no_speedup():
    """NPB prints its time to 0.01 s: class S runs of 0.00 and 0.01 s are the timer's
    rounding, so their cell says so and no speedup or scaling point is made of them."""
    from placement.judgement import summarize
    from placement.report.tables import NpbGroup, npb_tables, scaling, scaling_table

    times = {("CG", "none", 1): [0.02, 0.02, 0.02], ("CG", "none", 2): [0.01, 0.00, 0.01],
             ("CG", "scatter", 1): [0.01, 0.01, 0.01], ("CG", "scatter", 2): [0.0, 0.0, 0.0],
             ("EP", "none", 1): [1.0, 1.02, 0.98], ("EP", "none", 2): [0.5, 0.51, 0.49],
             ("EP", "scatter", 1): [0.5, 0.5, 0.5], ("EP", "scatter", 2): [0.25, 0.26, 0.24]}
    g = NpbGroup("sys:part+gnu", "S", {k: summarize(v) for k, v in times.items()}, [1, 2],
                 ["CG", "EP"], ["none", "scatter"])
    numbers = Numbers()
    (t,) = npb_tables([g], numbers)
    rows = {(r[0] or "speedup", r[1]): r[2:] for r in t.rows}
    assert rows[("CG", "none")][1] == rows[("CG", "scatter")][0] == "≤ 0.01"
    assert rows[("CG", "scatter")][1] == "≤ 0.01"
    assert not any(c.startswith("0 ±") or c == "0" for r in t.rows for c in r)
    speedups = [r[2:] for r in t.rows if r[1].startswith("speedup")]
    assert speedups[0] == ["—", "—"]                          # CG: no speedup, said so
    assert [c.split(" ±")[0] for c in speedups[1]] == ["2.00", "2.00"]      # EP: measured
    assert "timer resolution" in t.note and "≤ 0.01" in t.note
    assert not [r for r in numbers.rows if r[2].startswith("CG speedup")]
    assert [r for r in numbers.rows if r[2] == "EP speedup scatter" and r[4] == "speedup"]

    points = scaling(g)
    assert ("CG", "scatter") not in points                    # its one-thread time is 0.01
    assert points[("CG", "none")] == [(1, 1.0, 1.0)]          # 2 threads: 0.0067 s, no point
    st = scaling_table(g, points, Numbers())
    cg = [r for r in st.rows if r[0] == "CG"]
    assert [r[4] for r in cg] == ["—", "—"]                   # speedup, efficiency
    assert "timer resolution" in st.note


def test_the_summary_table_marks_what_fails_the_run_by_finding():
    """A NODES line saying the nodes are alike fails nothing; HUNG and CONFIRMED lines do."""
    from placement.acceptance.record import Finding
    from placement.report.lead import fails_run
    assert not fails_run(Finding("NODES", "NODES c:b: 4 nodes alike on 8 values", "c:b",
                                 data={"what": "alike"}))
    assert fails_run(Finding("NODES", "NODES c:b: n3 slower ...", "c:b", "n3",
                             data={"what": "odd"}))
    assert fails_run(Finding("HUNG", "HUNG ..."))
    assert fails_run(Finding("CONFIRMED", "CONFIRMED NODES c:b n3: ..."))
    assert not fails_run(Finding("UNCONFIRMED", "UNCONFIRMED ..."))


def test_a_partitions_numa_matrices_are_all_tables_and_a_dozen_figures(tmp_path):
    """A matrix per node: every one a table, at most a dozen drawn, the cases that need a
    look first, and the section says how many were drawn (a heatmap per node made the
    report's time grow by half a second a node)."""
    from placement.report import plots
    from placement.report.sections import numa_section

    if not plots.available():
        pytest.skip("matplotlib is not installed: no figures to count")
    nodes = [f"n{i}" for i in range(1, 21)]
    rep = _on_nodes(nodes, tmp_path)
    look = {c.key for c in rep.cases if c.node == "n17"}
    numa = numa_section(rep.cases, tmp_path, Numbers(), look=look)
    assert numa is not None
    assert len(numa.tables) >= len(nodes)
    assert len(numa.images) == plots.MAX_ITEM_FIGURES
    assert any("n17" in name for name, _ in numa.images), numa.images
    assert numa.undrawn == len(numa.tables) - plots.MAX_ITEM_FIGURES
    assert f"Figures for {plots.MAX_ITEM_FIGURES} of the {len(numa.tables)} copy matrices" \
        in numa.after
