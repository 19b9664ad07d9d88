"""Adaptive kernel launches: the job asks `placement judge` about every judged variable.

The judge's kernel mode is read on hand-written job output; the loop itself
runs in real ReFrame sessions of the matmul kernel against reference files
whose stored runs are placed so that the outcome does not depend on the
machine's noise (1000x away: regressed; spread over both sides: undecided).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from placement import cli
from placement.judgement import reading
from placement.judgement.verdict.guards import GUARD_VARS

ROOT = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).parent / "reframe"

A = "T[x].a"
B = "T[x].b"
RE_A = r"^result kernel=k .*op=a .*\btime_s=(\S+)"
RE_B = r"^result kernel=k .*op=b .*\btime_s=(\S+)"
#: ten runs near 1 ms: runs near 1 s regress from the first verdict on
FAR = [0.001 + i * 1e-5 for i in range(10)]
#: runs far below and far above 1 s: runs near 1 s decide nothing
SPREAD = [0.01, 5.0, 0.02, 4.0]


def _reference(tmp: Path, samples: dict[str, list[float]]) -> Path:
    leaves = {var: {"higher_is_better": False, "runs": runs, "session": "s"}
              for var, runs in samples.items()}
    data = {"T": {"$index": ["k"], "x": {"a": [1.0, -1, 1, "s"], "b": [1.0, -1, 1, "s"]}}}
    if leaves:
        data["_samples"] = {"T": {"$index": ["k"], "x": leaves}}
    path = tmp / "sys.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _output(tmp: Path, launches: int, b_line: bool = True) -> Path:
    lines = ["probe cpus=0,1"]
    for n in range(1, launches + 1):
        lines.append(f"result kernel=k op=a time_s={1.0 + n / 100}")
        if b_line:
            lines.append(f"result kernel=k op=b waiters=1 time_s={1.0 - n / 100}")
        lines.append(f"kernel-launch n={n} rc=0")
    path = tmp / "job.out"
    path.write_text("\n".join(lines) + "\n")
    return path


def _judge(ref: Path, out: Path, *extra: str) -> int:
    return cli.main(["judge", "--baseline", str(ref), "--output", str(out),
                     "--var", A, RE_A, "--var", B, RE_B, *extra])


def test_one_undecided_variable_keeps_the_job_launching(tmp_path, capsys):
    ref = _reference(tmp_path, {"a": FAR, "b": SPREAD})
    assert _judge(ref, _output(tmp_path, 5), "--max-runs", "8") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{A}: stop: regressed")
    assert lines[1].startswith(f"{B}: continue: undecided")
    assert lines[-1] == "continue"


def test_at_the_cap_the_job_stops(tmp_path, capsys):
    ref = _reference(tmp_path, {"a": FAR, "b": SPREAD})
    assert _judge(ref, _output(tmp_path, 5), "--max-runs", "5") == 0
    out = capsys.readouterr().out
    assert f"{B}: stop: cap of 5 runs reached, undecided" in out
    assert out.splitlines()[-1] == "stop"


def test_every_judged_variable_decided_stops(tmp_path, capsys):
    ref = _reference(tmp_path, {"a": FAR})          # b has no stored runs: not judged
    # a thousand times slower: regressed from the first verdict on
    assert _judge(ref, _output(tmp_path, 3), "--max-runs", "8") == 0
    assert f"{B}: not judged (no stored runs)" in capsys.readouterr().out


def test_no_stored_runs_stops(tmp_path, capsys):
    ref = _reference(tmp_path, {})
    assert _judge(ref, _output(tmp_path, 3), "--max-runs", "8") == 0
    assert "no variable has stored runs" in capsys.readouterr().out


def test_word_mode_gives_the_reasons_on_stderr(tmp_path, capsys):
    ref = _reference(tmp_path, {"a": FAR, "b": SPREAD})
    assert _judge(ref, _output(tmp_path, 3), "--max-runs", "8", "--word") == 0
    got = capsys.readouterr()
    assert got.out == "continue\n"
    assert got.err.startswith(f"judge: {A}: stop: regressed")
    assert f"judge: {B}: continue: undecided" in got.err


@pytest.mark.parametrize("case,args,message", [
    ("bad regex", ["--var", A, "(unclosed"], "invalid regex"),
    ("a launch without the line", None, "launch 1 printed no line matching"),
    ("both modes", ["--var", A, RE_A, "--entry", A], "--output needs --var"),
    ("no such output", ["--var", A, RE_A], "cannot read the job output"),
    # a FIFO blocked the judge for ever, /dev/zero filled the memory
    ("a FIFO as output", ["--var", A, RE_A], "a FIFO (named pipe), not a regular file"),
    ("a device as output", ["--var", A, RE_A], "a character device, not a regular file"),
    ("a FIFO as reference", ["--var", A, RE_A], "a FIFO (named pipe), not a regular file"),
])
def test_bad_input_is_one_line(tmp_path, capsys, case, args, message):
    ref = _reference(tmp_path, {"a": FAR, "b": SPREAD})
    out = _output(tmp_path, 3, b_line=False)
    if case == "no such output":
        out = tmp_path / "missing.out"
    elif case == "a FIFO as output":
        out = tmp_path / "fifo.out"
        os.mkfifo(out)
    elif case == "a device as output":
        out = Path("/dev/zero")
    elif case == "a FIFO as reference":
        ref = tmp_path / "fifo.yaml"
        os.mkfifo(ref)
    argv = ["judge", "--baseline", str(ref), "--output", str(out)]
    argv += args if args is not None else ["--var", B, RE_B]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


# ---- real ReFrame sessions of the matmul kernel ----

def _matmul_reference(tmp: Path) -> Path:
    """compact: both judged variables 1000x away; scatter: gflops undecided; none: no runs."""
    def runs(values, better):
        return {"higher_is_better": better, "runs": values, "session": "s"}
    wide = {"mean_time": [1.0, -1, 1000, "s"], "gflops": [1.0, -1, None, "Gflop/s"]}
    data = {
        "MatmulCheck": {"$index": ["$environ", "scale", "affinity"], "gnu": {"small": {
            a: copy.deepcopy(wide) for a in ("none", "compact", "scatter")}}},  # no aliases
        "_samples": {"MatmulCheck": {"$index": ["$environ", "scale", "affinity"],
                                     "gnu": {"small": {
            "compact": {"mean_time": runs([1e-6 * (1 + i / 10) for i in range(10)], False),
                        "gflops": runs([1e6 * (1 + i / 10) for i in range(10)], True)},
            "scatter": {"mean_time": runs([1e-6 * (1 + i / 10) for i in range(10)], False),
                        "gflops": runs([0.01, 1e4, 0.02, 2e4], True)}}}}},
    }
    path = tmp / "generic.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _reframe(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PLACEMENT_BASELINES=str(tmp))
    return subprocess.run([str(REFRAME), "-C", "config/settings.py", "-c",
                           "reframe_tests/kernels.py", "-r", "--tag", "quick", "-p", "gnu",
                           "-n", "MatmulCheck", "-S", "reps=5",
                           "-o", str(tmp / "out"), "-s", str(tmp / "stage"), *args],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.reframe
@pytest.mark.skipif(not REFRAME.exists(), reason="ReFrame is not in this environment")
def test_reframe_launches_until_the_judge_decides(tmp_path):
    _matmul_reference(tmp_path)
    report = tmp_path / "run.json"
    out = _reframe(tmp_path, "-S", "launches=3", "-S", "max_launches=6",
                   "--report-file", str(report))
    assert out.returncode == 0, out.stdout[-4000:]
    cases = {c.params["affinity"]: c for c in reading.run_report.load(report).cases}
    made = {a: c.raw["launches_made"] for a, c in cases.items()}
    # none: no stored runs, fixed; compact: regressed at the first verdict;
    # scatter: gflops undecided, to the cap
    assert made == {"none": 3, "compact": 3, "scatter": 6}
    # room for every launch the judge may ask: 10 minutes for 3 launches, 20 for 6
    assert {c.raw["time_limit"] for c in cases.values()} == {1200.0}
    for a, c in cases.items():
        assert all(len(v) == made[a] for k, v in c.launches.items() if k not in GUARD_VARS)
        err = Path(c.raw["outputdir"]) / c.raw["job_stderr"]
        asked = err.read_text().count("judge: MatmulCheck[gnu,small,")
        assert asked == {"none": 0, "compact": 2 * 1, "scatter": 2 * 3}[a], err.read_text()


@pytest.mark.reframe
@pytest.mark.skipif(not REFRAME.exists(), reason="ReFrame is not in this environment")
def test_reframe_refuses_a_cap_below_launches(tmp_path):
    out = _reframe(tmp_path, "-S", "launches=3", "-S", "max_launches=2")
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert "max_launches=2 is not accepted" in text
    assert "Traceback" not in text


def test_an_entry_with_no_stored_runs_stops_and_says_which(tmp_path, capsys):
    """A value recorded without runs stops the loop (nothing to judge against); the line
    names the entry and the file."""
    ref = _reference(tmp_path, {"a": FAR})
    assert cli.main(["judge", "--baseline", str(ref), "--entry", B, "1.0", "1.1", "1.2"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == ("stop: no baseline runs: nothing to judge against (T[x].b has no stored "
                   f"runs in {ref})"), out


@pytest.mark.parametrize("entry", ["T[x].typo", "T[y].a", "U[x].a", "T[x,x].a"])
@pytest.mark.parametrize("mode", ["--entry", "--output"])
def test_an_entry_the_file_does_not_hold_is_one_line(tmp_path, capsys, entry, mode):
    """A typo is no "stop": the job's loop would end quietly, as for a value not yet
    recorded; it is one line, exit 2, naming the entry and the file's nearest values."""
    ref = _reference(tmp_path, {"a": FAR})
    argv = ["judge", "--baseline", str(ref)]
    argv += (["--entry", entry, "1.0", "1.1", "1.2"] if mode == "--entry" else
             ["--output", str(_output(tmp_path, 3)), "--var", entry, RE_A])
    assert cli.main(argv) == 2
    got = capsys.readouterr()
    err = got.err.strip().splitlines()
    assert len(err) == 1 and not got.out, got
    assert err[0].startswith(f"placement: error: entry {entry!r} names no value of {ref} "), err
    assert "one of the file's 2 values" in err[0] and "nearest: T[x]." in err[0], err


