"""One outcome, judged once: for every stored run report (one node and partitions), the
verdict record's outcome, the summary's last line, the report's banner and the exit status
agree; the record is written whole and read back; the odd nodes are there for a script."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from placement import acceptance, cli
from placement.acceptance import record
from placement.judgement import reading
from placement.report import assembly
from placement.util import PlacementError

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "tests" / "fixtures" / "peers"
#: one set of each partition condition (unchanged, a node capped at 70% and at 50%, 1 PU
#: of 2, two odd nodes), named, each recorded on a quiet host: a set recorded later on a
#: loaded host has runs the host's own load line fails, which would change what these read
SETS = {"unchanged": "unchanged-20261203T1718", "capped70": "capped70-20261203T1725",
        "capped50": "capped50-20261203T1810", "pu1of2": "pu1of2-20261203T1817",
        "twoodd": "twoodd-20261203T1731"}


def first_session(cond: str) -> Path:
    """The first recorded session of the named set of ``cond``."""
    return sorted((PEERS / SETS[cond]).glob("run-*.json"))[0]


#: the one-node run reports, and the first session of each condition's set
RUNS = sorted((ROOT / "tests" / "fixtures" / "runreports").glob("*.json")) + [
    first_session(cond) for cond in SETS]


#: the partition runs of :data:`RUNS`
PARTITION_RUNS = RUNS[-5:]


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
    if not rec.confirmation.get("ran"):     # the line's counts, the build fixtures included
        assert banner.startswith(f"**{rec.outcome}**: {rec.counts['passed']} case(s) passed, "
                                 f"{rec.counts['failed']} failed"), banner
    assert out.err.strip().splitlines()[-1].split(": ", 1)[1].split()[0] == rec.outcome
    assert not record.path_for(path).exists(), "a record written beside a stored fixture"
    # with --exit-status (what `make run` gives) the report exits as the run does
    assert cli.main(["report", "--run", str(path), "--no-compare", "--exit-status",
                     "--output", str(tmp_path / "o2")]) == rec.exit_status
    # a run of `make run` (reframe --mode quick, then the report): the acceptance run's line
    if "--mode quick" in str(reading.run_report.load(path).session.get("cmdline", "")):
        assert out.err.strip().splitlines()[-1] == rec.line


def test_a_run_with_no_case_reads_the_same_from_the_summary_and_the_report(tmp_path, capsys):
    """A report holding no case (ReFrame ran nothing) is judged as the summary judges it,
    under the system a run without cases is judged as: FAIL, exit 1, from both. The
    report answered NOTHING RAN and exit 4 where the summary said FAIL and 1."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"session_info": {}, "runs": []}))
    assert cli.main(["acceptance", "summary", str(path)]) == 1
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("ACCEPTANCE unknown acceptance: FAIL "), line
    record.path_for(path).unlink()
    assert cli.main(["report", "--run", str(path), "--no-compare", "--exit-status",
                     "--output", str(tmp_path / "o")]) == 1
    (folder,) = (tmp_path / "o").iterdir()
    assert "**FAIL**" in (folder / "README.md").read_text()
    assert capsys.readouterr().err.strip().splitlines()[-1].split(": ", 1)[1].startswith("FAIL ")


def test_a_record_is_its_runs_by_session_not_by_file_name(tmp_path, monkeypatch, capsys):
    """A report of another ReFrame session, given the name of a judged run's report, is not
    that run: ``--record`` is refused, and a record left beside it is not read (the run is
    judged afresh). By name alone, a run where every case was skipped read the record's
    PASS, exit 0."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    first, other = tmp_path / "a", tmp_path / "b"
    first.mkdir(), other.mkdir()
    src = ROOT / "tests/fixtures/runreports/generic-first-run.json"
    (first / "run-x.json").write_text(src.read_text())
    data = json.loads(src.read_text())
    data["session_info"]["uuid"] = "0badc0de-0000-4000-8000-000000000000"
    for tc in data["runs"][0]["testcases"]:
        tc["result"] = "skip"
    (other / "run-x.json").write_text(json.dumps(data))
    assert cli.main(["acceptance", "summary", str(first / "run-x.json")]) == 0
    rec = record.path_for(first / "run-x.json")
    assert record.read(rec).sessions == [reading.run_report.load(first / "run-x.json").uuid]
    capsys.readouterr()
    assert cli.main(["report", "--run", str(other / "run-x.json"), "--record", str(rec),
                     "--no-compare", "--exit-status", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "the verdict record of another run" in err and "0badc0de-0000" in err, err
    (other / rec.name).write_text(rec.read_text())
    assert cli.main(["report", "--run", str(other / "run-x.json"), "--no-compare",
                     "--exit-status", "--output", str(tmp_path / "o2")]) == 1


def test_make_run_ends_with_the_reports_line():
    """`make run` runs the quick mode, then `placement report --latest`, whose last line
    (standard error) is the run's ACCEPTANCE line: the recipe's last command is the report,
    and the run's failure is kept in its exit status."""
    text = (ROOT / "Makefile").read_text()
    recipe = text.split("\nrun: ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    commands = [c.strip().rstrip("\\").strip() for c in recipe]
    assert "--mode quick -r" in commands[0], commands
    assert commands[-2].startswith("$(VENV)/bin/placement report --latest "), commands
    assert "--exit-status" in commands[-2], commands
    assert commands[-1] == "exit $$rc", commands


def test_a_partition_run_names_its_odd_nodes_with_the_command_that_drains_each(tmp_path,
                                                                              monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    capped = first_session("capped50")
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
    (json.dumps({"schema": 99}), "not a verdict record of schema 1, 2 or 3 (schema 99)"),
    (json.dumps({"schema": 1, "system": "x"}), "not a verdict record ("),
])
def test_a_record_that_is_none_is_one_line(tmp_path, text, says):
    from placement.util import PlacementError
    path = tmp_path / "verdict-r.json"
    path.write_text(text)
    with pytest.raises(PlacementError) as err:
        record.read(path)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_answer_for_judges_each_system_across_systems(tmp_path):
    """Runs of several systems have several answers: the report judges each system's runs
    as its summary would and answers with the worst (it judged none, and a pooled PASS
    banner hid a system's FAIL)."""
    paths = RUNS[:1]
    reports = [reading.run_report.load(p) for p in paths]
    two = [reading.run_report.RunReport(r.path, r.session, r.cases) for r in reports]
    for c in two[0].cases[:1]:
        c.system = "other"
    pooled = assembly.answer_for(paths, two, None)
    assert pooled.system == "generic+other" and pooled.line.startswith("NOTE runs of 2 systems")
    assert len([f for f in pooled.findings if f.kind == "ACCEPTANCE"]) == 2


