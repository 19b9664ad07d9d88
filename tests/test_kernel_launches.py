"""The kernels' launch loop: one job launches the real kernel several times, each read apart."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from placement.judgement import repeats, reading
from placement.judgement.verdict.guards import GUARD_VARS

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "src" / "kernels"
REFRAME = Path(sys.executable).parent / "reframe"
FAST = {"STATLOOP_ITERS": "8", "STATLOOP_ROUNDS": "2", "OMP_NUM_THREADS": "2"}


@pytest.fixture(scope="module")
def built():
    subprocess.run(["make", "-s", "-C", str(KERNELS)], check=True)
    return KERNELS


def _job(tmp: Path, program: str, launches: int) -> list[tuple[int, str]]:
    loop = repeats.loop_script.launches_script(repeats.loop_script.RepeatLoop.fixed(launches))
    script = tmp / "job.sh"
    script.write_text("\n".join(["#!/bin/bash"] + loop.lines(program)) + "\n")
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, cwd=tmp,
                         env=dict(os.environ, **FAST), timeout=300)
    return repeats.loop_script.split_launches(out.stdout)


def test_each_launch_is_read_apart(built, tmp_path):
    runs = _job(tmp_path, f"{KERNELS / 'matmul'} --n 64 --reps 5", 4)
    assert [rc for rc, _ in runs] == [0, 0, 0, 0]
    for _, text in runs:   # one result line, five timed repetitions, one check per launch
        assert len(re.findall(r"^result kernel=matmul ", text, re.M)) == 1
        assert len(re.findall(r"^sample kernel=matmul ", text, re.M)) == 5
        assert re.search(r"^check kernel=matmul .*ok=1$", text, re.M)


def test_a_failing_launch_keeps_its_status(built, tmp_path):
    runs = _job(tmp_path, f"{KERNELS / 'matmul'} --n 0", 2)
    assert [rc for rc, _ in runs] == [2, 2]
    assert not any("result kernel=" in text for _, text in runs)


def test_unfinished_launch_is_not_a_launch():
    text = "probe ok\nresult kernel=x a=1\nkernel-launch n=1 rc=0\nresult kernel=x a=2\n"
    assert repeats.loop_script.split_launches(text) == [(0, "probe ok\nresult kernel=x a=1")]


def reframe(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PLACEMENT_BASELINES="/nonexistent")
    return subprocess.run([str(REFRAME), "-C", "config/settings.py", "-c",
                           "reframe_tests/kernels.py", "-r", "--tag", "quick", "-p", "gnu",
                           *args], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=600)


@pytest.mark.reframe
@pytest.mark.skipif(not REFRAME.exists(), reason="ReFrame is not in this environment")
def test_reframe_keeps_every_launch_and_reports_the_median(tmp_path):
    report = tmp_path / "run.json"
    out = reframe("-n", "MatmulCheck|MemWriteSingleCheck", "-S", "launches=4",
                  "-S", "reps=5", "--report-file", str(report))
    assert out.returncode == 0, out.stdout[-4000:]
    cases = reading.run_report.load(report).cases
    assert {c.test for c in cases} == {"MatmulCheck", "MemWriteSingleCheck"}
    for c in cases:
        # every variable, one value per launch; the node's CPU pressure is one per job
        assert set(c.launches) == set(c.perf) and "cpu_wait" in c.perf
        for var, values in c.launches.items():
            if var in GUARD_VARS:
                continue
            assert len(values) == 4
            assert c.perf[var].value == pytest.approx(statistics.median(values))
    mm = [c for c in cases if c.test == "MatmulCheck"]
    assert all(len(c.samples["mean_time"]) == 4 * 5 for c in mm)


@pytest.mark.reframe
@pytest.mark.skipif(not REFRAME.exists(), reason="ReFrame is not in this environment")
def test_reframe_refuses_zero_launches():
    out = reframe("-n", "MatmulCheck", "-S", "launches=0")
    assert out.returncode != 0
    assert "launches=0 is not accepted" in out.stdout + out.stderr
    assert "Traceback" not in out.stdout + out.stderr
