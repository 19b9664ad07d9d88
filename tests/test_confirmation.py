"""The confirmation session: a first-session failure stands only if a second session shows it.

On fixed samples (the verdict's confirmation statistics against SciPy) and on
real run reports of separate sessions of the quick kernels
(``fixtures/aa-launches/``, three launches per case), edited where a value must
move; the live run of both outcomes through ``scripts/acceptance.sh`` is in
``test_acceptance.py``.
"""

from __future__ import annotations

import copy
import math
import re
import json
from pathlib import Path

import numpy as np
import yaml
import pytest
from scipy import stats

from load_probe import with_load
from placement import cli
from placement import acceptance
from placement.acceptance import confirmation
from placement.judgement import baselines, verdict, reading

LAUNCHES = sorted((Path(__file__).parent / "fixtures" / "aa-launches").glob("*.json"))


def _sessions(seed: int, n: int, k: int) -> list[verdict.over_sessions.Series]:
    """``n`` values, ``k`` baseline sessions of 3 launches each, a 2 % session spread."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        level = 10.0 * (1 + i)
        sessions = [(f"s{j}", list(level * np.exp(rng.normal(0, 0.02) + rng.normal(0, 0.005, 3))))
                    for j in range(k)]
        new = list(level * np.exp(rng.normal(0, 0.02) + rng.normal(0, 0.005, 3)))
        out.append(verdict.over_sessions.Series(new, sessions, False, i))
    return out


@pytest.mark.parametrize("k", [2, 5])
def test_a_confirmation_judges_with_the_first_runs_spread_and_shift(k):
    series = _sessions(7, 40, k)
    series[3] = verdict.over_sessions.Series([x * 1.6 for x in series[3].new], series[3].sessions, False, 3)
    series[11] = verdict.over_sessions.Series([x * 1.4 for x in series[11].new], series[11].sessions, False, 11)
    first = verdict.over_sessions.judge_run(series)
    picked = [i for i, v in enumerate(first.verdicts) if v.outcome == verdict.over_sessions.REGRESSED]
    assert {3, 11} <= set(picked)
    # the same data again as the confirmation: the same p-values (the first run's priors,
    # node shift and baseline sessions' shifts), Benjamini-Hochberg over the picked values
    again = verdict.over_sessions.judge_run([series[i] for i in picked], selected_by=first)
    p = [first.verdicts[i].p for i in picked]
    assert [v.p for v in again.verdicts] == pytest.approx(p, rel=1e-9)
    assert [v.q for v in again.verdicts] == pytest.approx(
        list(stats.false_discovery_control(p, method="bh")), rel=1e-9)
    assert again.node is None and again.prior == first.prior
    assert all(v.outcome == verdict.over_sessions.REGRESSED for v in again.verdicts)
    # an unchanged confirmation session of the same values is not regressed
    calm = _sessions(8, 40, k)
    back = [verdict.over_sessions.Series(calm[i].new, series[i].sessions, False, i) for i in picked]
    assert all(v.outcome != verdict.over_sessions.REGRESSED
               for v in verdict.over_sessions.judge_run(back, selected_by=first).verdicts)


def _edit(report: dict, name: str, factor: float) -> dict:
    """A copy of a run report with every value of the case ``name`` ``factor`` times worse."""
    data = copy.deepcopy(report)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc["display_name"] != name:
                continue
            for key, tup in (tc.get("perfvalues") or {}).items():
                var = key.rsplit(":", 1)[-1]
                better = reading.direction.higher_is_better(var, tup[4])
                if better is None or not isinstance(tup[0], (int, float)):
                    continue
                f = (lambda x: x / factor) if better else (lambda x: x * factor)
                tup[0] = f(tup[0])
                if var in (tc.get("perf_launches") or {}):
                    tc["perf_launches"][var] = [f(x) for x in tc["perf_launches"][var]]
    return data


CASE = "MemWriteSingleCheck %scale=small"


@pytest.fixture
def baseline(tmp_path, monkeypatch):
    """A baseline of three real sessions; the first session and its confirmation are others."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    froms = [a for p in LAUNCHES[:3] for a in ("--from", str(p))]
    assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
    return tmp_path


def _write(tmp: Path, name: str, data: dict) -> Path:
    p = tmp / name
    p.write_text(json.dumps(data))
    return p


def _regressed_first(tmp: Path) -> Path:
    first = json.loads(LAUNCHES[-1].read_text())
    assert any(tc["display_name"] == CASE for r in first["runs"] for tc in r["testcases"])
    return _write(tmp, "first.json", _edit(first, CASE, 3.0))


def test_a_regression_the_confirmation_does_not_show_is_dismissed_and_said(baseline):
    first = _regressed_first(baseline)
    hashes, why = acceptance.to_confirm([first], "generic")
    assert hashes and why == "the failed, regressed and grossly worse checks"
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [])
    assert status == 1 and any(CASE in ln and "regressed" in ln for ln in lines)
    calm = _write(baseline, "confirm.json", json.loads(LAUNCHES[-2].read_text()))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=calm)
    unconfirmed = [ln for ln in lines if ln.startswith("UNCONFIRMED ")]
    assert unconfirmed and all(CASE in ln and "[first session: regressed" in ln
                               for ln in unconfirmed), lines
    assert not any(ln.startswith("regression vs") for ln in lines)
    assert status == 0 and " confirmed 0 of " in lines[-1], lines[-1]


