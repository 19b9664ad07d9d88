"""`placement baseline record` under real faults: two writers at once, kills, a full disk, NaN."""

from __future__ import annotations

import copy
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from placement.judgement import baselines
from placement import cli

FIRST = Path(__file__).parent / "fixtures" / "runreports" / "generic-first-run.json"


def _report(tmp: Path, name: str, prefix: str, copies: int) -> Path:
    """A run report with ``copies`` NPB-shaped benchmarks named ``<prefix>0`` ... (real cases)."""
    data = json.loads(FIRST.read_text())
    shaped = [tc for tc in data["runs"][0]["testcases"] if tc["name"].startswith("ReportNpbShaped")]
    cases = []
    for i in range(copies):
        for tc in shaped:
            tc = copy.deepcopy(tc)
            for key in ("name", "display_name"):
                tc[key] = tc[key].replace("MM160", f"{prefix}{i}")
            tc["benchmark"] = f"{prefix}{i}"
            cases.append(tc)
    data["runs"][0]["testcases"] = cases
    out = tmp / name
    out.write_text(json.dumps(data))
    return out


def _record_proc(target: Path, src: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "placement", "baseline", "record", "--system",
                             "generic", "--from", str(src), "--baselines", str(target)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _benchmarks(target: Path) -> set[str]:
    node = yaml.safe_load(target.read_text())["ReportNpbShaped"]["gnu"]
    return set(node)


def test_two_records_at_once_keep_both(tmp_path):
    a = _report(tmp_path, "a.json", "A", 150)
    b = _report(tmp_path, "b.json", "B", 150)
    for round_ in range(3):
        target = tmp_path / f"r{round_}" / "generic.yaml"
        procs = [_record_proc(target, a), _record_proc(target, b)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0 and "added" in out, err
        got = _benchmarks(target)
        assert {f"A{i}" for i in range(150)} <= got and {f"B{i}" for i in range(150)} <= got


def test_kills_never_tear_the_file_or_its_backup(tmp_path):
    src = _report(tmp_path, "a.json", "A", 100)
    target = tmp_path / "generic.yaml"
    assert _record_proc(target, src).wait(timeout=300) == 0
    whole = baselines.entries(yaml.safe_load(target.read_text()))
    for i, sig in enumerate([signal.SIGKILL, signal.SIGTERM] * 4):
        p = _record_proc(target, src)
        time.sleep(0.6 + 0.3 * i)
        p.send_signal(sig)
        p.wait(timeout=300)
        for f in (target, target.with_name("generic.yaml.prev")):
            if f.exists():
                assert baselines.entries(yaml.safe_load(f.read_text())) == whole, (i, f)
        if sig == signal.SIGTERM:       # a clean stop removes its own temporary file
            assert not list(tmp_path.glob(".generic.yaml.*.tmp")), i
    assert _record_proc(target, src).wait(timeout=300) == 0   # cleans what SIGKILL left
    assert not list(tmp_path.glob(".generic.yaml.*.tmp"))


def _small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # over the limit: EFBIG, as a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))


def test_full_disk_keeps_the_backup_whole(tmp_path):
    src = _report(tmp_path, "a.json", "A", 60)
    target = tmp_path / "generic.yaml"
    assert _record_proc(target, src).wait(timeout=300) == 0
    assert target.stat().st_size > 20_000
    target.with_name("generic.yaml.prev").write_text("OldTest: {bw: [1, -0.1, 0.1, GB/s]}\n")
    before = target.read_text()
    p = _record_proc(target, src, preexec_fn=_small_files)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "generic.yaml.prev" in err                    # the error names the file
    assert target.read_text() == before
    assert "OldTest" in target.with_name("generic.yaml.prev").read_text()
    assert not list(tmp_path.glob(".generic.yaml.*.tmp"))


def test_nan_values_are_not_recorded(tmp_path, capsys):
    data = json.loads(FIRST.read_text())
    tc = next(t for t in data["runs"][0]["testcases"] if t["name"].startswith("ReportNpbShaped"))
    for key, tup in tc["perfvalues"].items():
        tup[0] = float("nan")
    src = tmp_path / "nan.json"
    src.write_text(json.dumps(data))
    target = tmp_path / "generic.yaml"
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(src),
                     "--baselines", str(target)]) == 0, capsys.readouterr().err
    for _entry, leaf in baselines.entries(yaml.safe_load(target.read_text())).items():
        assert leaf[0] == leaf[0]         # no NaN stored


