"""One outcome, judged once: for every stored run report (one node and partitions), the
verdict record's outcome, the summary's last line, the report's banner and the exit status
agree; the record is written whole and read back; the odd nodes are there for a script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from placement import acceptance, cli
from placement.acceptance import record
from placement.judgement import reading
from placement.report import assembly

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "tests" / "fixtures" / "peers"
#: the one-node run reports, and the first session of the newest set of each partition
#: condition (unchanged, a node capped at 70% and at 50%, 1 PU of 2, two odd nodes)
RUNS = sorted((ROOT / "tests" / "fixtures" / "runreports").glob("*.json")) + [
    sorted(sorted(PEERS.glob(f"{cond}-*"))[-1].glob("run-*.json"))[0]
    for cond in ("unchanged", "capped70", "capped50", "pu1of2", "twoodd")]


def _system(path: Path) -> str:
    return sorted({c.system for c in reading.run_report.load(path).cases})[0]


@pytest.mark.parametrize("path", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_record_the_line_the_banner_and_the_exit_status_agree(path, tmp_path,
                                                                  monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    system = _system(path)
    rec = acceptance.verdict_record([path], system, "quick")
    lines, status = acceptance.summary([path], system, "quick", None, 10.0, False, [])
    assert lines == rec.lines and lines[-1] == rec.line
    assert status == rec.exit_status == record.OUTCOMES[rec.outcome]
    assert rec.line.startswith(f"ACCEPTANCE {system} quick: {rec.outcome} ")
    # written whole, read back the same
    again = record.read(record.write(rec, tmp_path / "verdict-x.json"))
    assert again == rec
    # the report, given no record, judges the run with the same function: the same word
    assert cli.main(["report", "--run", str(path), "--no-compare",
                     "--output", str(tmp_path / "o")]) == 0
    out = capsys.readouterr()
    (folder,) = (tmp_path / "o").iterdir()
    banner = next(ln for ln in (folder / "README.md").read_text().splitlines()
                  if ln.startswith("**"))
    assert banner.startswith(f"**{rec.outcome}**"), banner
    assert out.err.strip().splitlines()[-1].split(": ", 1)[1].split()[0] == rec.outcome
    assert not record.path_for(path).exists(), "a record written beside a stored fixture"
    # a run of `make run` (reframe --mode quick, then the report): the acceptance run's line
    if "--mode quick" in str(reading.run_report.load(path).session.get("cmdline", "")):
        assert out.err.strip().splitlines()[-1] == rec.line


def test_make_run_ends_with_the_reports_line():
    """`make run` runs the quick mode, then `placement report --latest`, whose last line
    (standard error) is the run's ACCEPTANCE line: the recipe's last command is the report,
    and the run's failure is kept in its exit status."""
    text = (ROOT / "Makefile").read_text()
    recipe = text.split("\nrun: ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    commands = [c.strip().rstrip("\\").strip() for c in recipe]
    assert "--mode quick -r" in commands[0], commands
    assert commands[-2].startswith("$(VENV)/bin/placement report --latest "), commands
    assert commands[-1] == "exit $$rc", commands


def test_a_partition_run_names_its_odd_nodes_with_the_command_that_drains_each(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    capped = sorted(sorted(PEERS.glob("capped50-*"))[-1].glob("run-*.json"))[0]
    rec = acceptance.verdict_record([capped], _system(capped), "quick")
    assert rec.outcome == "FAIL" and [o.node for o in rec.odd_nodes] == ["n3"]
    (odd,) = rec.odd_nodes
    assert odd.partition.endswith(":batch") and "slower than its 3 peers" in odd.why
    assert odd.drain.startswith("scontrol update NodeName=n3 State=DRAIN Reason='")
    assert "\n" not in odd.drain
    data = json.loads(rec.as_json())
    assert data["schema"] == record.SCHEMA and data["odd_nodes"][0]["node"] == "n3"
    assert any(f["kind"] == "NODES" for f in data["findings"])


def test_the_report_reads_the_record_beside_a_run_of_the_results_folder(tmp_path,
                                                                        monkeypatch, capsys):
    """A run of the results folder gets its record written by the report that judged it,
    and read, not judged again, by the next report."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path / "results"))
    runs = tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    run = runs / "run-report-1.json"
    run.write_bytes(RUNS[0].read_bytes())
    assert cli.main(["report", "--latest", "--no-compare", "--output", str(tmp_path / "o")]) == 0
    rec = record.read(record.path_for(run))
    assert reading.run_report.latest(runs) == run, "a record taken for a run report"
    assert "placement: skipped" not in capsys.readouterr().err
    # a record that says otherwise is what the next report shows: it is the answer
    changed = record.VerdictRecord(**{**rec.__dict__, "outcome": "INCOMPLETE",
                                      "exit_status": 4})
    record.write(changed, record.path_for(run))
    capsys.readouterr()
    assert cli.main(["report", "--latest", "--no-compare", "--output", str(tmp_path / "p")]) == 0
    (folder,) = (tmp_path / "p").iterdir()
    assert "**INCOMPLETE**" in (folder / "README.md").read_text()


@pytest.mark.parametrize("text, says", [
    ("{ not json", "not a verdict record (unreadable JSON"),
    (json.dumps({"schema": 99}), "not a verdict record of schema 1 (schema 99)"),
    (json.dumps({"schema": 1, "system": "x"}), "not a verdict record ("),
])
def test_a_record_that_is_none_is_one_line(tmp_path, text, says):
    from placement.util import PlacementError
    path = tmp_path / "verdict-r.json"
    path.write_text(text)
    with pytest.raises(PlacementError) as err:
        record.read(path)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_answer_for_pools_nothing_across_systems(tmp_path):
    """Runs of several systems have several answers: the report judges none of them."""
    paths = RUNS[:1]
    reports = [reading.run_report.load(p) for p in paths]
    two = [reading.run_report.RunReport(r.path, r.session, r.cases) for r in reports]
    for c in two[0].cases[:1]:
        c.system = "other"
    assert assembly.answer_for(paths, two, None) is None


def test_a_failed_partition_run_is_recorded_as_a_baseline_only_with_force(tmp_path,
                                                                          monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    capped = sorted(sorted(PEERS.glob("capped50-*"))[-1].glob("run-*.json"))[0]
    run = tmp_path / "run-report-1.json"
    run.write_bytes(capped.read_bytes())
    system = _system(run)
    record.write(acceptance.verdict_record([run], system, "quick"), record.path_for(run))
    args = ["baseline", "record", "--system", system, "--from", str(run),
            "--baselines", str(tmp_path / "b.yaml")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "says FAIL and names odd node(s) n3" in err[0] and "--force" in err[0]
    assert not (tmp_path / "b.yaml").exists()
    assert cli.main(args + ["--force"]) == 0
    assert (tmp_path / "b.yaml").is_file()


def test_a_long_node_name_shortens_file_names_and_the_report_is_written(tmp_path, monkeypatch,
                                                                        capsys):
    import re
    from placement.report.tables import SLUG_MAX, slug
    long = "node-" + "x" * 190
    assert len(slug(long + "1")) == SLUG_MAX and slug(long + "1") != slug(long + "2")
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    capped = sorted(sorted(PEERS.glob("capped50-*"))[-1].glob("run-*.json"))[0]
    text = re.sub(r"\bn([1-4])\b", lambda m: f"{long}{m.group(1)}", capped.read_text())
    run = tmp_path / "run-report-long.json"
    run.write_text(text)
    assert cli.main(["report", "--run", str(run), "--no-compare",
                     "--output", str(tmp_path / "o")]) == 0
    (folder,) = (tmp_path / "o").iterdir()
    assert all(len(p.name) < 200 for p in folder.rglob("*"))
    assert f"{long}3" in (folder / "README.md").read_text()


def test_a_run_report_without_unique_names_counts_every_case(tmp_path, monkeypatch):
    """Without ReFrame's unique_name, a later passing case does not hide earlier failures."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    data = json.loads(RUNS[0].read_text())
    cases = [tc for tc in data["runs"][0]["testcases"] if not tc.get("fixture")][:4]
    for i, tc in enumerate(cases):
        tc.pop("unique_name", None)
        tc["display_name"] = f"{tc['name']} %case={i}"
        if i < 3:
            tc.update(result="fail", fail_phase="sanity", fail_reason="sanity failed")
    data["runs"][0]["testcases"] = cases
    run = tmp_path / "run-report-x.json"
    run.write_text(json.dumps(data))
    rec = acceptance.verdict_record([run], _system(run), "quick")
    assert rec.outcome == "FAIL" and rec.counts["failed"] == 3 and rec.counts["passed"] == 1