def test_a_regression_the_confirmation_shows_again_fails(baseline):
    first = _regressed_first(baseline)
    again = _write(baseline, "confirm.json",
                   _edit(json.loads(LAUNCHES[-2].read_text()), CASE, 3.0))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1 and not any(ln.startswith("UNCONFIRMED") for ln in lines)
    regs = [ln for ln in lines if ln.startswith("regression vs baseline sessions")]
    assert regs and all(CASE in ln for ln in regs)
    n = len(regs)
    assert f" confirmed {n} of {n}" in lines[-1]


def _reference_failure(data: dict, name: str) -> dict:
    """A copy where ReFrame failed the case ``name`` on its reference."""
    data = copy.deepcopy(data)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc["display_name"] == name:
                tc.update(result="fail", fail_phase="performance", fail_reason=(
                    "performance error: failed to meet reference(s): gbps_1M=1.0 GB/s, "
                    "expected 3.0 (l=1.5, u=inf)"))
    return data


def test_a_reference_failure_stands_unless_its_confirmation_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))    # no baseline: ReFrame only
    src = json.loads(LAUNCHES[-1].read_text())
    first = _write(tmp_path, "first.json", _reference_failure(src, CASE))
    hashes, _ = acceptance.to_confirm([first], "generic")
    expected = {tc["hashcode"] for r in src["runs"] for tc in r["testcases"]
                if tc["display_name"] == CASE}
    assert set(hashes) == expected
    # passed again: dismissed, said, and the run passes
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=LAUNCHES[-2])
    assert status == 0, lines
    un = [ln for ln in lines if ln.startswith("UNCONFIRMED ")]
    assert len(un) == 1
    assert all("[first session: performance: gbps_1M=1.0" in ln for ln in un)
    # failed again: stands
    again = _write(tmp_path, "again.json", _reference_failure(json.loads(LAUNCHES[-2].read_text()),
                                                              CASE))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1 and any(ln.startswith(f"FAIL {CASE}") for ln in lines)
    assert " confirmed " in lines[-1] and not any(ln.startswith("UNCONFIRMED") for ln in lines)