def test_malformed_run_reports_are_one_line(tmp_path, capsys):
    for body in ('{"session_info": {}, "runs": null}',
                 '{"session_info": {}, "runs": [{"testcases": 5}]}',
                 '{"session_info": {}, "runs": [{"testcases": ["x"]}]}'):
        src = tmp_path / "r.json"
        src.write_text(body)
        assert cli.main(["baseline", "record", "--system", "generic", "--from", str(src),
                         "--baselines", str(tmp_path / "g.yaml")]) == 2
        err = capsys.readouterr().err
        assert "not a ReFrame run report" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "g.yaml").exists()


def test_a_hand_edited_reference_value_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST)]) == 0
    path = tmp_path / "generic.yaml"
    for bad in ("fast", 0, -3.5):
        data = yaml.safe_load(path.read_text())
        leaf = data["ReportNpbShaped"]["gnu"]["MM160"]["S"]["none"][1]["time"]
        good, leaf[0] = leaf[0], bad
        text = yaml.safe_dump(data)
        path.write_text(text)
        capsys.readouterr()
        assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(FIRST)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "ReportNpbShaped[gnu,MM160,S,none,1].time: reference" in err[0]
        assert "is not a positive number; expected [value > 0" in err[0]
        assert path.read_text() == text                     # nothing written
        leaf[0] = good
        path.write_text(yaml.safe_dump(data))


def test_a_baseline_copied_from_another_system_is_flagged(tmp_path, monkeypatch, capsys):
    from placement.acceptance import run as acceptance
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    root = Path(__file__).resolve().parents[1]
    text = (root / "config" / "baselines" / "xeon16.yaml").read_text()
    path = tmp_path / "generic.yaml"
    path.write_text(text)
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(FIRST)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"warning: {path} was recorded for system 'xeon16'")
    assert out[0].endswith(", not 'generic': its values describe another machine")
    # record refuses to merge into it, and leaves it as it was
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not merged into it: move it away, or record with --replace" in err[0]
    assert path.read_text() == text
    lines, _ = acceptance.summary([FIRST], "generic", "quick", None, 10.0, False, [])
    assert any(ln.startswith(f"NOTE {path} was recorded for system 'xeon16'") for ln in lines)
    assert "baseline of another system" in lines[-1]
    # --replace starts it afresh for this system
    assert cli.main(["baseline", "record", "--system", "generic", "--replace",
                     "--from", str(FIRST)]) == 0
    assert yaml.safe_load(path.read_text())["_provenance"]["system"] == "generic"


def test_an_empty_run_report_is_passed_over_by_latest(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    good = runs / "run-report-1.json"
    good.write_text(FIRST.read_text())
    empty = runs / "run-report-2.json"
    empty.write_text("")                       # what a full disk left of the next run
    os.utime(good, (1, 1))
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", "latest"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"placement: skipped the empty run report {empty} (its run could not write it)"]


def test_a_reference_in_another_unit_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST)]) == 0
    path = tmp_path / "generic.yaml"
    data = yaml.safe_load(path.read_text())
    leaf = data["ReportNumaCopy"]["gnu"]["copy_0_0"]
    leaf[0], leaf[3] = leaf[0] * 1000, "MB/s"            # a hand edit to another unit
    text = yaml.safe_dump(data)
    path.write_text(text)
    capsys.readouterr()
    for cmd in ("diff", "record"):
        assert cli.main(["baseline", cmd, "--system", "generic", "--from", str(FIRST)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"placement: error: {path}: ReportNumaCopy[gnu].copy_0_0: the reference "
                       "is in 'MB/s' but the check reports 'GB/s'; give the value in 'GB/s' (or "
                       "record it again with --replace); nothing was written"]
        assert path.read_text() == text