def test_a_failed_partition_run_is_recorded_as_a_baseline_only_with_force(tmp_path,
                                                                          monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    capped = first_session("capped50")
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
    # given before a run that passed, as --add's sources are: each --from is its own run
    ok = tmp_path / "run-report-2.json"
    ok.write_bytes(first_session("unchanged").read_bytes())
    record.write(acceptance.verdict_record([ok], system, "quick"), record.path_for(ok))
    assert cli.main(args + ["--from", str(ok)]) == 2
    assert f"{run}: its verdict record says FAIL" in capsys.readouterr().err
    assert not (tmp_path / "b.yaml").exists()
    assert cli.main(args + ["--force"]) == 0
    assert (tmp_path / "b.yaml").is_file()


def test_a_long_node_name_shortens_file_names_and_the_report_is_written(tmp_path, monkeypatch,
                                                                        capsys):
    from placement.report.tables import SLUG_MAX, slug
    long = "node-" + "x" * 190
    assert len(slug(long + "1")) == SLUG_MAX and slug(long + "1") != slug(long + "2")
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    capped = first_session("capped50")
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


def _count_of(rec: record.VerdictRecord, where: str = "") -> str:
    from placement.acceptance import peer_lines
    said = rec.nodes["partitions"][where] if where else \
        {k: v for k, v in rec.nodes.items() if k != "partitions"}
    return peer_lines.NodeCount(**said).text()


def _report_of(rec: record.VerdictRecord, run: Path, tmp_path: Path) -> str:
    """The report's README.md of ``run``, given its record."""
    given = record.write(rec, tmp_path / "verdict-given.json")
    assert cli.main(["report", "--run", str(run), "--no-compare", "--record", str(given),
                     "--output", str(tmp_path / "o")]) == 0
    (folder,) = (tmp_path / "o").iterdir()
    return (folder / "README.md").read_text()


@pytest.mark.parametrize("path", PARTITION_RUNS, ids=lambda p: p.parent.name)
def test_a_partition_run_opens_with_its_count_and_the_line_record_and_report_agree(
        path, tmp_path, monkeypatch):
    """The count a site reads first (``4 nodes judged: 3 alike, 1 odd: n3``): the summary's
    first line, the record's ``nodes`` and the report's partition page say the same."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    system = _system(path)
    rec = acceptance.verdict_record([path], system, "quick")
    nodes = rec.nodes
    assert rec.lines[0] == f"COUNT {system}: {_count_of(rec)}"
    assert nodes["judged"] == 4 and nodes["alike"] == 4 - len(nodes["odd"])
    assert nodes["odd"] == [o.node for o in rec.odd_nodes] and nodes["not_judged"] == []
    assert rec.lines[0].startswith(f"COUNT {system}: 4 nodes judged: {nodes['alike']} alike, "
                                   f"{len(nodes['odd'])} odd")
    (where,) = nodes["partitions"]
    readme = _report_of(rec, path, tmp_path)
    assert f"**{_count_of(rec, where)}.**" in readme
    assert _count_of(rec, where) == _count_of(rec)


def test_a_node_with_no_value_is_counted_not_judged(tmp_path, monkeypatch):
    """A node whose cases measured nothing (failed before their values) is known by its
    fingerprint alone: counted, as not judged, in the line, the record and the report."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    pu = PARTITION_RUNS[3]
    assert pu.parent.name.startswith("pu1of2")
    data = json.loads(pu.read_text())
    for run_ in data["runs"]:
        for tc in run_["testcases"]:
            if tc.get("node") == "n4":
                tc.update(result="fail", fail_phase="sanity", fail_reason="no output")
    run = tmp_path / "run-report-n4.json"
    run.write_text(json.dumps(data))
    system = _system(run)
    rec = acceptance.verdict_record([run], system, "quick")
    assert rec.nodes["not_judged"] == ["n4"] and rec.nodes["judged"] == 3, rec.nodes
    assert rec.lines[0] == (f"COUNT {system}: 3 nodes judged: 2 alike, 1 odd: n2, "
                            "1 not judged: n4"), rec.lines[0]
    (where,) = rec.nodes["partitions"]
    assert f"**{_count_of(rec, where)}.**" in _report_of(rec, run, tmp_path)


def test_a_record_of_schema_1_is_read_with_no_count(tmp_path):
    """Records written before the count are read as they are; the report counts the nodes
    with the same function then."""
    rec = acceptance.verdict_record([RUNS[0]], _system(RUNS[0]), "quick")
    data = json.loads(rec.as_json())
    data["schema"] = 1
    del data["nodes"]
    path = tmp_path / "verdict-old.json"
    path.write_text(json.dumps(data))
    old = record.read(path)
    assert old.schema == 1 and old.nodes == {} and old.outcome == rec.outcome


@pytest.mark.parametrize("path", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_line_is_a_finding_made_with_its_data(path, tmp_path, monkeypatch):
    """One finding per printed line, in order, its kind and numbers given where the line
    was made: the odd nodes, the count and the outcome are the record's own."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    rec = acceptance.verdict_record([path], _system(path), "quick")
    assert [f.line for f in rec.findings] == rec.lines
    assert all(f.kind in record.KINDS for f in rec.findings)
    last = rec.findings[-1]
    assert last.kind == "ACCEPTANCE" and last.data["outcome"] == rec.outcome
    assert last.data["failed"] == rec.counts["failed"]
    odd = [f.node for f in rec.findings if f.kind == "NODES" and f.data["what"] in
           ("odd", "topology")]
    odd += [n for f in rec.findings if f.kind == "NODES" and f.data["what"] == "no majority"
            for n in f.data["named"]]
    assert sorted(set(odd)) == sorted(rec.nodes.get("odd", []))
    for f in rec.findings:
        if f.kind == "NODES" and f.data["what"] == "odd":
            assert f"on {f.data['called']} of {f.data['judged']} values" in f.line
        if f.kind == "FAIL":
            assert f.line.startswith(f"FAIL {f.data['case']} @{f.data['sysenv']} [")
        if f.kind == "SKIP":
            assert f.line == f"SKIP {f.data['count']} case(s): {f.data['reason']}"


def test_a_record_of_schema_1_reads_its_findings_in_todays_shape(tmp_path):
    """Schema 1 appended each regressed value's copy after the lines and kept no data for an
    UNCONFIRMED line: read, each regression is in its line's place and the lead finds what
    the confirmation did not show again."""
    from placement.report import lead
    regressed = "regression vs baseline sessions: Stream @generic:default+gnu copy_bw slower"
    case = ("UNCONFIRMED Pingpong %size=8 @generic:default+gnu [first session: performance: "
            "lat=0.9 us] passed its confirmation session: a state of the node, not a lasting "
            "change")
    value = ("UNCONFIRMED Stream %t=2 @generic:default+gnu triad_bw [first session: regressed] "
             "its confirmation session: unchanged")
    accept = "ACCEPTANCE generic quick: FAIL 3 passed, 1 failed (1 perf regressions) report=x"
    lines = [regressed, case, value, accept]
    old = {"schema": 1, "system": "generic", "mode": "quick", "outcome": "FAIL",
           "exit_status": 1, "reports": ["x"], "counts": {}, "lines": lines,
           "confirmation": {"ran": True},
           "findings": [{"kind": "NOTE", "line": regressed},
                        {"kind": "UNCONFIRMED", "line": case},
                        {"kind": "UNCONFIRMED", "line": value},
                        {"kind": "ACCEPTANCE", "line": accept},
                        {"kind": "REGRESSION", "line": regressed, "partition": "generic:default",
                         "data": {"case": "Stream", "var": "copy_bw"}},
                        {"kind": "REGRESSION", "line": "regression vs reference: P @g+e ...",
                         "data": {"var": "reference"}}]}
    path = tmp_path / "verdict-old.json"
    path.write_text(json.dumps(old))
    rec = record.read(path)
    assert [f.kind for f in rec.findings] == ["REGRESSION", "UNCONFIRMED", "UNCONFIRMED",
                                              "ACCEPTANCE"]
    assert [f.line for f in rec.findings] == lines
    assert rec.findings[0].data["var"] == "copy_bw"
    assert lead.confirmation(rec, "Pingpong %size=8", "generic:default+gnu") == "not confirmed"
    assert lead.confirmation(rec, "Stream %t=2", "generic:default+gnu", "triad_bw") \
        == "not confirmed"
    assert lead.confirmation(rec, "Stream %t=2", "generic:default+gnu", "copy_bw") \
        == "confirmed"


#: a number as a line and the report write it: a sign, digits, a fraction, a percent
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?%?")


def _without_summary_table(readme: str) -> list[str]:
    """The report's Markdown lines, less the acceptance summary's table (which prints the
    record's lines as they are: a number there is no number the report took)."""
    out, skip = [], False
    for ln in readme.splitlines():
        if ln == "**The acceptance summary**":
            skip = True
        elif skip and not ln.startswith("|") and ln.strip() and not ln.startswith("NODE, "):
            skip = False
        if not skip:
            out.append(ln)
    return out


def _shown(f: record.Finding) -> tuple[str, str] | None:
    """What of a finding's line the report shows in words of its own, and the Markdown
    line that shows it (found by these words); None for a finding it shows only as the
    summary's line."""
    if f.kind == "ACCEPTANCE" and f.data.get("verdict"):
        return f.line[f.line.index(" verdict: "):f.line.index(" undecided of ") + 20], \
            "; verdict"
    if f.kind == "UNDECIDED":
        return f.line, "Undecided: "
    if f.kind == "NODE":
        assert f.data["text"] in f.line
        return f.data["text"], "**NODE "
    if f.kind == "COUNT":
        return f.line, " nodes judged: "
    if f.kind in ("NODES", "NOTE") and ":" in f.partition:
        return f.line, "nodes measured in one session"
    return None


def _judged_runs(tmp_path: Path, monkeypatch) -> list[tuple[Path, str]]:
    """Every stored run report with no baseline, a loaded one, and one judged against a
    baseline of one and of four of its stored sessions: (run, baselines folder)."""
    from load_probe import with_load
    launches = sorted((ROOT / "tests" / "fixtures" / "aa-launches").glob("*.json"))
    out = [(p, str(tmp_path / "none")) for p in RUNS]
    busy = tmp_path / "run-busy.json"
    busy.write_text(json.dumps(with_load(json.loads(launches[-1].read_text()), 85.0)))
    out.append((busy, str(tmp_path / "none")))
    for n in (1, 4):
        folder = tmp_path / f"b{n}"
        monkeypatch.setenv("PLACEMENT_BASELINES", str(folder))
        froms = [a for p in launches[:n] for a in ("--from", str(p))]
        assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
        out.append((launches[-1], str(folder)))
    return out


def test_every_number_of_the_record_is_the_reports_for_the_same_finding(tmp_path,
                                                                       monkeypatch):
    """Where a line and the report both show a number (the verdict's counts, the undecided
    values and the change a baseline could call, the node's percent, the count of nodes
    and of values), the report shows the record's: for each stored run, every number of
    each such finding appears as it is in the report's own line for it."""
    checked = set()
    for i, (run, folder) in enumerate(_judged_runs(tmp_path, monkeypatch)):
        monkeypatch.setenv("PLACEMENT_BASELINES", folder)
        rec = acceptance.verdict_record([run], _system(run), "quick")
        given = record.write(rec, tmp_path / f"verdict-{i}.json")
        out = tmp_path / f"o{i}"
        assert cli.main(["report", "--run", str(run), "--no-compare", "--record", str(given),
                         "--output", str(out)]) == 0
        (where,) = out.iterdir()
        lines = _without_summary_table((where / "README.md").read_text())
        for f in rec.findings:
            shown = _shown(f)
            if shown is None:
                continue
            part, anchor = shown
            said = [ln for ln in lines if anchor in ln]
            assert said, f"{run.name}: the report shows no {f.kind} finding ({f.line})"
            numbers = NUMBER.findall(part)
            assert any(all(n in NUMBER.findall(ln) for n in numbers) for ln in said), \
                (run.name, f.line, said)
            checked.add(f.kind)
    assert checked == {"ACCEPTANCE", "UNDECIDED", "NODE", "COUNT", "NODES"}, checked


def _launches_record(tmp_path: Path, monkeypatch, sessions: int = 1):
    """The newest stored launches run judged against a baseline of its first ``sessions``
    stored runs: (run, record)."""
    launches = sorted((ROOT / "tests" / "fixtures" / "aa-launches").glob("*.json"))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "b"))
    froms = [a for p in launches[:sessions] for a in ("--from", str(p))]
    assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
    return launches[-1], acceptance.verdict_record([launches[-1]], "generic", "quick")


@pytest.mark.parametrize("sessions", [1, 4])
def test_the_record_keeps_each_values_verdict_whole(tmp_path, monkeypatch, sessions):
    """Each judged value's verdict, written and read back, is the verdict (infinities and
    tuples included), and the report's verdicts read from the record are those it would
    judge itself for a run with no confirmation session."""
    from placement.judgement import verdict
    from placement.report import verdicts
    run, rec = _launches_record(tmp_path, monkeypatch, sessions)
    values = rec.verdicts["values"]
    assert values and rec.verdicts["system"] == "generic"
    again = record.read(record.write(rec, tmp_path / "verdict-x.json"))
    assert again == rec
    for v in again.verdicts["values"]:
        back = verdict.as_data.from_data(v["data"])
        assert back.outcome == v["verdict"] and back.ratio - 1 == v["change"]
        assert verdict.as_data.to_data(back) == v["data"]
    cases = reading.run_report.load(run).cases
    own = verdicts.judgements(cases)
    read = verdicts.judgements(cases, again)
    assert [(j.entry, j.verdict) for sj in read for j in sj.judgement] == \
        [(j.entry, j.verdict) for sj in own for j in sj.judgement]
    counts = json.loads(again.as_json())["findings"][-1]["data"]["verdict"]
    assert counts["of"] == len(values)


def test_the_report_shows_the_records_verdicts_not_its_own(tmp_path, monkeypatch):
    """A value the record says regressed (a confirmation session can decide so) is
    regressed in the report's verdict table: the report reads the record, it does not
    judge the run again."""
    run, rec = _launches_record(tmp_path, monkeypatch)
    value = rec.verdicts["values"][0]
    value["verdict"] = value["data"]["outcome"] = "regressed"
    value["data"]["why"] = "as the record says"
    readme = _report_of(rec, run, tmp_path)
    table = [ln for ln in readme.splitlines() if "regressed (as the record says)" in ln]
    assert len(table) == 1 and f"| {value['var']} |" in table[0], table


LAUNCHES = sorted((ROOT / "tests" / "fixtures" / "aa-launches").glob("*.json"))
SLOWED = "MemWriteSingleCheck %scale=small"


def _slower(data: dict, name: str, factor: float = 3.0) -> dict:
    """A copy of a run report with every value of the case ``name`` ``factor`` times worse."""
    import copy
    data = copy.deepcopy(data)
    for tc in (tc for r in data["runs"] for tc in r["testcases"] if tc["display_name"] == name):
        for key, tup in (tc.get("perfvalues") or {}).items():
            var = key.rsplit(":", 1)[-1]
            higher = reading.direction.higher_is_better(var, tup[4])
            if higher is None or not isinstance(tup[0], (int, float)):
                continue
            slow = (lambda x: x / factor) if higher else (lambda x: x * factor)
            tup[0] = slow(tup[0])
            if var in (tc.get("perf_launches") or {}):
                tc["perf_launches"][var] = [slow(x) for x in tc["perf_launches"][var]]
    return data


def _three_sessions(tmp_path: Path, monkeypatch) -> None:
    """A baseline of the first three stored launches sessions."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "b"))
    froms = [a for p in LAUNCHES[:3] for a in ("--from", str(p))]
    assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0


def _regressed_record(tmp_path: Path, monkeypatch):
    """The newest stored launches run with one case three times slower, judged against a
    baseline of three other stored sessions: (run, record) with REGRESSION findings."""
    _three_sessions(tmp_path, monkeypatch)
    run = tmp_path / "run-report-slow.json"
    run.write_text(json.dumps(_slower(json.loads(LAUNCHES[-1].read_text()), SLOWED)))
    return run, acceptance.verdict_record([run], "generic", "quick")


def test_the_summary_table_marks_regression_lines_as_failing_the_run(tmp_path, monkeypatch):
    """The table's note says regressed lines fail the run: each REGRESSION line's row is
    marked as a FAIL line's is, in the lead's table and on the page."""
    import html
    from placement.report import lead
    run, rec = _regressed_record(tmp_path, monkeypatch)
    regressed = [f for f in rec.findings if f.kind == "REGRESSION"]
    assert regressed and rec.outcome == "FAIL", rec.lines
    table = lead.summary_table(rec)
    marks = dict(zip((r[0] for r in table.rows), table.row_classes))
    assert all(marks[f.line] == "bad" for f in regressed)
    assert all(marks[f.line] == "" for f in rec.findings
               if f.kind in ("ACCEPTANCE", "UNDECIDED", "NOTE"))
    _report_of(rec, run, tmp_path)
    (folder,) = (tmp_path / "o").iterdir()
    page = (folder / "index.html").read_text()
    for f in regressed:
        assert f'<tr class="bad"><td>{html.escape(f.line)}</td>' in page, f.line


def _missed_reference(data: dict, name: str) -> dict:
    """``data`` with ReFrame failing the case ``name`` on its reference."""
    for tc in (tc for r in data["runs"] for tc in r["testcases"] if tc["display_name"] == name):
        tc.update(result="fail", fail_phase="performance", fail_reason=(
            "performance error: failed to meet reference(s): mean_time=9.0 s, expected 1.0 "
            "(l=-inf, u=0.5)"))
    return data


def test_a_failure_its_confirmation_session_did_not_run_again_is_never_confirmed(
        tmp_path, monkeypatch):
    """The record names each first-session failure its confirmation session did not run
    again (a case that missed its reference, a regressed value), and the lead says so
    ("not run again"), never "confirmed"; a case that failed again is confirmed."""
    _three_sessions(tmp_path, monkeypatch)
    missed, kept = "MatmulCheck %affinity=none %scale=small", "MatmulCheck %affinity=compact %scale=small"
    first = _slower(json.loads(LAUNCHES[-1].read_text()), SLOWED)
    for name in (missed, kept):
        first = _missed_reference(first, name)
    again = _missed_reference(json.loads(LAUNCHES[-2].read_text()), kept)
    for r in again["runs"]:
        r["testcases"] = [tc for tc in r["testcases"]
                          if tc["display_name"] not in (missed, SLOWED)]
    run = tmp_path / "run-report-first.json"
    run.write_text(json.dumps(first))
    confirm = tmp_path / "run-report-confirm.json"
    confirm.write_text(json.dumps(again))
    rec = acceptance.verdict_record([run], "generic", "quick", confirm=confirm)
    regressed = [f.data for f in rec.findings if f.kind == "REGRESSION"]
    assert regressed and all(r["case"] == SLOWED for r in regressed), rec.lines
    not_run = rec.confirmation["not_run"]
    assert not_run == [{"case": missed, "sysenv": "generic+gnu", "var": ""}] + \
        [{"case": SLOWED, "sysenv": r["sysenv"], "var": r["var"]} for r in regressed], not_run
    assert rec.confirmation["missing"] == 1
    readme = _report_of(rec, run, tmp_path)
    rows = [ln.split(" | ") for ln in readme.splitlines() if ln.startswith("| ")]
    said = {r[0].lstrip("| "): r[5] for r in rows if len(r) == 7}
    assert said[f"{missed} @generic:default+gnu"] == "not run again", said
    assert said[f"{kept} @generic:default+gnu"] == "confirmed", said
    slowed = [v for k, v in said.items() if k.startswith(SLOWED.split(" %")[0])]
    assert len(slowed) == len(regressed) and set(slowed) == {"not run again"}, said


def test_a_run_the_summary_could_not_judge_is_reported_so_with_its_cause(tmp_path,
                                                                         monkeypatch):
    """The record of a run the summary could not judge (here: a baseline the store
    refuses) keeps its cause as its note; the report's banner has the record's word and
    says the run could not be judged and why, never "nothing judged"."""
    from placement.judgement import baselines
    from placement.util import PlacementError
    _three_sessions(tmp_path, monkeypatch)
    stored = tmp_path / "b" / "generic.yaml"
    stored.write_text(re.sub(r"runs: \[[0-9.e+-]+", "runs: [5.0e-324", stored.read_text(),
                             count=1))
    with pytest.raises(PlacementError) as refused:
        baselines.store.load(stored)
    run = tmp_path / "run-report-x.json"
    run.write_bytes(LAUNCHES[-1].read_bytes())
    rec = acceptance.unjudged([run], "generic", "quick", False, ["a note"], refused.value)
    from placement.acceptance.outcome import failure_cause
    # the cause as the line gives it: one line, cut at 400 characters (a long tmp path
    # under pytest-xdist makes the store's message longer)
    cause = f"the summary could not judge the run: {failure_cause(refused.value)}"
    assert rec.lines == [f"ACCEPTANCE generic quick: INCOMPLETE 17 passed, 0 failed "
                         f"report={run} (a note; {cause})"]
    assert rec.notes == ["a note", cause] and rec.exit_status == 4
    again = record.read(record.write(rec, tmp_path / "verdict-x.json"))
    assert again == rec and not again.judged
    readme = _report_of(rec, run, tmp_path)
    banner = next(ln for ln in readme.splitlines() if ln.startswith("**"))
    assert banner.startswith("**INCOMPLETE**: 17 case(s) passed, 0 failed; the run could not "
                             "be judged (a note; the summary could not judge the run: "), banner
    assert "are not a list of measured values" in banner and "nothing judged" not in banner


#: a stored partition run with two nodes named, one on the values that use every PU
TWO_ODD = sorted((PEERS / "twoodd-20261203T0835").glob("run-*.json"))[0]


def _nodes_table(readme: str) -> dict[str, list[str]]:
    """The partition page's table of nodes, each row's cells by node."""
    lines = readme.splitlines()
    at = lines.index("**Nodes, odd ones first**")
    rows = {}
    for ln in lines[at + 4:]:
        if not ln.startswith("| "):
            break
        cells = [c.strip() for c in ln.strip("|").split(" | ")]
        rows[cells[0]] = cells
    return rows


@pytest.mark.parametrize("path", PARTITION_RUNS + [TWO_ODD], ids=lambda p: p.parent.name)
def test_the_partition_page_counts_a_named_nodes_values_as_its_nodes_line(path, tmp_path,
                                                                         monkeypatch):
    """A node a NODES line names on its values: the page's ``values worse / better`` are the
    record's numbers for it, those its line says (``called of judged``); every other node's
    are the page's values called against the peers' median."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    rec = acceptance.verdict_record([path], _system(path), "quick")
    rows = _nodes_table(_report_of(rec, path, tmp_path))
    odd = [f.data | {"node": f.node, "line": f.line} for f in rec.findings
           if f.kind == "NODES" and f.data["what"] == "odd"]
    assert set(rows) >= {d["node"] for d in odd}
    for d in odd:
        assert f"on {d['called']} of {d['judged']} values" in d["line"]
        assert d["called"] == (d["worse"] if d["slower"] else d["better"])
        cell = rows[d["node"]][2]
        scope = f" of {d['judged']} {d['scope']}" if d["scope"] else ""
        assert cell == f"{d['worse']} / {d['better']}{scope}", (d["line"], cell)
    # a node of 1 PU of 2 is named by its topology (a kind of its own); two odd nodes of
    # four as the slower half
    if path.parent.name.startswith("capped"):
        assert odd, rec.lines


def _edited(path: Path, tmp_path: Path, keep=lambda tc: True, launches=None) -> Path:
    """A stored partition run with the cases ``keep`` rejects dropped and each kept case's
    launches ``launches(tc, runs)`` (unchanged when None), written under ``tmp_path``."""
    data = json.loads(path.read_text())
    for run_ in data["runs"]:
        run_["testcases"] = [tc for tc in run_["testcases"] if keep(tc)]
        for tc in run_["testcases"]:
            if launches is not None:
                tc["perf_launches"] = {v: launches(tc, r)
                                       for v, r in (tc.get("perf_launches") or {}).items()}
    out = tmp_path / f"run-report-{path.parent.name}.json"
    out.write_text(json.dumps(data))
    return out


def test_a_node_with_no_usable_value_is_named_and_the_run_incomplete(tmp_path, monkeypatch):
    """The unchanged set's first session with n4's values all NaN: n4 has its own line, is
    counted not judged in the line, the record and the report, and the run is INCOMPLETE,
    never a PASS."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    run = _edited(PARTITION_RUNS[0], tmp_path, launches=lambda tc, r:
                  [math.nan] * len(r) if tc.get("node") == "n4" else r)
    system = _system(run)
    rec = acceptance.verdict_record([run], system, "quick")
    assert rec.outcome == "INCOMPLETE" and rec.exit_status == 4, rec.line
    assert rec.nodes["not_judged"] == ["n4"] and rec.nodes["judged"] == 3, rec.nodes
    assert rec.lines[0] == f"COUNT {system}: 3 nodes judged: 3 alike, 0 odd, 1 not judged: n4"
    (left,) = [f for f in rec.findings if f.kind == "NODES" and f.data["what"] == "not judged"]
    assert left.node == "n4" and left.data["usable"] == 0 and left.line.endswith(
        f"n4 not judged: 0 usable values of {left.data['peers_had']:g} its peers had")
    assert any(g.startswith("n4 of ") for g in rec.gaps), rec.gaps
    (where,) = rec.nodes["partitions"]
    assert f"**{_count_of(rec, where)}.**" in _report_of(rec, run, tmp_path)


def test_a_node_with_only_its_topology_case_left_is_not_judged(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    run = _edited(PARTITION_RUNS[0], tmp_path, keep=lambda tc: tc.get("node") != "n4"
                  or bool(tc.get("fingerprint")))
    rec = acceptance.verdict_record([run], _system(run), "quick")
    assert rec.nodes["not_judged"] == ["n4"] and rec.outcome == "INCOMPLETE", rec.lines


def test_two_nodes_ten_times_apart_are_undecided_and_incomplete(tmp_path, monkeypatch):
    """n1 and n2 of the unchanged session, n2 ten times slower: which is odd cannot be told;
    a line says they differ, the count holds them undecided, the run is INCOMPLETE."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    run = _edited(PARTITION_RUNS[0], tmp_path, keep=lambda tc: tc.get("node") in ("n1", "n2"))
    data = json.loads(run.read_text())
    for tc in data["runs"][0]["testcases"]:
        if tc.get("node") == "n2":
            for var, runs in (tc.get("perf_launches") or {}).items():
                unit = (tc["perfvalues"].get(f"{tc['system']}:{tc['partition']}:{var}")
                        or [None] * 5)[4]
                tc["perf_launches"][var] = [x / 10 if unit and unit.endswith("/s") else x * 10
                                            for x in runs]
    run.write_text(json.dumps(data))
    system = _system(run)
    rec = acceptance.verdict_record([run], system, "quick")
    assert rec.outcome == "INCOMPLETE" and rec.exit_status == 4, rec.line
    assert rec.nodes["undecided"] == ["n1", "n2"] and rec.nodes["alike"] == 0, rec.nodes
    assert rec.lines[0] == (f"COUNT {system}: 2 nodes judged: 0 alike, 0 odd, 2 undecided: "
                            "n1, n2")
    (pair,) = [f for f in rec.findings if f.kind == "NODES"]
    assert pair.data["what"] == "pair" and "n1 and n2 differ: n2 -90% against n1" in pair.line


def test_two_alike_nodes_pass_as_before(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    run = _edited(PARTITION_RUNS[0], tmp_path, keep=lambda tc: tc.get("node") in ("n1", "n2"))
    rec = acceptance.verdict_record([run], _system(run), "quick")
    assert rec.outcome == "PASS" and rec.nodes["alike"] == 2, (rec.lines, rec.nodes)
    assert any(ln.startswith("NOTE ") and "within 10% of each other" in ln for ln in rec.lines)


def test_one_odd_node_of_three_names_it_with_no_false_no_majority(tmp_path, monkeypatch):
    """The capped-at-70% set's first session without n4: n3 named slower than its 2 peers,
    and no line claims that no group holds more than half of the 3 nodes."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    run = _edited(PARTITION_RUNS[1], tmp_path, keep=lambda tc: tc.get("node") != "n4")
    system = _system(run)
    rec = acceptance.verdict_record([run], system, "quick")
    assert rec.outcome == "FAIL" and [o.node for o in rec.odd_nodes] == ["n3"], rec.lines
    assert not any("no group of more than half" in ln for ln in rec.lines), rec.lines
    assert any(" n3 slower than its 2 peers " in ln for ln in rec.lines), rec.lines
    assert rec.lines[0] == f"COUNT {system}: 3 nodes judged: 2 alike, 1 odd: n3"


def _base(tc: dict) -> str:
    """A case's name with its node left out (``--distribute``'s ``.part`` and ``.nid``)."""
    return re.sub(r" %\.(part|nid)=\S+", "", tc["display_name"])


def _one_node_each(path: Path, shared=lambda base: False):
    """Which cases of a stored partition run a run without ``--distribute`` keeps: each case
    on one node (``n1`` .. ``n4`` in turn), unless ``shared(its name)``."""
    data = json.loads(path.read_text())
    bases = sorted({_base(tc) for tc in data["runs"][0]["testcases"] if tc.get("node")})
    on = {b: f"n{i % 4 + 1}" for i, b in enumerate(bases)}
    return lambda tc: (not tc.get("node") or shared(_base(tc))
                       or tc["node"] == on[_base(tc)])


@pytest.mark.parametrize("path", [PARTITION_RUNS[0], PARTITION_RUNS[2]],
                         ids=lambda p: p.parent.name)
def test_a_run_with_no_value_on_two_nodes_gets_a_note_and_keeps_its_outcome(
        path, tmp_path, monkeypatch):
    """The unchanged session, and the one with n3 capped at 50 %, each case left on one
    node: no COUNT line, no NODES line, one NOTE, no count in the record, and the outcome
    the same run has with no node known at all."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    run = _edited(path, tmp_path, keep=_one_node_each(path))
    system = _system(run)
    rec = acceptance.verdict_record([run], system, "quick")
    (where,) = {f.partition for f in rec.findings if f.kind == "NOTE" and ":" in f.partition}
    notes = [f for f in rec.findings if f.partition == where and f.kind in ("NOTE", "NODES")]
    assert [f.line for f in notes] == [
        f"NOTE {where}: no value was measured on two nodes (a run without --distribute): "
        "no peer verdict"], rec.lines
    assert notes[0].data == {"what": "no value on two nodes", "nodes": 4}
    assert not any(ln.startswith("COUNT ") for ln in rec.lines) and rec.nodes == {}
    assert not rec.odd_nodes and not rec.gaps, rec.lines
    assert "nodes against their peers" not in _report_of(rec, run, tmp_path)
    data = json.loads(run.read_text())
    for tc in data["runs"][0]["testcases"]:
        tc.pop("node", None)
        tc["display_name"] = _base(tc)
    unknown = tmp_path / "nodes-unknown" / run.name
    unknown.parent.mkdir()
    unknown.write_text(json.dumps(data))
    plain = acceptance.verdict_record([unknown], system, "quick")
    assert (rec.outcome, rec.exit_status) == (plain.outcome, plain.exit_status) == ("PASS", 0)
    assert rec.lines[-1] == plain.lines[-1].replace(str(unknown), str(run))


def test_a_run_with_some_values_on_one_node_is_judged_on_the_shared_ones(tmp_path,
                                                                         monkeypatch):
    """The capped-at-70% session with the memory cases on every node and the rest on one
    node each: the lines, the count and the outcome of the memory cases alone."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    path = PARTITION_RUNS[1]
    memory = lambda base: base.startswith("NodeMem")        # noqa: E731
    mixed = _edited(path, tmp_path, keep=_one_node_each(path, memory))
    (tmp_path / "alone").mkdir()
    alone = _edited(path, tmp_path / "alone",
                    keep=lambda tc: not tc.get("node") or memory(_base(tc)))
    system = _system(mixed)
    rec, only = (acceptance.verdict_record([r], system, "quick") for r in (mixed, alone))
    peer = lambda r: [ln for ln in r.lines if ln.startswith(("COUNT", "NODES"))]  # noqa: E731
    assert peer(rec) == peer(only) and peer(rec), rec.lines
    assert f"NODES {system}:batch: 4 nodes alike on 8 values (no node stands apart)" \
        in peer(rec), rec.lines
    assert rec.nodes == only.nodes and rec.outcome == only.outcome


def test_a_record_whose_sessions_are_not_uuids_is_refused(tmp_path):
    """``sessions`` as text would match a session by substring (``in`` a string)."""
    rec = acceptance.verdict_record([RUNS[0]], _system(RUNS[0]), "quick")
    path = record.write(rec, tmp_path / "verdict-x.json")
    data = json.loads(path.read_text())
    data["sessions"] = "0123"
    path.write_text(json.dumps(data))
    with pytest.raises(PlacementError, match="sessions is not a list"):
        record.read(path)