def test_a_failure_whose_confirmation_was_skipped_stands_and_is_not_called_confirmed(
        tmp_path, monkeypatch):
    """A confirmation session whose cases were all skipped ran nothing again: the failure
    stands, the line says it was not run again, and nothing is counted confirmed (it read
    ``confirmed 1 of 1``)."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    first = _write(tmp_path, "first.json",
                   _reference_failure(json.loads(LAUNCHES[-1].read_text()), CASE))
    skipped = json.loads(LAUNCHES[-2].read_text())
    for run in skipped["runs"]:
        for tc in run["testcases"]:
            tc.update(result="skip", fail_phase=None, fail_reason="skipped: no such node")
    again = _write(tmp_path, "again.json", skipped)
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1 and any(ln.startswith(f"FAIL {CASE}") for ln in lines), lines
    assert " confirmed " not in lines[-1], lines[-1]
    assert "not confirmed: the confirmation session did not run 1 of the first session's " \
        "failures again (they stand)" in lines[-1], lines[-1]


def test_a_confirmation_that_did_not_run_or_cannot_be_read_leaves_the_failures(tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    first = _write(tmp_path, "first.json",
                   _reference_failure(json.loads(LAUNCHES[-1].read_text()), CASE))
    broken = tmp_path / "confirm.json"
    broken.write_text("{not json")
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=broken)
    assert status == 1 and "confirmation session unreadable" in lines[-1]
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       not_confirmed=["the time box of 60s is spent"])
    assert status == 1 and "not confirmed: the time box of 60s is spent" in lines[-1]


def _slow_node(report: dict, factor: float) -> dict:
    for name in {tc["display_name"] for r in report["runs"] for tc in r["testcases"]}:
        report = _edit(report, name, factor)
    return report


def test_a_node_line_is_confirmed_by_the_whole_run_again(baseline):
    data = _slow_node(json.loads(LAUNCHES[-1].read_text()), 3.0)  # the whole node 3x slower
    slow = _write(baseline, "slow.json", data)
    hashes, why = acceptance.to_confirm([slow], "generic")
    assert why == "the node line: the whole run"
    ran = {tc["hashcode"] for r in data["runs"] for tc in r["testcases"] if not tc.get("fixture")}
    assert set(hashes) == ran
    # still slow in the confirmation session: the node line and its values stand
    again = _write(baseline, "again.json", _slow_node(json.loads(LAUNCHES[-2].read_text()), 3.0))
    lines, status = acceptance.summary([slow], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1 and " node=slower " in lines[-1]
    assert sum(ln.startswith("NODE generic: node ") for ln in lines) == 1
    assert not any(ln.startswith("UNCONFIRMED NODE") for ln in lines)
    # a quiet confirmation session: the node line is dismissed, and said
    lines, status = acceptance.summary([slow], "generic", "quick", None, 10.0, False, [],
                                       confirm=LAUNCHES[-2])
    assert status == 0 and "node=slower" not in lines[-1], lines
    (node,) = [ln for ln in lines if ln.startswith("UNCONFIRMED NODE generic: [first session: "
                                                    "node ")]
    assert "its confirmation session: node shift " in node
    assert not any(ln.startswith(("NODE", "regression vs")) for ln in lines)


def test_a_node_line_no_second_session_saw_fails_only_at_once(baseline):
    """A node line below NODE_AT_ONCE that no confirmation session decided (the time box
    spent, or none run) leaves the run INCOMPLETE, never FAIL; a node three times as slow
    fails at once."""
    tests = (1.3, 4, "not confirmed: no confirmation session ran"), (3.0, 1, None)
    for factor, status_want, said in tests:
        data = _slow_node(json.loads(LAUNCHES[-1].read_text()), factor)
        slow = _write(baseline, f"slow-{factor}.json", data)
        lines, status = acceptance.summary([slow], "generic", "quick", None, 10.0, False, [],
                                           not_confirmed=["the time box of 60s is spent"])
        (node,) = [ln for ln in lines if ln.startswith("NODE generic: node ")]
        assert status == status_want, lines
        assert lines[-1].startswith("ACCEPTANCE generic quick: "
                                    + ("INCOMPLETE" if status == 4 else "FAIL"))
        if said:
            assert said in node and "node=slower" not in lines[-1]
            assert "a node line that no confirmation session decided" in lines[-1]
        else:
            assert " node=slower" in lines[-1] and "not confirmed" not in node


def _shift(percent: float, moved: int = 80, values: int = 100) -> verdict.over_sessions.NodeShift:
    """A node line of one session against one baseline session (untested: no p)."""
    c = math.log1p(percent)
    return verdict.over_sessions.NodeShift(c, values, moved, None, 1,
                             verdict.node_shift.flagged(c, moved, values, None, False))


@pytest.mark.parametrize("first, again, shown", [
    (1.00, 1.00, True),     # the confirmation's own line fails
    (0.71, 0.45, True),     # under the bar alone, the two sessions' mean +58%
    (0.71, 0.10, False),    # the slowdown did not last: mean +31%
    (0.55, 0.40, False),    # mean +47%, under the bar
    (0.71, -0.45, False),   # the confirmation faster
])
def test_a_node_line_stands_when_both_sessions_together_reach_the_bar(first, again, shown):
    """A first node line of NODE_AT_ONCE (it fails with no confirmation session) is not
    dismissed by a confirmation that reads just under the bar: the two sessions' mean
    shift decides (on the log scale: sqrt(1.71 x 1.45) = 1.575)."""
    a, b = _shift(first), _shift(again)
    assert a.at_once
    assert math.isclose(math.expm1((a.shift + b.shift) / 2),
                        math.sqrt((1 + first) * (1 + again)) - 1)
    assert verdict.node_shift.shown_again(a, b) is shown
    assert not verdict.node_shift.shown_again(a, None)
    if again < 0.5:     # one whose values did not move together shows nothing
        assert not verdict.node_shift.shown_again(a, _shift(again, moved=30))


def test_a_tested_node_line_under_the_bar_needs_the_confirmation_s_own_line():
    """Below NODE_AT_ONCE (a line three baseline sessions tested) the confirmation must
    show a node line of its own: the two sessions' mean is the rule of the at-once bar."""
    c = math.log1p(0.30)
    first = verdict.over_sessions.NodeShift(c, 100, 80, 0.001, 3, True)
    assert first.fails and not first.at_once
    assert not verdict.node_shift.shown_again(first, _shift(0.45))


def test_one_baseline_session_confirms_a_slow_node_over_both_sessions(one_session):
    """Against one baseline session, a node 2x slower in the first session and 1.3x in its
    confirmation (a slow baseline session makes a real change read so) fails on one NODE
    line; a confirmation back to the baseline dismisses it."""
    first = _write(one_session, "slow.json", _slow_node(_three(TWO_HOURS[3]), 2.0))
    for factor, status in ((1.3, 1), (1.0, 0)):
        again = _write(one_session, f"again-{factor}.json",
                       _slow_node(_three(TWO_HOURS[5]), factor))
        lines, got = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                        confirm=again)
        assert got == status, lines
        if status:
            assert sum(ln.startswith("NODE generic: node ") for ln in lines) == 1
            assert " node=slower " in lines[-1]
        else:
            assert any(ln.startswith("UNCONFIRMED NODE generic: ") for ln in lines)


