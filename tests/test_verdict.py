"""The verdict's statistics against SciPy itself, on fixed samples."""

import numpy as np
import pytest
from scipy import stats

from placement import verdict as V

# fixed run times (s): a baseline of 10 runs with ~1% spread
BASE = [10.02, 9.97, 10.05, 9.99, 10.10, 9.94, 10.01, 10.03, 9.96, 10.08]
SAME = [10.00, 10.04, 9.98, 10.02, 9.95]
SLOW = [x * 1.10 for x in SAME]


def test_p_is_min_of_ks_and_mann_whitney_as_scipy_computes_them():
    p, ks, mwu = V.pvalues(SLOW, BASE)
    assert ks == pytest.approx(stats.ks_2samp(SLOW, BASE).pvalue)
    assert mwu == pytest.approx(stats.mannwhitneyu(SLOW, BASE, alternative="two-sided").pvalue)
    assert p == min(ks, mwu)
    # exact small-sample p: 5 runs all above 10 runs -> 2 / C(15, 5)
    assert mwu == pytest.approx(2 / 3003)


def test_identical_values_give_no_evidence():
    assert V.pvalues([1.0, 1.0, 1.0], [1.0, 1.0]) == (1.0, 1.0, 1.0)


def test_slower_times_regress_and_faster_improve():
    v = V.judge(SLOW, BASE)
    assert v.outcome == V.REGRESSED and v.change == pytest.approx(0.10, abs=0.01)
    faster = V.judge([x / 1.10 for x in SAME], BASE)
    assert faster.outcome == V.IMPROVED and faster.change < 0


def test_direction_follows_higher_is_better():
    gbps_base = [10.0 / x for x in BASE]
    gbps_low = [10.0 / x for x in SLOW]  # 10% less bandwidth
    assert V.judge(gbps_low, gbps_base, higher_is_better=True).outcome == V.REGRESSED
    assert V.judge(gbps_low, gbps_base, higher_is_better=False).outcome == V.IMPROVED


def test_unchanged_needs_the_interval_inside_the_minimum_effect():
    v = V.judge(SAME, BASE)
    assert v.outcome == V.UNCHANGED
    assert 0.97 < v.ci[0] <= v.ratio <= v.ci[1] < 1.03


def test_a_significant_change_below_the_minimum_effect_is_not_a_regression():
    tiny = [x * 1.01 for x in BASE]  # every run 1% slower: p small, effect under 3%
    v = V.judge(tiny, [x * 0.999 for x in BASE][::-1])
    assert v.outcome != V.REGRESSED
    assert V.judge(tiny, BASE, min_effect=0.005).outcome in (V.REGRESSED, V.UNDECIDED)


def test_three_runs_against_three_cannot_be_different():
    # the smallest two-sided exact p of 3 vs 3 is 0.1: a big shift stays undecided
    v = V.judge([11.0, 11.1, 11.2], [10.0, 10.1, 10.2])
    assert v.p == pytest.approx(0.1) and v.outcome == V.UNDECIDED


def test_bootstrap_interval_is_scipys_and_reproducible():
    lo, hi = V.ratio_interval(SLOW, BASE)
    assert (lo, hi) == V.ratio_interval(SLOW, BASE)
    ref = stats.bootstrap((np.array(SLOW), np.array(BASE)),
                          lambda x, y, axis=-1: np.median(x, axis=axis) / np.median(y, axis=axis),
                          n_resamples=2000, confidence_level=0.90, method="percentile",
                          vectorized=True, paired=False,
                          **{V._RNG_ARG: np.random.default_rng(0)}).confidence_interval
    assert (lo, hi) == pytest.approx((ref.low, ref.high))


def test_correction_is_benjamini_hochberg_and_demotes_lone_small_p():
    lone = V.judge(SLOW, BASE)  # p = 2/3003
    nulls = [V.judge(SAME, BASE)] * 40
    out = V.correct([lone, *nulls])
    expected = stats.false_discovery_control([v.p for v in [lone, *nulls]], method="bh")
    assert [v.q for v in out] == pytest.approx(list(expected))
    assert out[0].q > V.ALPHA and out[0].outcome == V.UNDECIDED
    # among few cases it survives
    assert V.correct([lone, *nulls[:2]])[0].outcome == V.REGRESSED
    assert V.counts(out)[V.UNCHANGED] == 40