@pytest.mark.parametrize("bad", ["-1", "0", "nan", "inf", "1e999", "x"])
@pytest.mark.parametrize("before", [[], ["1.0"], ["1.0", "1.1", "1.2"]])
@pytest.mark.parametrize("entry", [A, B])           # B: recorded, no stored runs
def test_every_run_value_is_checked_before_counting(tmp_path, capsys, bad, before, entry):
    """Below --min-runs the judge only counts the runs: a bad one there ("continue: 2 of at
    least 3 runs", exit 1) ran the job again on a value it cannot judge."""
    ref = _reference(tmp_path, {"a": FAR})
    assert cli.main(["judge", "--baseline", str(ref), "--entry", entry, *before, bad]) == 2
    got = capsys.readouterr()
    err = got.err.strip().splitlines()
    assert len(err) == 1 and not got.out, got
    assert "runs must be positive finite numbers" in err[0] or \
        "invalid run value 'x' (expected a number)" in err[0], err


@pytest.mark.parametrize("value", ["-1", "nan"])
def test_a_launch_value_is_checked_before_counting(tmp_path, capsys, value):
    ref = _reference(tmp_path, {"a": FAR})
    out = tmp_path / "job.out"
    out.write_text(f"time={value}\nkernel-launch n=1 rc=0\n")
    assert cli.main(["judge", "--baseline", str(ref), "--output", str(out),
                     "--var", A, r"time=(\S+)"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run 1 is " in err[0] and "positive finite" in err[0], err


def test_a_group_that_matched_nothing_is_one_line(tmp_path, capsys):
    """An optional group with no text: as a group that reads no number (it was a
    TypeError's traceback, exit 1: the job's loop read it as "stop")."""
    ref = _reference(tmp_path, {"a": FAR})
    out = tmp_path / "job.out"
    out.write_text("time=\nkernel-launch n=1 rc=0\n")
    assert cli.main(["judge", "--baseline", str(ref), "--output", str(out),
                     "--var", A, r"time=(\S+)?", "--word"]) == 2
    got = capsys.readouterr()
    err = got.err.strip().splitlines()
    assert not got.out and len(err) == 1 and "Traceback" not in got.err, got
    assert err[0] == ("placement: error: launch 1: 'time=' gives no number as the first "
                      "group of 'time=(\\\\S+)?'"), err