def test_one_baseline_session_says_what_it_cannot_call_of_the_node(tmp_path, monkeypatch):
    """Against one baseline session, a node 15% slower on every value is no node line and no
    regression: a NOTE says that one session cannot tell it from ordinary variation, and
    what to do."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    assert cli.main(["baseline", "record", "--system", "generic", "--from",
                     str(LAUNCHES[0])]) == 0
    slow = _write(tmp_path, "slow.json", _slow_node(json.loads(LAUNCHES[1].read_text()), 1.15))
    lines, status = acceptance.summary([slow], "generic", "quick", None, 10.0, False, [])
    assert not any(ln.startswith("NODE ") for ln in lines), lines
    (note,) = [ln for ln in lines if ln.startswith("NOTE generic: node shift +")]
    assert "one baseline session cannot tell a shift under 50% from the node's ordinary " \
           "variation between sessions" in note
    assert "placement baseline record --add --from latest" in note
    assert " node=slower" not in lines[-1]


def test_candidates_are_reference_failures_and_regressed_cases_only():
    final = {("a", "s", "e"): {"hashcode": "aa", "display_name": "A", "system": "s",
                               "partition": "p", "environ": "e", "result": "fail",
                               "fail_phase": "performance"},
             ("b", "s", "e"): {"hashcode": "bb", "display_name": "B", "system": "s",
                               "partition": "p", "environ": "e", "result": "fail",
                               "fail_phase": "sanity"},
             ("c", "s", "e"): {"hashcode": "cc", "display_name": "C", "system": "s",
                               "partition": "p", "environ": "e", "result": "pass"},
             ("d", "s", "e"): {"hashcode": "dd", "display_name": "D", "system": "s",
                               "partition": "p", "environ": "e", "result": "pass"},
             ("w", "s", "e"): {"hashcode": "ww", "display_name": "W", "system": "s",
                               "partition": "p", "environ": "e", "result": "fail",
                               "fail_phase": "performance",
                               "perfvalues": {"s:p:stopped": [2, 0, None, 0, "runs", "fail"]}}}
    got = confirmation.candidates(final, {("C", "s:p+e", "gbps")})
    # a sanity failure is no state of the node, a watchdog stop is a failure to finish
    assert got == ["aa", "cc"]


def test_cpu_wait_is_the_share_of_the_jobs_time_with_a_task_waiting():
    from placement.testlib import node_load as job_load
    # 2 s between the readings, 1.5 s of them with a task waiting (PSI counts microseconds)
    assert job_load.waited_share([(10_000_000_000, 100), (12_000_000_000, 1_500_100)]) == 0.75
    assert math.isnan(job_load.waited_share([(10_000_000_000, 100)]))   # no PSI, or one read
    assert job_load.waited_share(list(map(tuple, [[1, 0], [2, 5]]))) == 1.0   # clipped
    text = ('cpu_pressure at_ns=1000000000 some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n'
            'result kernel=x\ncpu_pressure at_ns=3000000000 some avg10=1.0 avg60=0.1 '
            'avg300=0.0 total=200007\ncpu_pressure at_ns=4000000000 \n')
    found = [(int(a), int(b)) for a, b in job_load._LINE.findall(text)]
    assert job_load.waited_share(found) == pytest.approx(0.1)


def _case_with(wait: float | None) -> dict:
    perf = {} if wait is None else {"generic:default:cpu_wait": [wait, None, None, None, "%", None]}
    return {"perfvalues": perf}


def test_a_run_is_loaded_when_its_median_case_waited_from_the_limit_on():
    from placement.judgement import verdict
    quiet = verdict.node_load.of_cases([_case_with(w) for w in (2, 5, 90, 3, 4, None, float("nan"))])
    assert quiet.cases == 5 and quiet.median == 0.04 and not quiet.loaded
    busy = verdict.node_load.of_cases([_case_with(w) for w in (80, 95, 10, 70, 99)])
    assert busy.median == 0.8 and busy.loaded
    assert "tasks waited for a CPU 80% of the time in the median of 5 cases" in busy.line()
    assert not verdict.node_load.of_cases([_case_with(w) for w in (80, 95)]).loaded   # too few cases
    assert verdict.node_load.of_cases([_case_with(None)]) is None                     # no PSI


def test_a_run_over_several_nodes_is_loaded_when_one_nodes_own_cases_are():
    """Each node's cases give its load: one busy node of four never moves the run's median
    case, and its confirmation shows the line again only on the same node."""
    from placement.judgement import verdict

    def run(waits: dict[str, tuple[float, ...]]) -> verdict.node_load.Load:
        return verdict.node_load.of_cases([{**_case_with(w), "display_name": f"C %.nid={n}"}
                                   for n, ws in waits.items() for w in ws])

    quiet = (2, 3, 4, 5, 6)
    first = run({"n1": quiet, "n2": quiet, "n3": (80, 90, 85, 95, 70), "n4": quiet})
    assert first.median < verdict.node_load.LOAD_LIMIT and first.loaded and first.loaded_nodes() == ["n3"]
    assert first.line().startswith("n3 under a competing load: tasks waited for a CPU 85% of "
                                   "the time in the median of 5 cases (from 50%")
    assert verdict.node_load.shown_again(first, first)
    other = run({"n1": (80, 90, 85, 95, 70), "n2": quiet, "n3": quiet, "n4": quiet})
    assert other.loaded and not verdict.node_load.shown_again(first, other)
    calm = run({n: quiet for n in ("n1", "n2", "n3", "n4")})
    assert not calm.loaded and calm.text().startswith("n1: tasks waited for a CPU 4%")
    assert not verdict.node_load.shown_again(first, calm) and not verdict.node_load.shown_again(first, None)
    one = verdict.node_load.of_cases([_case_with(w) for w in (80, 90, 85, 95, 70)])
    assert not one.nodes and verdict.node_load.shown_again(one, one)   # one node: as before


def test_waits_a_case_causes_by_design_do_not_count_toward_the_nodes_load():
    """A case under its own background load, or with more threads than PUs, waits for a CPU
    on purpose: the load line leaves it out (a quiet quick run here had such a case at
    59%)."""
    from types import SimpleNamespace as NS

    from placement.judgement import verdict
    from placement.testlib.node_load import own_waits
    assert own_waits(NS(load=1, num_threads=2, topology_pus=2)).startswith(
        "its own background load")
    assert own_waits(NS(load=0, num_threads=4, topology_pus=2)) == "4 threads on 2 PUs"
    assert own_waits(NS(contended=True)) == "its ranks poll beside ReFrame on too few CPUs"
    assert own_waits(NS(load=0, num_threads=2, topology_pus=2)) == ""
    own = [{**_case_with(w), "waits_by_design": "4 threads on 2 PUs"} for w in (90, 95, 99)]
    load = verdict.node_load.of_cases([_case_with(w) for w in (2, 5, 3, 4, 6)] + own)
    assert load.cases == 5 and load.median == 0.04 and not load.loaded
    assert verdict.node_load.of_cases(own) is None       # nothing measured the node's own load


def test_a_loaded_node_fails_on_one_line_unless_its_confirmation_is_quiet(tmp_path, monkeypatch):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    src = json.loads(LAUNCHES[-1].read_text())
    busy = _write(tmp_path, "busy.json", with_load(src, 85.0))
    hashes, why = acceptance.to_confirm([busy], "generic")
    assert why == "the node line: the whole run" and len(hashes) == len(
        {tc["hashcode"] for r in src["runs"] for tc in r["testcases"] if not tc.get("fixture")})
    lines, status = acceptance.summary([busy], "generic", "quick", None, 10.0, False, [])
    (node,) = [ln for ln in lines if ln.startswith("NODE ")]
    assert status == 1 and " node=loaded" in lines[-1]
    assert node.startswith("NODE generic: node under a competing load: tasks waited for a CPU "
                           "85% of the time in the median of ")
    still = _write(tmp_path, "still.json", with_load(json.loads(LAUNCHES[-2].read_text()), 70.0))
    lines, status = acceptance.summary([busy], "generic", "quick", None, 10.0, False, [],
                                       confirm=still)
    assert status == 1 and " confirmed 1 of 1" in lines[-1]
    quiet = _write(tmp_path, "quiet.json", with_load(json.loads(LAUNCHES[-2].read_text()), 3.0))
    lines, status = acceptance.summary([busy], "generic", "quick", None, 10.0, False, [],
                                       confirm=quiet)
    assert status == 0 and "node=loaded" not in lines[-1], lines
    (un,) = [ln for ln in lines if ln.startswith("UNCONFIRMED NODE")]
    assert un.endswith("its confirmation session: tasks waited for a CPU 3% of the time in the "
                       f"median of {len(hashes)} cases")


def _launch_failure(data: dict, name: str) -> dict:
    """A copy where the case ``name`` failed its sanity: a task that did not launch."""
    data = copy.deepcopy(data)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc["display_name"] == name:
                tc.update(result="fail", fail_phase="sanity",
                          fail_reason="sanity error: srun: error: task 1 launch failed")
    return data


def test_a_failure_seen_in_both_sessions_counts_as_confirmed(tmp_path, monkeypatch):
    """A loaded first session is confirmed by the whole run again; a case that did not launch
    in both sessions is a failure the confirmation showed again: ``confirmed 1 of 2`` beside
    the dismissed load line (it read ``confirmed 0 of 1``), and the run fails on it. Had it
    launched in the confirmation, it is tried, not confirmed, and still fails the run."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    busy = _write(tmp_path, "busy.json",
                  _launch_failure(with_load(json.loads(LAUNCHES[-1].read_text()), 85.0), CASE))
    hashes, why = acceptance.to_confirm([busy], "generic")
    assert why == "the node line: the whole run"
    quiet = with_load(json.loads(LAUNCHES[-2].read_text()), 3.0)
    again = _write(tmp_path, "again.json", _launch_failure(quiet, CASE))
    lines, status = acceptance.summary([busy], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1 and " confirmed 1 of 2" in lines[-1], lines
    assert any(ln.startswith(f"FAIL {CASE} ") and "task 1 launch failed" in ln for ln in lines)
    assert any(ln.startswith("UNCONFIRMED NODE generic: ") for ln in lines)
    launched = _write(tmp_path, "launched.json", quiet)
    lines, status = acceptance.summary([busy], "generic", "quick", None, 10.0, False, [],
                                       confirm=launched)
    assert status == 1 and " confirmed 0 of 2" in lines[-1], lines
    assert any(ln.startswith(f"FAIL {CASE} ") for ln in lines)


def test_decide_counts_a_failure_the_confirmation_ran_again():
    """The count alone: a sanity failure seen again is confirmed; one the confirmation did
    not run is neither confirmed nor tried; a fixture is never counted."""
    fail = {"result": "fail", "fail_phase": "sanity", "fail_reason": "launch failed"}
    first = {("a", "s", "e"): fail, ("b", "s", "e"): fail,
             ("f", "s", "e"): {**fail, "fixture": True}}
    again = {("a", "s", "e"): fail, ("f", "s", "e"): fail}
    conf = confirmation.decide(first, again, {}, {}, lambda tc: tc["fail_reason"])
    assert conf.confirmed == 1 and conf.text() == " confirmed 1 of 1"
    conf = confirmation.decide(first, {("a", "s", "e"): {"result": "pass"}}, {}, {},
                               lambda tc: tc["fail_reason"])
    assert conf.confirmed == 0 and conf.text() == " confirmed 0 of 1"
    assert not conf.dismissed_cases       # a failure to launch is never dismissed


def test_the_report_leads_with_the_load_line(tmp_path):
    from placement.report import lead
    busy = _write(tmp_path, "busy.json", with_load(json.loads(LAUNCHES[-1].read_text()), 85.0))
    cases = reading.run_report.load(busy).cases
    sec = lead.lead_section(cases, [], tmp_path)
    assert sec.status == "FAIL" and sec.banner.startswith("**FAIL**: ")
    assert sec.text.split("\n\n")[0].startswith(
        "**NODE generic**: node under a competing load: tasks waited for a CPU 85% of the time")
    quiet = _write(tmp_path, "quiet.json", with_load(json.loads(LAUNCHES[-1].read_text()), 3.0))
    sec = lead.lead_section(reading.run_report.load(quiet).cases, [], tmp_path)
    assert sec.banner.startswith("**PASS**: ") and "competing load" not in sec.text


def test_the_report_answers_as_the_acceptance_summary_does(tmp_path):
    """A confirmation can dismiss what the first session failed: given the summary, the
    report's verdict is the summary's word, and the first session's facts are worded so."""
    from placement.acceptance import record
    from placement.report import lead
    busy = _write(tmp_path, "busy.json", with_load(json.loads(LAUNCHES[-1].read_text()), 85.0))
    cases = reading.run_report.load(busy).cases
    summary = ["UNCONFIRMED NODE generic: [first session: node under a competing load] its "
               "confirmation session: tasks waited for a CPU 3% of the time in the median of 9 "
               "cases", "ACCEPTANCE generic quick: PASS 9 passed, 0 failed (0 perf regressions) "
               "report=x.json skipped=0 confirmed 0 of 1"]
    answer = record.VerdictRecord("generic", "quick", "PASS", 0, ["x.json"], {}, summary,
                                  [record.Finding("UNCONFIRMED", summary[0],
                                                  data={"what": "load"}),
                                   record.Finding("ACCEPTANCE", summary[1])],
                                  confirmation={"ran": True, "confirmed": 0})
    sec = lead.lead_section(cases, [], tmp_path, answer)
    assert sec.status == "PASS"
    assert sec.banner == ("**PASS**: the acceptance run's answer, its confirmation session "
                          "included (its summary below).")
    assert sec.text.startswith("First session (build fixtures not counted, the acceptance line "
                            "counts them): ")
    (table,) = sec.tables
    assert [r[0] for r in table.rows] == summary
    # without a summary the first session's answer is the report's
    assert lead.lead_section(cases, [], tmp_path).banner.startswith("**FAIL**: ")


def test_a_sites_control_value_draws_the_node_line_on_real_sessions(baseline, capsys):
    """With a control value set (`placement baseline control`), its change is the node's:
    the control alone 50% slower fails the run on one node line naming it; a run without
    the control says so and falls back to the median of the values."""
    from placement.judgement.verdict.intervals import entry_name
    data = yaml.safe_load((baseline / "generic.yaml").read_text())
    (name,) = [entry_name(e) for e in baselines.samples.entries(data)
               if e[0] == "MemWriteSingleCheck" and e[2] == "gbps_16M"]
    assert cli.main(["baseline", "control", "--system", "generic", name]) == 0
    first = _write(baseline, "first.json", _edit(json.loads(LAUNCHES[-1].read_text()), CASE, 1.5))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [])
    (node,) = [ln for ln in lines if ln.startswith("NODE ")]
    assert re.match(rf"NODE generic: node \d+% slower than its baseline by its control "
                    rf"value {re.escape(name)} \(\d+ of 37 values moved with it\)", node)
    assert status == 1 and " node=slower" in lines[-1]
    # the control did not run: a NOTE, and the median of the values decides (no node line)
    without = json.loads(LAUNCHES[-1].read_text())
    for run in without["runs"]:
        run["testcases"] = [tc for tc in run["testcases"] if tc["display_name"] != CASE]
    lines, status = acceptance.summary([_write(baseline, "without.json", without)], "generic",
                                       "quick", None, 10.0, False, [])
    assert f"NOTE control value {name} not judged in this run (not run, or no stored runs): " \
           "the node's shift is the median of the values" in lines
    assert not any(ln.startswith("NODE ") for ln in lines)