def test_two_modes_found_and_reported_with_the_median():
    runs = [1.00, 1.01, 1.02, 1.00, 1.80, 1.82, 1.01, 1.81]
    m = V.two_modes(runs)
    assert m is not None
    assert m.low == pytest.approx(1.01) and m.high == pytest.approx(1.81)
    assert m.share_high == pytest.approx(3 / 8) and m.median == pytest.approx(np.median(runs))
    assert "two modes" in V.judge(runs, BASE).text()


def test_one_mode_or_few_runs_is_not_two_modes():
    assert V.two_modes(BASE) is None
    assert V.two_modes([1.0, 1.0, 2.0, 2.0]) is None  # under 5 runs
    assert V.two_modes([1.0, 1.01, 1.02, 1.03, 1.04, 1.9]) is None  # one outlier, not a mode


def test_adaptive_repeats_continue_until_decided_or_capped():
    assert not V.judge_repeats(BASE, SAME[:2]).stop  # fewer than 3 runs
    assert V.judge_repeats(BASE, SLOW).stop  # regressed: stop
    noisy = [10.0, 12.5, 9.0, 11.5]
    d = V.judge_repeats(BASE, noisy)
    assert not d.stop and d.verdict.outcome == V.UNDECIDED and d.word == "continue"
    capped = V.judge_repeats(BASE, noisy * 3, max_runs=10)
    assert capped.stop and "cap of 10" in capped.reason
    assert V.judge_repeats([], SAME).stop  # nothing to judge against
    with pytest.raises(ValueError):
        V.judge_repeats(BASE, SAME, min_runs=0)


def test_non_finite_runs_are_refused():
    with pytest.raises(ValueError, match="finite"):
        V.judge([1.0, float("nan")], BASE)


def test_change_point_finds_the_session_where_a_step_started():
    from placement import changepoints
    rng = np.random.default_rng(3)
    sessions = [f"s{i:02d}" for i in range(8)]
    runs = [list(rng.normal(10.0, 0.05, 3) * (1.08 if i >= 5 else 1.0)) for i in range(8)]
    s = changepoints.step(sessions, runs)
    assert s is not None and s.session == "s05" and s.verdict.outcome == V.REGRESSED
    flat = [list(rng.normal(10.0, 0.05, 3)) for _ in range(8)]
    assert changepoints.step(sessions, flat) is None
    assert changepoints.step(sessions[:3], runs[:3]) is None  # too short a history


def test_two_mode_runs_are_marked_in_the_boxplot_section(tmp_path):
    from placement.report.sections import boxplot_section
    from placement.report.tables import Numbers
    from placement.runreport import Case, PerfValue
    runs = [1.00, 1.01, 1.02, 1.00, 1.80, 1.82, 1.01, 1.81]
    case = Case("NpbLike", {"affinity": "none"}, "sys", "part", "gnu", "pass", None,
                {"time": PerfValue(1.2, None, None, None, "s", None)}, samples={"time": runs})
    sec = boxplot_section([case], tmp_path, Numbers())
    caption = sec.images[0][1] if sec.images else ""
    assert "[two modes]" in caption and "two modes: 1.01 and 1.81" in caption


def test_candidate_steps_of_flat_series_do_not_survive_the_correction():
    from placement import changepoints
    rng = np.random.default_rng(5)
    sessions = [f"s{i:02d}" for i in range(8)]
    flat = [changepoints.step(sessions, [list(rng.normal(10.0, 0.3, 3)) for _ in range(8)],
                              candidates=True) for _ in range(30)]
    assert all(s is not None for s in flat)
    fixed = V.correct([s.verdict for s in flat])
    assert not [v for v in fixed if v.outcome == V.REGRESSED]


def test_undecided_shows_the_spread_of_the_new_runs():
    # what the `unstable` guard used to fail on: an undecided verdict carries the spread
    v = V.judge([1.0, 1.3, 0.9, 1.6, 1.1], [1.0, 1.1, 0.95, 1.2, 1.05])
    assert v.outcome == V.UNDECIDED
    cv, lo, hi = v.spread
    assert lo == 0.9 and hi == 1.6 and cv == pytest.approx(np.std([1.0, 1.3, 0.9, 1.6, 1.1], ddof=1) / 1.18)
    assert "spread CV 23.5% (0.9 to 1.6)" in v.text()
    clear = V.judge([2.0, 2.01, 2.02, 2.03, 2.04, 2.05], [1.0, 1.01, 1.02, 1.03, 1.04, 1.05])
    assert clear.outcome == V.REGRESSED and "spread" not in clear.text()


