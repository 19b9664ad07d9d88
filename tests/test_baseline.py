"""`placement baseline record|diff` on real run reports: format, atomic writes, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from placement.judgement import baselines, reading
from placement import cli

FIX = Path(__file__).parent / "fixtures" / "runreports"
FIRST = FIX / "generic-first-run.json"
SECOND = FIX / "generic-with-baseline.json"


def _record(tmp_path: Path, src: Path, *extra: str) -> int:
    return cli.main(["baseline", "record", "--system", "generic", "--from", str(src), *extra])


def test_record_writes_reframe_ref_format(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert _record(tmp_path, FIRST) == 0
    assert "wrote" in capsys.readouterr().out
    data = yaml.safe_load((tmp_path / "generic.yaml").read_text())
    prov = data["_provenance"]
    assert prov["run_session"] == reading.run_report.load(FIRST).uuid and prov["host"]
    node = data["ReportNpbShaped"]
    # two environments ran: ReFrame's $environ goes first so they do not collide
    assert node["$index"] == ["$environ", "benchmark", "npb_class", "affinity", "num_threads"]
    leaf = node["gnu"]["MM160"]["S"]["none"][1]["time"]
    value, lower, upper, unit = leaf
    # one-sided: a time has an upper bound only, an improvement never fails
    assert unit == "s" and lower is None and upper >= baselines.store.MIN_THRESHOLD
    case = next(c for c in reading.run_report.load(FIRST).cases if c.test == "ReportNpbShaped"
                and c.environ == "gnu" and c.params["benchmark"] == "MM160"
                and c.params["affinity"] == "none" and c.params["num_threads"] == 1)
    assert value == float(f"{case.summary('time').mean:.6g}")
    assert "time_run0" not in node["gnu"]["MM160"]["S"]["none"][1]
    # a test without index: ReFrame's system:partition scoping
    assert "copy_0_0" in data["ReportNumaCopy"]["gnu"]
    assert oct((tmp_path / "generic.yaml").stat().st_mode & 0o777) == "0o644"


def test_committed_fixture_baseline_was_read_by_reframe():
    # the second fixture run used generic-baseline.yaml: ReFrame found every reference
    refd = baselines.store.entries(yaml.safe_load((FIX / "generic-baseline.yaml").read_text()))
    run = reading.run_report.load(SECOND)
    with_ref = [(c, v) for c in run.cases for v in c.primary_vars() if c.perf[v].ref is not None]
    assert len(with_ref) == len(refd)


def test_record_keeps_previous_and_diff(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert _record(tmp_path, FIRST) == 0
    first = (tmp_path / "generic.yaml").read_text()
    capsys.readouterr()
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(SECOND)]) == 0
    out = capsys.readouterr().out
    assert "changed" in out and "~ ReportNpbShaped[$environ=" in out and " -> " in out
    assert (tmp_path / "generic.yaml").read_text() == first  # diff writes nothing
    assert _record(tmp_path, SECOND) == 0
    assert (tmp_path / "generic.yaml.prev").read_text() == first
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    capsys.readouterr()
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(SECOND)]) == 0
    assert "no change" in capsys.readouterr().out


def test_merge_keeps_other_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    (tmp_path / "generic.yaml").write_text(yaml.safe_dump(
        {"OtherTest": {"$index": ["x"], 1: {"bw": [10.0, -0.1, 0.1, "GB/s"]}}}))
    assert _record(tmp_path, FIRST) == 0
    data = yaml.safe_load((tmp_path / "generic.yaml").read_text())
    assert data["OtherTest"][1]["bw"][0] == 10.0 and "ReportNpbShaped" in data
    assert _record(tmp_path, FIRST, "--replace") == 0
    assert "OtherTest" not in yaml.safe_load((tmp_path / "generic.yaml").read_text())


def test_bad_inputs_leave_files_untouched(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    target.write_text("OtherTest: {bw: [1, -0.1, 0.1, GB/s]}\n")
    before = target.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text('{"session_info": {"uuid": "x"}, "runs": [{"testcases": [{"name": 1')
    for args in (["--from", str(bad)], ["--from", str(tmp_path / "none.json")]):
        assert cli.main(["baseline", "record", "--system", "generic", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("placement: error:") and "Traceback" not in err
    assert cli.main(["baseline", "record", "--system", "othersys", "--from", str(FIRST)]) == 2
    assert "no test cases for system 'othersys'" in capsys.readouterr().err
    target.write_text("OtherTest: [unclosed\n")
    corrupt = target.read_text()
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST)]) == 2
    assert "not valid YAML" in capsys.readouterr().err
    assert target.read_text() == corrupt and not (tmp_path / "generic.yaml.prev").exists()
    assert before  # the first content was never replaced by a failed run either


def test_from_latest(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "b"))
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "run-report-0.json").write_text(json.dumps(json.loads(FIRST.read_text())))
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", "latest"]) == 0
    assert "added" in capsys.readouterr().out


def test_a_control_value_is_set_checked_kept_by_record_and_cleared(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    ctl = ["baseline", "control", "--system", "generic"]
    assert cli.main([*ctl, "Any[x].y"]) == 2          # nothing recorded yet
    assert "record a run first" in capsys.readouterr().err and not target.exists()
    assert cli.main(ctl) == 2                       # a misspelt system: said, not "none"
    assert "no reference file of system 'generic'" in capsys.readouterr().err
    assert _record(tmp_path, FIRST) == 0
    data = yaml.safe_load(target.read_text())
    from placement.judgement import baselines
    from placement.judgement.verdict.intervals import entry_name
    name = entry_name(next(iter(baselines.samples.entries(data))))
    capsys.readouterr()
    assert cli.main(ctl) == 0
    assert "no control value: the node's shift is the median" in capsys.readouterr().out
    # bad values: one line, exit 2, the file untouched
    before = target.read_text()
    for bad, why in (("nope", "is not a value Test[index values].var"),
                     ("Nope[a,b].c", f"has no stored runs in {target}")):
        assert cli.main([*ctl, bad]) == 2
        err = capsys.readouterr().err
        assert f"control value {bad!r} {why}; accepted: " in err and "Traceback" not in err
    assert cli.main([*ctl, name, "--clear"]) == 2
    assert target.read_text() == before
    assert cli.main([*ctl, name]) == 0
    assert capsys.readouterr().out == f"{target}: control value {name}\n"
    assert yaml.safe_load(target.read_text())["_control"] == name
    # a site's choice, not a value: record keeps it, --replace too
    for extra in ((), ("--add",), ("--replace",)):
        assert _record(tmp_path, SECOND, *extra) == 0
        assert yaml.safe_load(target.read_text())["_control"] == name, extra
    assert cli.main([*ctl, "--clear"]) == 0
    assert "_control" not in yaml.safe_load(target.read_text())
    # a hand edit that names no value: one line wherever the file is read
    target.write_text(before + "_control: [1, 2]\n")
    edited = target.read_text()
    capsys.readouterr()
    for args in (["baseline", "record", "--system", "generic", "--from", str(SECOND)], ctl):
        assert cli.main(args) == 2
        assert "_control [1, 2] is not a value Test[index values].var" in \
            capsys.readouterr().err
    assert target.read_text() == edited


def test_the_names_diff_prints_are_read_by_judge_and_control(tmp_path, monkeypatch, capsys):
    """`baseline diff` prints each index value after its $index name; `judge` and `baseline
    control`, which ask for a value "as `placement baseline diff` prints it", read that
    name as the value it is (judge answered "no baseline runs", control "no stored runs")."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(FIRST)]) == 0
    printed = [line.split(": ")[0][2:] for line in capsys.readouterr().out.splitlines()
               if line.startswith("+ ReportNpbShaped[$environ=gnu,")]
    assert printed
    assert _record(tmp_path, FIRST) == 0
    target = tmp_path / "generic.yaml"
    short = [re.sub(r"[^,\[]+=", "", n) for n in printed]      # Test[v1,v2].var
    assert short[0].startswith("ReportNpbShaped[gnu,MM") and "=" not in short[0]
    for long, name in zip(printed, short):
        capsys.readouterr()
        assert cli.main(["judge", "--baseline", str(target), "--entry", long,
                         "0.0015", "0.0016", "0.0015"]) == 0
        by_long = capsys.readouterr().out
        assert cli.main(["judge", "--baseline", str(target), "--entry", name,
                         "0.0015", "0.0016", "0.0015"]) == 0
        assert "no baseline runs" not in by_long and by_long == capsys.readouterr().out
    assert cli.main(["baseline", "control", "--system", "generic", printed[0]]) == 0
    assert capsys.readouterr().out == f"{target}: control value {short[0]}\n"
    assert yaml.safe_load(target.read_text())["_control"] == short[0]
    # a test without $index (keyed by system:partition): its key printed bare, not `U[].t`
    d = baselines.store.Diff({("U", ("a:p",), "t"): [1.0, None, 1.0, "s"]}, {}, {})
    assert d.lines({}) == ["+ U[a:p].t: 1.0 s (none/+1)"]


