"""Adaptive repeats end to end: the NPB job loop run by bash, asking `placement judge`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from placement.judgement import repeats
from placement import npb


def _job(tmp: Path, base_runs: list[float], sleep_s: float, cap: int) -> list:
    ref = tmp / "sys.yaml"
    ref.write_text(yaml.safe_dump({
        "T": {"$index": ["k"], "a": {"wall": [0.1, -0.1, 0.1, "s"]}},
        "_samples": {"T": {"$index": ["k"], "a": {"wall": {
            "higher_is_better": False, "runs": base_runs, "session": "x"}}}}}))
    walls = ("awk '/^npb-run /{for(i=1;i<=NF;i++) if($i ~ /^wall=/) print substr($i,6)}' "
             "job.out")
    more = repeats.conditions.shell_condition(ref, "T[a].wall", walls, 3, cap, python=sys.executable)
    loop = npb.loop.script(npb.loop.RepeatLoop(3, cap, more), 30)
    script = tmp / "job.sh"
    script.write_text("\n".join(["#!/bin/bash"] + loop.lines(f"sleep {sleep_s}")) + "\n")
    subprocess.run(f"bash {script} > job.out 2> job.err", shell=True, cwd=tmp, timeout=120,
                   check=True)
    return npb.output.parse_runs((tmp / "job.out").read_text())


def test_a_clear_slowdown_stops_at_the_first_verdict(tmp_path):
    # ten stored runs near 10 ms, runs of 0.3 s: thirty times slower, regressed at once
    runs = _job(tmp_path, [0.010 + i * 1e-4 for i in range(10)], 0.3, 8)
    assert len(runs) == 3


def test_an_undecided_case_runs_to_the_cap(tmp_path):
    # stored runs spread from far below to far above: three runs decide nothing
    runs = _job(tmp_path, [0.01, 5.0, 0.02, 4.0], 0.05, 5)
    assert len(runs) == 5


def test_the_judge_runs_with_the_python_that_loads_the_checks():
    assert repeats.conditions.unavailable(sys.executable) == ""


def test_a_python_without_scipy_is_named_in_one_line(tmp_path):
    # a real interpreter without the package's dependencies, as a Spack view without
    # py-placement: the check refuses adaptive repeats at setup instead of a silent loop
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")],
                   check=True, timeout=120)
    bare = str(tmp_path / "bare" / "bin" / "python")
    why = repeats.conditions.unavailable(bare)
    assert why.startswith(f"adaptive repeats need `placement judge`, which cannot run with {bare}: "
                          "ModuleNotFoundError: No module named ")
    assert "spack -e . install" in why and "\n" not in why


def test_a_missing_interpreter_is_named(tmp_path):
    why = repeats.conditions.unavailable(str(tmp_path / "no-python"))
    assert "cannot run with" in why and "no-python" in why and "\n" not in why


def test_the_package_needs_no_ruptures(tmp_path):
    # ruptures only checks the change-point split in the tests: the judge and the report's
    # change points run without it
    (tmp_path / "ruptures").mkdir()
    (tmp_path / "ruptures" / "__init__.py").write_text("raise ImportError('ruptures absent')\n")
    src = Path(repeats.conditions.__file__).resolve().parents[3]
    res = subprocess.run([sys.executable, "-m", "placement", "judge", "--help"],
                         env={"PYTHONPATH": f"{tmp_path}:{src}", "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-c", "import placement.judgement.verdict.changepoints as c; "
                          "print(c.step(list('abcdefghijkl'), [[1.0]] * 6 + [[2.0]] * 6))"],
                         env={"PYTHONPATH": f"{tmp_path}:{src}", "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "session='g'" in res.stdout, res.stderr