#: twenty sessions of the two-hour A/A set: each case's launches as a site's default three
TWO_HOURS = sorted((Path(__file__).parent / "fixtures" / "aa-sessions-2h").glob("run-*.json"))
#: a case whose three launches agree within 1 % in these sessions
TIGHT = "DataMapCheck %init=parallel %policy=first-touch %scale=small"


def _three(path: Path) -> dict:
    """A stripped run report with each value's first three launches, as a site's default."""
    data = json.loads(path.read_text())
    for r in data["runs"]:
        for tc in r["testcases"]:
            if tc.get("perf_launches"):
                tc["perf_launches"] = {k: v[:3] for k, v in tc["perf_launches"].items()}
    return data


@pytest.fixture
def one_session(tmp_path, monkeypatch):
    """A baseline of one real session, as a site has after its first run."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    base = _write(tmp_path, "base.json", _three(TWO_HOURS[1]))
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(base)]) == 0
    return tmp_path


def _gross(judged: acceptance.Judged) -> set:
    return {k for k, v in judged.items() if v.gross is not None}


def test_a_gross_change_at_one_baseline_session_is_decided_by_a_second_session(one_session):
    base = one_session
    # unchanged: nothing gross
    calm = _write(base, "calm.json", _three(TWO_HOURS[2]))
    judged, _ = acceptance.judge_values(acceptance.readable([calm])[0], "generic")
    assert not _gross(judged)
    # a case 40 % slower: undecided in the first session (one session lends no spread),
    # marked gross, and sent to a confirmation session
    first = _write(base, "first.json", _edit(_three(TWO_HOURS[2]), TIGHT, 1.4))
    judged, _ = acceptance.judge_values(acceptance.readable([first])[0], "generic")
    (key,) = _gross(judged)
    assert key[0] == TIGHT and judged[key].outcome == verdict.over_sessions.UNDECIDED
    assert "; gross: +44% beyond its worst baseline session with tight launches, a second " \
        "session decides" in judged[key].text()
    # the report's lead section names it as the first session's, undecided until decided
    from placement.report import lead
    from placement.report import verdicts as report_verdicts
    cases = reading.run_report.load(first).cases
    sec = lead.lead_section(cases, report_verdicts.judgements(cases), base)
    (row,) = sec.tables[0].rows
    assert row[0] == "DataMapCheck[gnu,small,parallel,first-touch].mlups"
    assert row[1] == "grossly worse (+44% beyond its worst baseline session)"
    hashes, why = acceptance.to_confirm([first], "generic")
    assert why == "the failed, regressed and grossly worse checks"
    assert set(hashes) == {tc["hashcode"] for r in json.loads(first.read_text())["runs"]
                           for tc in r["testcases"] if tc["display_name"] == TIGHT}
    # no confirmation ran: the run is not a plain PASS
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [])
    assert status == 4 and " INCOMPLETE " in lines[-1], lines[-1]
    assert "1 grossly worse value(s) that no confirmation session decided" in lines[-1]
    # 40 % slower again in the next session: regressed, and the run fails
    again = _write(base, "again.json", _edit(_three(TWO_HOURS[3]), TIGHT, 1.4))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    (reg,) = [ln for ln in lines if ln.startswith("regression vs baseline sessions")]
    assert status == 1, lines
    assert reg.startswith(f"regression vs baseline sessions: {TIGHT} @generic:default+gnu mlups "
                          "regressed gross in two sessions (+44% beyond its worst baseline "
                          "session in the first): median -30.6% ")
    assert " confirmed 1 of 1 " in lines[-1]
    # an unchanged next session: dismissed, said, and the run passes
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=calm)
    (un,) = [ln for ln in lines if ln.startswith("UNCONFIRMED ")]
    assert status == 0 and " confirmed 0 of 1 " in lines[-1], lines
    assert un.startswith(f"UNCONFIRMED {TIGHT} @generic:default+gnu mlups [first session: "
                         "undecided: ")
    assert not any(ln.startswith("regression vs") for ln in lines)


def _one_launch_slow(report: dict, name: str, factor: float) -> dict:
    """A copy of a run report whose case ``name`` has its last launch ``factor`` times worse
    (its median, the reported value, unchanged): a launch that fell into a slow state."""
    data = copy.deepcopy(report)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc["display_name"] == name:
                for var, runs in tc["perf_launches"].items():
                    runs[-1] = runs[-1] / factor if var == "mlups" else runs[-1] * factor
    return data


def test_a_gross_value_is_confirmed_by_its_median_however_its_launches_spread(one_session):
    """The confirmation session asks whether the change lasted, not again whether its
    launches are tight (:func:`gross_again`): 40 % slower in both sessions, one of the
    second session's three launches in a slow state (its rate 60 % lower still), is
    regressed; the first session alone would not have called those launches gross."""
    base = one_session
    first = _write(base, "first.json", _edit(_three(TWO_HOURS[2]), TIGHT, 1.4))
    slow = _one_launch_slow(_edit(_three(TWO_HOURS[3]), TIGHT, 1.4), TIGHT, 1.6)
    again = _write(base, "again.json", slow)
    judged, _ = acceptance.judge_values(acceptance.readable([again])[0], "generic")
    assert not any(k[0] == TIGHT for k in _gross(judged))    # not tight: never chosen first
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1 and " confirmed 1 of 1 " in lines[-1], lines
    (reg,) = [ln for ln in lines if ln.startswith("regression vs baseline sessions")]
    assert reg.startswith(f"regression vs baseline sessions: {TIGHT} @generic:default+gnu mlups "
                          "regressed gross in two sessions ")


def test_a_lone_value_in_a_slower_session_is_gross_and_confirmed(one_session):
    """A session 19 % slower as a whole (every case), one tight case 40 % slower than its
    baseline session (so only 18 % beyond the node's shift): gross, as a slower node's shift
    is not taken off (:func:`gross_shift`), and regressed when the next session, the
    node no longer slow, still shows it 40 % slower."""
    first = _write(one_session, "first.json",
                   _edit(_slow_node(_three(TWO_HOURS[2]), 1.19), TIGHT, 1.40 / 1.19))
    judged, _ = acceptance.judge_values(acceptance.readable([first])[0], "generic")
    assert any(k[0] == TIGHT for k in _gross(judged))
    again = _write(one_session, "again.json", _edit(_three(TWO_HOURS[3]), TIGHT, 1.4))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=again)
    assert status == 1, lines
    assert any(ln.startswith(f"regression vs baseline sessions: {TIGHT} @generic:default+gnu "
                             "mlups regressed gross in two sessions ") for ln in lines), lines


def test_a_value_its_check_says_has_states_is_never_gross(one_session):
    """The same tight case 40 % slower, its check naming its states (``no_bound``, as NPB's
    runs shorter than ``NPB_SHORT_RUN_S`` do): one baseline session leaves it undecided,
    never gross, so no confirmation session can make it regressed."""
    data = _edit(_three(TWO_HOURS[2]), TIGHT, 1.4)
    for run in data["runs"]:
        for tc in run["testcases"]:
            if tc["display_name"] == TIGHT:
                tc["no_bound"] = {v: "states between sessions" for v in tc["perf_launches"]}
    first = _write(one_session, "states.json", data)
    judged, _ = acceptance.judge_values(acceptance.readable([first])[0], "generic")
    mine = {k: v for k, v in judged.items() if k[0] == TIGHT}
    assert mine and not _gross(judged)
    assert all(v.outcome == verdict.over_sessions.UNDECIDED for v in mine.values())


def test_a_state_of_the_node_for_one_session_is_gross_and_dismissed_by_the_next(one_session):
    """Real A/A: the pthread chain of one session ran 41 % slower with launches within 2 %
    (a state of this virtual machine); the next session did not show it."""
    first = _write(one_session, "first.json", _three(TWO_HOURS[3]))
    judged, _ = acceptance.judge_values(acceptance.readable([first])[0], "generic")
    (key,) = _gross(judged)
    assert key[0].startswith("PthreadOpsCheck %affinity=compact") and key[2] == "chain"
    nxt = _write(one_session, "next.json", _three(TWO_HOURS[4]))
    lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                       confirm=nxt)
    assert status == 0 and " PASS " in lines[-1] and " confirmed 0 of 1 " in lines[-1], lines
    (un,) = [ln for ln in lines if ln.startswith("UNCONFIRMED ")]
    assert " chain [first session: undecided: " in un


def test_an_acceptance_summary_reads_its_baseline_once(baseline, monkeypatch):
    """A summary judges the run, its confirmation session (twice: alone and against the
    first), the file's provenance and its nodes against one reference file: it reads and
    checks that file once (each reading is seconds at 100k entries), and leaves its data
    as read."""
    from placement.judgement import baselines
    path = baseline / "generic.yaml"
    checked = []
    real = baselines.store._checked

    def counted(data, where):
        checked.append(where)
        return real(data, where)
    monkeypatch.setattr(baselines.store, "_checked", counted)
    first = _regressed_first(baseline)
    calm = _write(baseline, "confirm.json", json.loads(LAUNCHES[-2].read_text()))
    with baselines.store.read_once():
        lines, status = acceptance.summary([first], "generic", "quick", None, 10.0, False, [],
                                           confirm=calm)
        assert checked == [str(path)] and status == 0, (checked, lines)
        assert baselines.store.load(path) == baselines.store._load(path)   # read again: unchanged
    baselines.store.load(path)
    baselines.store.load(path)        # outside the scope every load reads the file
    assert len(checked) == 4


def test_a_reference_file_written_within_one_reading_is_read_again(baseline):
    """In the scope a file is read once per version: one written meanwhile (a ``record
    --add``) is read again, and a refused one stays refused."""
    from placement.judgement import baselines
    from placement.util import PlacementError
    path = baseline / "generic.yaml"
    with baselines.store.read_once():
        before = baselines.store.load(path)
        assert baselines.store.load(path) is before
        assert cli.main(["baseline", "record", "--system", "generic", "--add",
                         "--from", str(LAUNCHES[3])]) == 0
        after = baselines.store.load(path)
        assert after is not before and after != before
        path.write_text("T: [unclosed\n")
        for _ in range(2):
            with pytest.raises(PlacementError):
                baselines.store.load(path)