def test_a_control_that_changes_nothing_writes_nothing(tmp_path, monkeypatch, capsys):
    """Setting the value already set, or clearing none, rewrote the file and its backup:
    `.prev` became a copy of the file and the real previous version was lost."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target, prev = tmp_path / "generic.yaml", tmp_path / "generic.yaml.prev"
    assert _record(tmp_path, FIRST) == 0
    assert _record(tmp_path, SECOND) == 0
    from placement.judgement.verdict.intervals import entry_name
    name = entry_name(next(iter(baselines.samples.entries(yaml.safe_load(target.read_text())))))
    none = "no control value: the node's shift is the median of the values"

    def control(arg: str, said: str, written: bool) -> None:
        before = (target.read_text(), prev.read_text(), target.stat().st_mtime_ns)
        capsys.readouterr()
        assert cli.main(["baseline", "control", "--system", "generic", arg]) == 0
        out = capsys.readouterr().out
        if written:
            assert out == f"{target}: {said}\n"
            assert prev.read_text() == before[0] != target.read_text()
        else:
            assert out == f"{target}: {said} (no change: nothing written)\n"
            assert (target.read_text(), prev.read_text(),
                    target.stat().st_mtime_ns) == before

    control("--clear", none, written=False)            # none set yet
    control(name, f"control value {name}", written=True)
    control(name, f"control value {name}", written=False)
    control("--clear", none, written=True)
    control("--clear", none, written=False)


def test_a_value_the_run_did_not_measure_is_said_left_out(tmp_path, monkeypatch, capsys):
    """A value reported NaN with no launches to make it of: no reference can be made, and
    the file is one value short. ``17 added`` for a run of 18 said nothing of the 18th."""
    data = json.loads(FIRST.read_text())
    tc = next(t for t in data["runs"][0]["testcases"] if t.get("perfvalues"))
    for k in list(tc["perfvalues"]):
        if k.rsplit(":", 1)[-1] != "time":
            del tc["perfvalues"][k]
    next(iter(tc["perfvalues"].values()))[0] = float("nan")
    src = tmp_path / "nan.json"
    src.write_text(json.dumps(data))
    for cmd in ("diff", "record"):
        assert cli.main(["baseline", cmd, "--system", "generic", "--from", str(src),
                         "--baselines", str(tmp_path / "generic.yaml")]) == 0
        out = capsys.readouterr().out
        assert "note: 1 value(s) reported but not measured (NaN, infinite or none), not " \
               "recorded from this run (a reference the file held is kept): " \
               f"{tc['display_name']} @generic:default+gnu time" in out, out
    assert "17 added" in out


def test_keep_without_sessions_to_keep_is_refused(tmp_path, capsys):
    """``--keep`` counts the sessions kept when sessions are added; with one run and no
    ``--add`` it was accepted and meant nothing."""
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST),
                     "--keep", "5", "--baselines", str(tmp_path / "generic.yaml")]) == 2
    assert "--keep counts the sessions kept with --add" in capsys.readouterr().err
    assert not (tmp_path / "generic.yaml").exists()


def test_a_case_not_in_the_file_costs_no_search_where_a_check_asks(tmp_path, monkeypatch):
    """A check's setup asks for each case's stored runs: an entry the file does not hold is
    None there (the nearest-name search is the judge's, for the person who typed it)."""
    from placement.judgement import repeats
    from placement.util import PlacementError
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert _record(tmp_path, FIRST) == 0
    path = tmp_path / "generic.yaml"
    assert repeats.judge.stored_runs(path, "Nope[x].y") is None
    try:
        repeats.judge.stored_runs(path, "Nope[x].y", explain=True)
    except PlacementError as err:
        assert "names no value of" in str(err) and "nearest: " in str(err)
    else:
        raise AssertionError("an entry the file does not hold was taken")