# --- a baseline of several sessions -------------------------------------------------------

# five sessions whose launches agree within each session (~0.3%) but whose medians
# differ by a few percent: the spread of a shared node between one hour and the next
SESSIONS = [[s * f for f in (0.997, 1.0, 1.003, 0.999, 1.002)]
            for s in (10.0, 10.4, 9.7, 10.2, 9.9)]


def test_session_test_is_a_t_prediction_on_log_session_medians():
    new = [10.9, 10.95, 11.0]
    p, ratio, (lo, hi) = V.session_test(new, SESSIONS)
    logs = [np.log(s) for s in SESSIONS]
    m = np.array([np.median(x) for x in logs])
    k = len(m)
    within = sum(((x - x.mean()) ** 2).sum() for x in logs) / sum(len(x) - 1 for x in logs)
    fewer = np.pi / 2 * within * (1 / 3 - 1 / 5)        # a median of 3 against medians of 5
    q = V.resolution([x for s in SESSIONS for x in s]) / np.exp(m.mean())
    se = np.sqrt(m.var(ddof=1) * (1 + 1 / k) + fewer + q * q / 12 * (1 + 1 / k))
    d = np.log(np.median(new)) - m.mean()
    assert p == pytest.approx(2 * stats.t.sf(abs(d) / se, k - 1))
    assert ratio == pytest.approx(np.exp(d))
    half = stats.t.ppf(0.95, k - 1) * se
    assert (lo, hi) == (pytest.approx(np.exp(d - half)), pytest.approx(np.exp(d + half)))


def test_resolution_is_the_finest_decimal_place_used():
    assert V.resolution([0.02, 0.03, 0.02]) == pytest.approx(0.01)
    assert V.resolution([10.5197, 10.5]) == pytest.approx(1e-4)
    assert V.resolution([1.5e-05]) == pytest.approx(1e-6)


def test_a_value_printed_in_steps_of_its_size_is_never_called_changed_by_a_small_shift():
    # NPB class S: 0.02 s printed to 0.01 s, identical in every launch of every session
    sessions = [[0.02] * 10 for _ in range(5)]
    v = V.judge([0.021] * 3, [], sessions=sessions)     # 5% later: not a visible change
    assert v.outcome == V.UNDECIDED
    assert V.judge([0.2] * 3, [], sessions=sessions).outcome == V.REGRESSED   # 10x is


def test_a_session_inside_the_sessions_spread_is_not_a_change_though_its_launches_differ():
    new = [x * 1.03 for x in SESSIONS[0]]  # 3% slower than the first session, launches tight
    flat = [x for s in SESSIONS for x in s]
    launches_only = V.judge(new, SESSIONS[0])  # against one session: a "regression"
    assert launches_only.outcome == V.REGRESSED and launches_only.sessions == 1
    v = V.judge(new, flat, sessions=SESSIONS)
    assert v.sessions == 5 and v.p_session is not None
    assert v.p == max(V.pvalues(new, flat)[0], v.p_session)  # intersection-union
    assert v.outcome == V.UNDECIDED
    assert "of 5 sessions" in v.text()


def test_a_session_far_outside_the_sessions_spread_regresses():
    new = [x * 1.5 for x in SESSIONS[0]]
    v = V.judge(new, [], sessions=SESSIONS)
    assert v.outcome == V.REGRESSED and v.p_session < V.ALPHA


def test_fewer_than_three_sessions_are_judged_on_launches_only():
    v = V.judge(SAME, [], sessions=[BASE[:5], BASE[5:]])
    assert v.sessions == 2 and v.p_session is None and v.n_base == 10


def test_adaptive_repeats_stop_when_only_more_sessions_could_decide():
    new = [x * 1.03 for x in SESSIONS[0]][:3]
    d = V.judge_repeats([], new, sessions=SESSIONS)
    assert d.stop and "more launches cannot decide" in d.reason
    assert d.verdict.outcome == V.UNDECIDED
    tight = [[s * f for f in (0.999, 1.0, 1.001)] for s in (10.0, 10.02, 9.99, 10.01)]
    d = V.judge_repeats([], [10.0, 10.01, 9.99], sessions=tight)
    assert d.stop and d.verdict.outcome == V.UNCHANGED
