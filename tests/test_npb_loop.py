"""The NPB repeat loop run by bash itself, with a stand-in program printing real NPB logs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from placement import npb

LOGS = Path(__file__).parent / "fixtures" / "npb-logs"


def _run(loop: npb.loop.LoopScript, program: str, tmp: Path) -> str:
    script = tmp / "job.sh"
    script.write_text("\n".join(["#!/bin/bash"] + loop.lines(program)) + "\n")
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, cwd=tmp,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_fixed_loop_runs_exactly_the_repeats(tmp_path):
    loop = npb.loop.script(npb.loop.RepeatLoop.fixed(3), 30)
    out = _run(loop, f"timeout {npb.loop.LIMIT_ARG} cat {LOGS / 'is.S.t1.log'}", tmp_path)
    runs = npb.output.parse_runs(out)
    assert [r.rep for r in runs] == [1, 2, 3]
    assert all(r.rc == 0 and r.limit_s == 30 for r in runs)
    assert npb.output.run_problems(runs, 3, "S", 1) == []


def test_more_condition_runs_up_to_the_cap(tmp_path):
    # the hook: ask for more while fewer than 4 runs were made, the cap stops at 5
    loop = npb.loop.script(npb.loop.RepeatLoop(2, 5, more='[ "$npb_rep" -lt 4 ]'), 30)
    out = _run(loop, f"cat {LOGS / 'is.S.t1.log'}", tmp_path)
    assert [r.rep for r in npb.output.parse_runs(out)] == [1, 2, 3, 4]
    loop = npb.loop.script(npb.loop.RepeatLoop(2, 3, more='true'), 30)
    assert len(npb.output.parse_runs(_run(loop, "true", tmp_path))) == 3


def test_full_count_run_sets_the_collapse_budget(tmp_path):
    loop = npb.loop.script(npb.loop.RepeatLoop.fixed(1), 300,
                           full_count="sleep 0.2 > npb-full.out 2>&1", full_threads=2)
    out = _run(loop, "(exit 3)", tmp_path)
    full = npb.output.parse_full_run(out)
    assert full.threads == 2 and full.rc == 0 and 0.1 < full.wall_s < 5 and not full.stopped
    (run,) = npb.output.parse_runs(out)
    assert run.rc == 3 and run.limit_s == 10      # the collapse floor, not the static 300


@pytest.mark.parametrize("lo,hi", [(0, 0), (-1, 5), (3, 2)])
def test_no_loop_without_a_run(lo, hi):
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        npb.loop.RepeatLoop(lo, hi)


def test_no_run_is_a_problem():
    assert npb.output.run_problems([], 0, "S", 1) == ["no run reported (0 asked)"]
