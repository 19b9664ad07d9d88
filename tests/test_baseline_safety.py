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

import pytest
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
    whole = baselines.store.entries(yaml.safe_load(target.read_text()))
    for i, sig in enumerate([signal.SIGKILL, signal.SIGTERM] * 4):
        p = _record_proc(target, src)
        time.sleep(0.6 + 0.3 * i)
        p.send_signal(sig)
        p.wait(timeout=300)
        for f in (target, target.with_name("generic.yaml.prev")):
            if f.exists():
                assert baselines.store.entries(yaml.safe_load(f.read_text())) == whole, (i, f)
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
    for _entry, leaf in baselines.store.entries(yaml.safe_load(target.read_text())).items():
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
        assert ("is not a positive number; expected [value (a positive measurement, 1e-100 "
                "to") in err[0]
        assert path.read_text() == text                     # nothing written
        leaf[0] = good
        path.write_text(yaml.safe_dump(data))


def test_a_baseline_copied_from_another_system_is_flagged(tmp_path, monkeypatch, capsys):
    from placement import acceptance
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


# -- a damaged or crafted reference file: refused in one line, nothing lost -------------------

AA = sorted((Path(__file__).parent / "fixtures" / "aa-runs").glob("*.json"))


def _alias_bomb() -> str:
    """Ten levels of nine aliases each: 1 kB of text, 9**9 reference leaves once walked."""
    lines = ["x0: &x0 [1.0, -0.1, 0.1, s]"]
    for i in range(1, 10):
        lines.append(f"x{i}: &x{i} {{" + ", ".join(f"k{j}: *x{i - 1}" for j in range(9)) + "}")
    lines.append("Bomb: {$index: [a, b, c, d, e, f, g, h, i], "
                 + ", ".join(f"k{j}: *x9" for j in range(9)) + "}")
    return "\n".join(lines) + "\n"


def _one_gib():
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))


def test_an_alias_bomb_is_refused_in_one_line_quickly_in_bounded_memory(tmp_path):
    target = tmp_path / "generic.yaml"
    target.write_text(_alias_bomb())
    assert len(target.read_bytes()) < 1400
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "placement", "baseline", "diff", "--system",
                        "generic", "--from", str(FIRST), "--baselines", str(target)],
                       capture_output=True, text=True, timeout=120, preexec_fn=_one_gib)
    assert time.monotonic() - start < 60
    assert p.returncode == 2 and p.stdout == "", p.stderr[-2000:]
    assert p.stderr.splitlines() == [
        f"placement: error: {target}: YAML anchor &x0 at line 1: anchors and aliases are not "
        "accepted in a reference file (none is ever written; a file of nested aliases expands "
        "without bound); write the values out, nothing was written"]


def test_a_reference_file_larger_than_any_written_is_refused_unread(tmp_path, capsys):
    from placement.util import safe_yaml
    target = tmp_path / "generic.yaml"
    with target.open("wb") as fp:      # sparse: nothing is stored, nothing need be read
        fp.truncate(safe_yaml.MAX_BYTES + 1)
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(FIRST),
                     "--baselines", str(target)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"placement: error: {target}: {safe_yaml.MAX_BYTES + 1} bytes, larger than any "
        "reference file this project writes (at most 32 MiB accepted); nothing was read or "
        "written"]


def _three_sessions(target: Path) -> None:
    """A file of three sessions, recorded as a site does: one, then two more with --add."""
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(AA[0]),
                     "--baselines", str(target)]) == 0
    for src in AA[1:3]:
        assert cli.main(["baseline", "record", "--system", "generic", "--add", "--from",
                         str(src), "--baselines", str(target)]) == 0


def test_every_cut_at_a_line_boundary_is_refused(tmp_path):
    target = tmp_path / "generic.yaml"
    _three_sessions(target)
    lines = target.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.yaml"
    loaded = []
    for n in range(len(lines)):
        cut.write_text("".join(lines[:n]))
        try:
            baselines.store.load(cut)
        except Exception as exc:    # noqa: BLE001 (anything else than a one-line refusal fails)
            assert isinstance(exc, baselines.store.PlacementError), (n, exc)
            assert "\n" not in str(exc)
        else:
            loaded.append(n)
    assert loaded == []


def test_a_cut_file_is_refused_by_diff_record_and_a_run_and_its_prev_survives(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    _three_sessions(target)
    whole, prev = target.read_text(), target.with_name("generic.yaml.prev").read_text()
    samples = whole.index("\n_samples:") + 1
    second = whole.index("    - session:", whole.index("    - session:", samples) + 1)
    cuts = {"before _samples": whole[:samples], "between two sessions": whole[:second]}
    for what, text in cuts.items():
        target.write_text(text)
        capsys.readouterr()
        for cmd in (["diff"], ["record", "--add"]):
            assert cli.main(["baseline", *cmd, "--system", "generic", "--from",
                             str(AA[3])]) == 2, (what, cmd)
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and err[0].startswith(
                f"placement: error: {target}: holds less than its _provenance.contents "
                "records ("), (what, err)
            assert err[0].endswith(f"): cut short or edited; restore its previous version "
                                   f"({target}.prev) or move it away and record again; "
                                   "nothing was written"), err
            assert target.read_text() == text           # the cut file as it was
            assert target.with_name("generic.yaml.prev").read_text() == prev   # intact copy
        with pytest.raises(baselines.store.PlacementError, match="cut short"):  # the one writer
            baselines.store.write_atomic(target, yaml.safe_load(whole))
        assert target.with_name("generic.yaml.prev").read_text() == prev
        lines, status = acceptance_summary()
        assert status == 4 and " INCOMPLETE " in lines[-1], (what, lines[-1])
        assert "baseline refused: nothing judged against it" in lines[-1]
        assert f"NOTE baseline refused: {err[0].removeprefix('placement: error: ')}" in lines
    target.write_text(whole)        # the whole file still reads
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(AA[3])]) == 0


