"""Each outcome of the verdict on one real ReFrame run of the kernels.

One real session of the quick matmul and pthread kernels (3 launches each) is
judged by ``placement acceptance summary`` and ``placement baseline diff``
against baselines of three sessions built from that same run, placed so that
the outcome does not depend on this machine's noise: the whole node three
times faster in the baseline (the run is a slow node: FAIL with the node's
line, values regressed with it), one value three times faster in the
baseline (that value regressed beyond the node, the others not), the baseline
twice as slow (improved, PASS), the baseline equal within a few percent with
a wide minimum effect (unchanged), and the baseline spread widely between its
sessions (undecided, PASS, with the change this baseline could call). A
baseline whose launches spread beyond x2 within a session leaves those values
undecided for their states.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from placement import acceptance
from placement.judgement import reading
from placement import cli

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.reframe


@pytest.fixture(scope="module")
def real_run(tmp_path_factory, reframe_bin) -> Path:
    """One real quick session of the matmul and pthread kernels (3 launches per case)."""
    tmp = tmp_path_factory.mktemp("verdict-live")
    report = tmp / "run-report-acceptance-generic-quick-1.json"
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp / "results")}
    proc = subprocess.run(
        [reframe_bin, "-C", "config/settings.py", "-c", "reframe_tests/kernels.py",
         "--mode", "quick", "-n", "MatmulCheck|PthreadOpsCheck", "-x", "load=1",
         "--prefix", str(tmp / "rfm"), f"--report-file={report}", "-r"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return report


def _session(src: dict, factor, seed: int) -> dict:
    """A copy of a run report as another session: every judged value made worse by
    ``factor(key) * jitter`` (times multiplied, rates divided), a new session id.

    Its launches sit within 1 % of their median: the quick matmul's millisecond launches
    can spread beyond x2 in one session on a busy 2-core machine, and a stored session
    that does marks the value and its siblings as having states (never called, tested by
    :func:`test_a_baseline_whose_launches_spread_beyond_the_cap_calls_nothing`)."""
    data = copy.deepcopy(src)
    data["session_info"]["uuid"] = str(uuid.UUID(int=seed + 1))
    rng = np.random.default_rng(seed)
    for run in data["runs"]:
        for tc in run["testcases"]:
            for key, tup in (tc.get("perfvalues") or {}).items():
                var = key.rsplit(":", 1)[-1]
                better = reading.direction.higher_is_better(var, tup[4] if len(tup) > 4 else None)
                if better is None or not isinstance(tup[0], (int, float)):
                    continue
                f = factor((tc.get("display_name"), var)) * float(rng.uniform(0.99, 1.01))
                scale = (lambda x: x / f) if better else (lambda x: x * f)
                tup[0] = scale(tup[0])
                launches = (tc.get("perf_launches") or {}).get(var)
                if launches:
                    mid = scale(float(np.median(launches)))
                    tc["perf_launches"][var] = [mid * float(rng.uniform(0.99, 1.01))
                                                for _ in launches]
    return data


def _baseline(tmp: Path, run: Path, factor, name: str, edit=None) -> Path:
    """A reference file of three sessions built from ``run``; its folder is returned.
    ``edit(s, data)``: changes session ``s`` before it is recorded."""
    src = json.loads(run.read_text())
    folder = tmp / name
    folder.mkdir()
    froms = []
    for s in range(3):
        p = folder / f"session-{s}.json"
        data = _session(src, lambda k, s=s: factor(k, s), 100 * s + 7)
        if edit is not None:
            edit(s, data)
        p.write_text(json.dumps(data))
        froms += ["--from", str(p)]
    os.environ["PLACEMENT_BASELINES"] = str(folder)
    try:
        assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
    finally:
        del os.environ["PLACEMENT_BASELINES"]
    return folder


def _summary(run: Path, folder: Path, monkeypatch) -> tuple[list[str], int]:
    monkeypatch.setenv("PLACEMENT_BASELINES", str(folder))
    return acceptance.summary([run], "generic", "quick", None, 10.0, False, [])


def _matmul(run: Path) -> tuple[str, str]:
    case = next(c for c in reading.run_report.load(run).cases if c.test == "MatmulCheck")
    return case.raw.get("display_name"), "gflops"


def test_a_node_slower_than_its_baseline_fails_with_one_node_line(real_run, tmp_path,
                                                                  monkeypatch):
    folder = _baseline(tmp_path, real_run, lambda k, s: 1 / 3, "fast-node")
    lines, status = _summary(real_run, folder, monkeypatch)
    node = [ln for ln in lines if ln.startswith("NODE generic: node ")]
    assert status == 1 and lines[-1].startswith("ACCEPTANCE generic quick: FAIL")
    assert len(node) == 1 and "slower than its baseline" in node[0], lines
    assert "node=slower" in lines[-1]
    assert sum("regressed with the node" in ln for ln in lines) >= 5


def test_one_value_slower_beyond_the_node_is_regressed_alone(real_run, tmp_path, monkeypatch):
    lone = _matmul(real_run)
    folder = _baseline(tmp_path, real_run, lambda k, s: 1 / 3 if k == lone else 1.0, "lone")
    lines, status = _summary(real_run, folder, monkeypatch)
    regs = [ln for ln in lines if ln.startswith("regression vs baseline sessions")]
    # the case of each environment (gnu, clang) made slower, nothing else
    assert status == 1 and regs, lines
    assert all(f"{lone[0]} @" in r and " gflops regressed: " in r for r in regs), regs
    assert not any(ln.startswith("NODE") for ln in lines)


def test_a_faster_run_is_improved_and_passes(real_run, tmp_path, monkeypatch):
    folder = _baseline(tmp_path, real_run, lambda k, s: 2.0, "slow-baseline")
    lines, status = _summary(real_run, folder, monkeypatch)
    assert status == 0 and lines[-1].startswith("ACCEPTANCE generic quick: PASS"), lines
    assert " 0 regressed, " in lines[-1] and " 0 improved" not in lines[-1]


def test_an_equal_run_is_unchanged_within_a_wide_minimum_effect(real_run, tmp_path, capsys):
    folder = _baseline(tmp_path, real_run, lambda k, s: 1.0, "equal")
    capsys.readouterr()
    os.environ["PLACEMENT_BASELINES"] = str(folder)
    try:
        assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(real_run),
                         "--min-effect", "0.9"]) == 0
    finally:
        del os.environ["PLACEMENT_BASELINES"]
    head = capsys.readouterr().out.splitlines()[0]
    assert " 0 regressed, 0 improved, " in head and " 0 unchanged" not in head, head


def test_a_baseline_spread_between_sessions_leaves_the_run_undecided(real_run, tmp_path,
                                                                      monkeypatch):
    folder = _baseline(tmp_path, real_run, lambda k, s: (0.6, 1.0, 1.6)[s], "spread")
    lines, status = _summary(real_run, folder, monkeypatch)
    assert status == 0 and lines[-1].startswith("ACCEPTANCE generic quick: PASS"), lines
    und = [ln for ln in lines if ln.startswith("UNDECIDED ")]
    assert len(und) == 1 and "could be called alone beyond a change of x" in und[0]


def test_a_baseline_whose_launches_spread_beyond_the_cap_calls_nothing(real_run, tmp_path,
                                                                      monkeypatch):
    """The node three times slower again, but one stored session's matmul launches spread
    beyond x2: the matmul values and their siblings have states and are called neither way;
    the node's line still fails the run."""
    def spread(s: int, data: dict) -> None:
        for run in data["runs"] if s == 0 else ():
            for tc in run["testcases"]:
                if str(tc.get("display_name", "")).startswith("MatmulCheck"):
                    for launches in (tc.get("perf_launches") or {}).values():
                        launches[0] *= 3.0
    folder = _baseline(tmp_path, real_run, lambda k, s: 1 / 3, "states", spread)
    lines, status = _summary(real_run, folder, monkeypatch)
    assert status == 1 and "node=slower" in lines[-1], lines
    assert not any(ln.startswith("regression vs baseline sessions")
                   and "MatmulCheck" in ln for ln in lines), lines
    assert " 0 regressed, " in lines[-1], lines[-1]
