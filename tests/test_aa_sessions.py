"""`benchmarks/aa_sessions.sh`: A/A sessions recorded by ReFrame, read back by the benchmark."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from held_lock import held_lock, is_held

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "aa_sessions.sh"


def _run(*args: str, timeout: int = 600, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, **env})


@pytest.mark.parametrize("args, message", [
    (["-n", "0"], "-n needs a whole number from 1 to 1000, got '0'"),
    (["-l", "x"], "-l needs a whole number from 1 to 1000, got 'x'"),
    (["-n"], "-n needs a value"),
    (["-m", "full"], "-m needs quick or acceptance, got 'full'"),
    (["--sessions", "3"], "unknown option '--sessions'"),
    (["-n", "18446744073709551619"], "-n needs a whole number from 1 to 1000, got "
                                     "'18446744073709551619'"),     # wrapped to 3
])
def test_bad_options_are_one_line_and_exit_2(args, message):
    proc = _run(*args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"aa_sessions.sh: {message} (see -h)"]


def test_a_series_where_no_session_ran_keeps_nothing_and_fails(tmp_path):
    """A ReFrame that ran nothing (here one that exits at once): the series exited 0 after
    a traceback of the strip step and wrote a set.yaml describing two sessions that never
    ran. Now it says which sessions wrote no report and exits 1, keeping nothing."""
    proc = _run("-n", "2", "-d", "a test set", "-o", str(tmp_path / "aa"),
                REFRAME="/bin/false", PLACEMENT_RESULTS=str(tmp_path / "results"))
    assert proc.returncode == 1, proc.stderr
    assert "aa_sessions.sh: session(s) 1 2 of 2 wrote no run report" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "aa").exists()
    # what the sessions left is kept where the line says (one good session of twelve is
    # hours of work), not removed with the scratch folder
    kept = Path(proc.stderr.split("are kept in ", 1)[1].split(",", 1)[0])
    assert (kept / "run-1.out").is_file()
    shutil.rmtree(kept)


def test_a_folder_variable_that_cannot_be_used_is_refused_before_a_session(tmp_path):
    (tmp_path / "afile").write_text("")
    proc = _run("-n", "1", "-o", str(tmp_path / "aa"),
                PLACEMENT_RESULTS=str(tmp_path / "afile" / "results"))
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"aa_sessions.sh: PLACEMENT_RESULTS '{tmp_path}/afile/results' cannot be made: "
        f"'{tmp_path}/afile' is not a folder: give the path of a folder, or leave it unset "
        "for the default (see -h)"]


def test_a_series_beside_a_run_on_the_same_results_folder_is_refused(tmp_path):
    """Two runs on one results folder share stage/: a second series never starts."""
    results = tmp_path / "results"
    results.mkdir()
    lock = results / ".acceptance.lock"
    (results / ".acceptance.lock.pid").write_text(
        "pid 4242, started 2026-11-23T10:00:00Z by acceptance.sh\n")
    with held_lock(lock):
        proc = _run("-n", "1", "-o", str(tmp_path / "aa"), PLACEMENT_RESULTS=str(results))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"aa_sessions.sh: another acceptance run is using {results} (pid 4242, started "
        "2026-11-23T10:00:00Z by acceptance.sh): wait for it, or give this series its own "
        "PLACEMENT_RESULTS"]
    assert not (tmp_path / "aa").exists()       # nothing started, nothing written


def test_a_series_stopped_while_it_waits_on_the_load_frees_the_results_folder(tmp_path):
    """A series waiting on ``-q``'s load and stopped leaves no process holding the lock: its
    ``sleep`` does not keep the results folder for up to ten more seconds."""
    results = tmp_path / "results"
    results.mkdir()
    series = subprocess.Popen([str(SCRIPT), "-n", "1", "-q", "0", "-o", str(tmp_path / "aa")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PLACEMENT_RESULTS": str(results)})
    try:
        assert "waiting for the 1-minute load average" in series.stderr.readline()
        time.sleep(1)                       # into its wait
    finally:
        series.terminate()
        series.wait(timeout=30)
    assert not is_held(results / ".acceptance.lock")


@pytest.mark.reframe
def test_two_sessions_are_recorded_and_read_by_the_benchmark(tmp_path):
    out = tmp_path / "aa"
    proc = _run("-n", "2", "-l", "2", "-o", str(out), "-d", "two test sessions", "--",
                "-n", "MatmulCheck", PLACEMENT_RESULTS=str(tmp_path / "results"),
                NPB_DIR=str(tmp_path / "no-npb"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = sorted(out.glob("run-*.json"))
    assert len(files) == 2
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import regression_detection as bench
    sessions = bench.sessions(files)
    assert len(sessions) == 2 and sessions[0]
    # every judged value of every session: two launches, from one job
    assert all(len(runs) == 2 for s in sessions for runs, *_ in s.values())
    # described as a validation set: what, where, each session's load, the rules' time
    import yaml
    import provenance
    info = yaml.safe_load((out / "set.yaml").read_text())
    assert info["what"] == "two test sessions" and info["cpus"] >= 1 and info["host"]
    assert info["mode"] == "quick"
    assert len(info["loads"]) == 2 and info["recorded_after_rules_fixed"] == provenance.RULES_FIXED
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    assert info["commit"].split()[0] == head
    # a loaded session beside busy loops goes to hog/; the description keeps both sessions'
    # loads and takes the later text, which describes the whole set
    proc = _run("-n", "1", "-l", "2", "-H", "2", "-o", str(out), "-d", "other words", "--",
                "-n", "MatmulCheck", PLACEMENT_RESULTS=str(tmp_path / "results"),
                NPB_DIR=str(tmp_path / "no-npb"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(sorted((out / "hog").glob("run-*.json"))) == 1
    info = yaml.safe_load((out / "set.yaml").read_text())
    assert info["what"] == "other words" and len(info["loads"]) == 2
    assert len(info["hog_loads"]) == 1 and info["hogs"] == 2
    # one more quiet session into the same DIR: its load joins the others, one per report
    proc = _run("-n", "1", "-l", "2", "-o", str(out), "-d", "three sessions", "--",
                "-n", "MatmulCheck", PLACEMENT_RESULTS=str(tmp_path / "results"),
                NPB_DIR=str(tmp_path / "no-npb"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = yaml.safe_load((out / "set.yaml").read_text())
    assert len(sorted(out.glob("run-*.json"))) == 3 == len(info["loads"])
    assert len(info["hog_loads"]) == 1