def acceptance_summary():
    from placement import acceptance
    return acceptance.summary([FIRST], "generic", "quick", None, 10.0, False, [])


def _leaf(data: dict) -> list:
    return data["ReportNpbShaped"]["gnu"]["MM160"]["S"]["none"][1]["time"]


@pytest.mark.parametrize("edit, why", [
    (lambda leaf: leaf.__setitem__(0, 5e-324), "reference [5e-324, "),
    (lambda leaf: leaf.__setitem__(0, 1e308), "reference [1e+308, "),
    (lambda leaf: leaf.__setitem__(slice(1, 3), [None, 1e308]),
     "bounds [None, 1e+308] put the upper bound beyond x1001 the value (null is no bound)"),
    (lambda leaf: leaf.__setitem__(slice(1, 3), [0.2, 0.1]),
     "bounds [0.2, 0.1] put the lower bound above the upper one"),
    (lambda leaf: leaf.__setitem__(slice(1, 3), [0.1, None]),
     "bounds [0.1, None] put the lower bound above the value"),
    (lambda leaf: leaf.__setitem__(slice(1, 3), [-2.0, None]),
     "bounds [-2.0, None] put the lower bound below zero"),
    (lambda leaf: leaf.__setitem__(slice(1, 3), [None, -0.1]),
     "bounds [None, -0.1] put the upper bound below the value"),
    (lambda leaf: leaf.__setitem__(slice(1, 3), [0, 0]),
     "bounds [0, 0] leave an interval of one point, which no measurement lands on"),
])
def test_a_reference_no_measurement_can_be_is_refused_by_diff_and_the_run(
        tmp_path, monkeypatch, capsys, edit, why):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST)]) == 0
    path = tmp_path / "generic.yaml"
    data = yaml.safe_load(path.read_text())
    del data["_provenance"]["contents"]    # a hand edit, not a cut
    edit(_leaf(data))
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    capsys.readouterr()
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(FIRST)]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err.startswith(f"placement: error: {path}: ReportNpbShaped[gnu,MM160,S,none,1].time: "
                          f"{why}"), err
    lines, status = acceptance_summary()
    assert status == 4 and " INCOMPLETE " in lines[-1], lines[-1]
    assert f"NOTE baseline refused: {err.removeprefix('placement: error: ')}" in lines


def test_a_subnormal_stored_run_is_refused_at_load(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    _three_sessions(target)
    data = yaml.safe_load(target.read_text())
    runs = data["_samples"]["MemWriteSingleCheck"]["gnu"]["small"]["gbps_1M"]["sessions"][0]
    runs["runs"] = [5e-324] * len(runs["runs"])
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    capsys.readouterr()
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(AA[3])]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err.startswith(f"placement: error: {target}: _samples.MemWriteSingleCheck.gnu.small."
                          "gbps_1M: runs [5e-324, 5e-324, 5e-324] are not a list of measured "
                          "values (numbers from 1e-100 to 1e+100)"), err
    lines, status = acceptance_summary()
    assert status == 4 and lines[-1].startswith("ACCEPTANCE generic quick: INCOMPLETE ")


def test_a_reference_in_another_unit_is_incomplete_in_a_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST)]) == 0
    path = tmp_path / "generic.yaml"
    lines, status = acceptance_summary()
    assert status == 0 and " PASS " in lines[-1], lines
    text = path.read_text()
    path.write_text(text.replace("GB/s]", "s]", 1))     # gnu's copy_0_0 in seconds, by hand
    lines, status = acceptance_summary()
    assert status == 4 and " INCOMPLETE " in lines[-1], lines
    assert "1 value(s) with a reference in another unit" in lines[-1]
    assert (f"NOTE ReportNumaCopy[gnu].copy_0_0: the check reports 'GB/s', its reference in "
            f"{path} is in 's': not judged; give the reference in 'GB/s', or record it again "
            "with --replace") in lines


def test_an_empty_baseline_without_a_previous_version_does_not_point_at_one(
        tmp_path, monkeypatch, capsys):
    """An empty file said "restore its previous version (....prev)" when none was kept."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    target.write_text("")
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(AA[3])]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err.endswith(f"holds no reference entries (empty, or cut short); remove it (no "
                        f"previous version {target}.prev is kept); nothing was written"), err
    target.with_name("generic.yaml.prev").write_text("x: 1\n")
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(AA[3])]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert f"restore its previous version ({target}.prev) or remove it;" in err, err
