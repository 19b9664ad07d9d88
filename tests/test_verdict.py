"""The verdict's statistics against SciPy and NumPy themselves, on fixed samples.

Each rule is recomputed here independently (the formulas written out with NumPy and
SciPy) and compared with what :mod:`placement.judgement.verdict.over_sessions` and :mod:`placement.judgement.verdict.moderation`
return; the outcomes are checked on built runs whose answer is known.
"""

import math
import re

import numpy as np
import pytest
from scipy import special, stats

from placement.judgement import verdict
from placement.judgement.verdict import over_sessions as V


# --- moderation: limma's empirical Bayes ----------------------------------------------

@pytest.mark.parametrize("y", [0.05, 0.3, 1.0, 4.9, 50.0, 1e4])
def test_trigamma_inverse_inverts_scipys_trigamma(y):
    x = verdict.moderation.trigamma_inverse(y)
    assert float(special.polygamma(1, x)) == pytest.approx(y, rel=1e-6)


def test_fit_f_dist_recovers_a_scaled_f_and_agrees_with_scipys_mle():
    rng = np.random.default_rng(42)
    d, d0, s0_2 = 2, 6.0, 0.04 ** 2
    s2 = s0_2 * rng.f(d, d0, size=4000)
    got_s0_2, got_d0 = verdict.moderation.fit_f_dist(s2, d)
    assert got_s0_2 == pytest.approx(s0_2, rel=0.15)
    assert got_d0 == pytest.approx(d0, rel=0.3)
    # SciPy's maximum likelihood with the numerator degrees of freedom fixed
    _, mle_d0, _, mle_scale = stats.f.fit(s2, fdfn=d, floc=0)
    assert got_d0 == pytest.approx(mle_d0, rel=0.3)
    assert got_s0_2 == pytest.approx(mle_scale, rel=0.2)


@pytest.mark.parametrize("d, d0", [(1, 3.0), (2, 8.0)])
def test_the_likelihood_fit_is_scipys_mle(d, d0):
    rng = np.random.default_rng(7)
    s2 = 0.03 ** 2 * rng.f(d, d0, size=120)
    s0_2, got_d0, slope, _ = verdict.moderation.fit_f_dist_mle(s2, d)
    _, mle_d0, _, mle_scale = stats.f.fit(s2, fdfn=d, floc=0)
    assert slope == 0.0
    assert got_d0 == pytest.approx(mle_d0, rel=1e-3)
    assert s0_2 == pytest.approx(mle_scale, rel=1e-3)
    # no worse a likelihood than SciPy's, nor than the moment fit's
    def ll(scale, dd):
        return stats.f.logpdf(s2, d, dd, scale=scale).sum()
    assert ll(s0_2, got_d0) >= ll(mle_scale, mle_d0) - 1e-6
    m_s0_2, m_d0 = verdict.moderation.fit_f_dist(s2, d)     # (one df: here "alike", d0 infinite)
    assert ll(s0_2, got_d0) >= ll(m_s0_2, min(m_d0, 1e6)) - 1e-9


def test_the_likelihood_fit_with_a_trend_recovers_the_line():
    rng = np.random.default_rng(12)
    x = rng.uniform(-12, -4, 600)
    s2 = np.exp(-6.0 + 0.5 * (x - x.mean())) * rng.f(1, 4.0, size=600)
    s0_2, d0, slope, x0 = verdict.moderation.fit_f_dist_mle(s2, 1, x)
    assert slope == pytest.approx(0.5, abs=0.08) and x0 == pytest.approx(x.mean())
    assert 2.5 < d0 < 7 and s0_2 == pytest.approx(math.exp(-6.0), rel=0.25)
    # the likelihood of the F with the fitted line, recomputed with SciPy, beats the moments'
    def ll(c, b, dd):
        return stats.f.logpdf(s2, 1, dd, scale=c * np.exp(b * (x - x0))).sum()
    m_s0_2, m_d0, m_slope, _ = verdict.moderation.fit_f_dist_trend(s2, 1, x)
    assert ll(s0_2, slope, d0) >= ll(m_s0_2, m_slope, m_d0)


def test_values_no_more_spread_than_sampling_are_alike():
    # chi-square draws with no extra spread: d0 infinite (or very large)
    rng = np.random.default_rng(1)
    s2 = 0.01 * rng.chisquare(4, size=3000) / 4
    s0_2, d0 = verdict.moderation.fit_f_dist(s2, 4)
    assert s0_2 == pytest.approx(0.01, rel=0.1) and d0 > 50


def test_squeeze_is_the_posterior_mean():
    p = verdict.moderation.Prior(0.01, 4.0)
    assert verdict.moderation.squeeze(0.04, 2, p) == pytest.approx((4 * 0.01 + 2 * 0.04) / 6)
    assert verdict.moderation.squeeze(0.04, 0, p) == 0.01                        # no own data
    assert verdict.moderation.squeeze(0.04, 2, verdict.moderation.Prior(0.01, math.inf)) == 0.01


# --- the run's verdict, recomputed by hand -------------------------------------------

def _sessions(n_values=12, k=3, launches=3, spread=0.03, seed=0):
    """Fixed runs: n values, k baseline sessions and one new session, log-normal launches
    (1% within a session) around session medians that spread by ``spread``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_values):
        centre = 10.0 * (i + 1)
        own = spread * (0.5 + i / n_values)          # values differ in their spread
        sess = [list(np.round(centre * np.exp(rng.normal(0, own) + rng.normal(0, 0.01, launches)),
                              6)) for _ in range(k + 1)]
        out.append((sess[:k], sess[k]))
    return out


def _reference(values, alpha=V.ALPHA):
    """The verdict's p and q of every value, recomputed with NumPy and SciPy."""
    logs = [([np.log(r) for r in base], np.log(new)) for base, new in values]
    n, k = len(logs), len(logs[0][0])
    med = np.array([[np.median(r) for r in base] for base, _ in logs])   # values x k
    a = np.array([np.median(new) for _, new in logs])
    shifts = np.median(med - med.mean(axis=1, keepdims=True), axis=0)    # per session
    d_raw = a - med.mean(axis=1)
    c = np.median(d_raw)
    resid = med - shifts
    d_own = a - c - resid.mean(axis=1)
    m = len(logs[0][1])
    w = []
    for base, new in logs:
        groups = base + [new]
        w.append(sum(((g - g.mean()) ** 2).sum() for g in groups) / sum(len(g) - 1 for g in groups))
    w = np.array(w)
    # the launches' spread moderated over the values (limma), as the verdict does
    dfw = k * (m - 1) + m - 1
    w0, wd0 = verdict.moderation.fit_f_dist(w, dfw)
    wd0 = min(wd0, verdict.moderation.D0_MAX)
    w = (wd0 * w0 + dfw * w) / (wd0 + dfw)
    nbar = m
    s2 = resid.var(axis=1, ddof=1) + np.array([(V.resolution(
        [x for r in base for x in r]) / np.exp(np.mean(np.concatenate(lb)))) ** 2 / 12
        for (base, _), (lb, _) in zip(values, logs)])
    # the prior's scale follows the launches' spread: a line in log s0^2 against log w
    # (limma-trend), fitted with NumPy on the moment-matched log variances
    x = np.log(np.maximum(w, V.W_FLOOR))
    e = np.log(s2) - special.digamma((k - 1) / 2) + np.log((k - 1) / 2)
    slope, centre = np.polyfit(x - x.mean(), e, 1)
    params = 2
    if slope <= 0:
        slope, centre, params = 0.0, e.mean(), 1
    resid = e - centre - slope * (x - x.mean())
    evar = (resid ** 2).sum() / (n - params) - special.polygamma(1, (k - 1) / 2)
    d0 = 2 * verdict.moderation.trigamma_inverse(evar) if evar > 0 else math.inf
    s0_2 = np.exp(centre + slope * (x - x.mean())
                  + (special.digamma(d0 / 2) - np.log(d0 / 2) if math.isfinite(d0) else 0))
    d0 = min(d0, verdict.moderation.D0_MAX)          # the bound every fitted prior gets
    t2 = np.maximum((d0 * s0_2 + (k - 1) * s2) / (d0 + k - 1), math.pi / 2 * w / nbar)
    var = np.maximum(t2 * (1 + 1 / k), math.pi / 2 * w * (1 / m + 1 / (k * nbar)))
    df = min(d0 + k - 1, verdict.moderation.DF_CAP)
    p_worse = stats.t.sf(d_own / np.sqrt(var), df)
    return p_worse, stats.false_discovery_control(p_worse, method="bh"), c


def test_each_values_t_is_what_numpy_and_scipy_give():
    values = _sessions()
    # value 4 made 3x slower: regressed on its p, and its q is SciPy's BH over all
    values[4] = (values[4][0], [x * 3 for x in values[4][1]])
    p_worse, q_worse, c = _reference(values)
    rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                      for base, new in values])
    v = rv.verdicts[4]
    assert v.outcome == V.REGRESSED
    assert v.p == pytest.approx(p_worse[4], rel=1e-6)
    assert v.q == pytest.approx(q_worse[4], rel=1e-6)
    assert math.log(v.node_ratio) == pytest.approx(c, abs=1e-12)
    assert [u.outcome for i, u in enumerate(rv.verdicts) if i != 4].count(V.REGRESSED) == 0


def test_a_series_judged_in_several_runs_gives_what_a_fresh_one_gives():
    """A series is prepared once (``Series.prepared``) and may be judged in many runs, as
    the benchmark's lone changes do: each run's verdicts are those of fresh series."""
    values = _sessions()
    shared = [V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
              for base, new in values]
    for i in (2, 4, 7):
        slower = V.Series([x * 1.4 for x in values[i][1]], shared[i].sessions, False)
        reused = V.judge_run(shared[:i] + [slower] + shared[i + 1:])
        fresh = V.judge_run([V.Series(list(s.new), list(s.sessions), False) for s in shared[:i]]
                            + [slower]
                            + [V.Series(list(s.new), list(s.sessions), False)
                               for s in shared[i + 1:]])
        assert reused == fresh
    assert V.judge_run(shared) == V.judge_run(
        [V.Series(list(s.new), list(s.sessions), False) for s in shared])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_unchanged_reruns_fail_at_most_the_runs_level(k):
    # 150 unchanged reruns of 30 values whose spreads differ threefold: at the 5% level
    # about 7 fail (13% failed at k=2 before moderation.D0_MAX bounded the prior)
    failed = 0
    for seed in range(150):
        values = _sessions(n_values=30, k=k + 1, spread=0.04, seed=77 * k + seed)
        rv = V.judge_run([V.Series(base[-1], [(f"s{j}", r) for j, r in enumerate(base[:-1])],
                                   False) for base, _ in values])
        failed += any(v.outcome == V.REGRESSED for v in rv.verdicts) or rv.node.flagged
    assert failed <= 12


@pytest.mark.parametrize("k", [1, 3, 10])
def test_a_node_twice_as_slow_is_flagged_and_most_values_regress(k):
    values = _sessions(n_values=40, k=k, spread=0.03, seed=10 + k)
    rv = V.judge_run([V.Series([x * 2 for x in new], [(f"s{j}", r) for j, r in enumerate(base)],
                               False) for base, new in values])
    assert rv.node.flagged and rv.node.slower
    assert re.match(r"node (9\d|10\d)% slower than its baseline on 40 of 40 values", rv.node.line())
    assert rv.node.line().endswith(": load, frequency or memory state")
    regressed = [v for v in rv.verdicts if v.outcome == V.REGRESSED]
    assert len(regressed) >= 20 and all(v.why == "with the node" for v in regressed)


@pytest.mark.parametrize("factor, flagged", [(1.6, True), (1.09, False), (1.05, False)])
def test_one_baseline_session_flags_only_a_shift_of_node_at_once(factor, flagged):
    # one baseline session has no node spread of its own: a shift under NODE_AT_ONCE is
    # one that unchanged sessions show, so it is said (untested) and fails nothing
    values = _sessions(n_values=40, k=1, spread=0.01, seed=21)
    rv = V.judge_run([V.Series([x * factor for x in new], [("s0", base[0])], False)
                      for base, new in values])
    assert rv.node.flagged is flagged and rv.node.p is None
    assert rv.node.at_once is flagged
    if flagged:
        assert re.match(r"node (5\d|6\d)% slower than its baseline on \d+ of 40 values",
                        rv.node.line())
    elif factor > 1 + V.MACHINE_EFFECT:
        assert rv.node.untested
        assert "one baseline session cannot tell a shift under 50% from the node's " \
               "ordinary variation between sessions" in rv.node.text()
        assert "placement baseline record --add --from latest" in rv.node.text()
        assert not [v for v in rv.verdicts if v.outcome == V.REGRESSED]
    else:
        assert rv.node.text().endswith("below the 7% a node change needs: not a node change")


def test_values_printed_coarsely_do_not_pin_the_node_shift_at_zero():
    # 40 NPB-like times printed in steps of 0.01 s repeat 0.02 exactly: with them in the
    # median, a node 12% slower on every finely printed value would read as a shift of 0
    fine = _sessions(n_values=20, k=1, spread=0.01, seed=24)
    series = [V.Series([x * 1.12 for x in new], [("s0", base[0])], False)
              for base, new in fine]
    series += [V.Series([0.02, 0.02, 0.02], [("s0", [0.02, 0.02, 0.02])], False)
               for _ in range(40)]
    rv = V.judge_run(series)
    assert rv.node.untested and rv.node.values == 20
    assert rv.node.shift == pytest.approx(math.log(1.12), abs=0.02)


def test_a_shift_too_few_values_share_says_so():
    # a site's 2% node threshold under the 3% minimum effect: a node 2.5% slower on every
    # value has no value moved by the 3% that counts as moving, so it is not a node change
    values = _sessions(n_values=40, k=1, spread=0.001, seed=25)
    rv = V.judge_run([V.Series([x * 1.025 for x in new], [("s0", base[0])], False)
                      for base, new in values], machine_effect=0.02)
    assert not rv.node.flagged and rv.node.moved < 20
    assert re.search(rf"node shift \+2\.\d% \(slower positive\) over 40 values, only "
                     rf"{rv.node.moved} of 40 values moved with it: not a node change$",
                     rv.node.text())


def test_a_shift_within_the_baseline_sessions_own_shifts_says_so():
    # three baseline sessions whose whole node moved 0.8x, 1x and 1.25x: a new session 10%
    # slower is within what they show, and the text names that reason, not the size
    values = _sessions(n_values=40, k=3, spread=0.01, seed=23)
    node = (0.8, 1.0, 1.25)
    rv = V.judge_run([V.Series([x * 1.1 for x in new],
                               [(f"s{j}", [x * node[j] for x in r]) for j, r in enumerate(base)],
                               False) for base, new in values])
    assert not rv.node.flagged and rv.node.p > V.NODE_ALPHA
    assert re.search(r"over 40 values, within the baseline's 3 sessions' own shifts "
                     r"\(p=[\d.]+, a node change needs 0.01\): not a node change$",
                     rv.node.text())


def test_on_a_loaded_node_one_session_judges_the_values_that_moved_by_the_default_prior():
    # a load slows values unequally (half 2.2x, the rest 0-20%): the run's own differences
    # after the node's shift are then wide, and a prior fitted from them would leave every
    # value undecided; the values that moved with the flagged node are judged by the
    # default session spread instead, recomputed here with SciPy
    values = _sessions(n_values=40, k=1, spread=0.01, seed=22)
    slow = [2.2 if i % 2 else 1.0 + 0.01 * (i % 20) for i in range(40)]
    series = [V.Series([x * f for x in new], [("s0", base[0])], False)
              for (base, new), f in zip(values, slow)]
    rv = V.judge_run(series)
    assert rv.node.flagged and rv.node.slower and rv.prior.source == "run"
    d_raw = np.array([np.median(np.log(s.new)) - np.median(np.log(s.sessions[0][1]))
                      for s in series])
    p0 = V.DEFAULT_PRIOR
    sd = np.sqrt(p0.s0_2 * 2)             # one session: the prior's spread, twice over
    p = stats.t.sf(d_raw / sd, p0.d0)
    q = stats.false_discovery_control(p, method="bh")
    with_node = [i for i, v in enumerate(rv.verdicts) if v.why == "with the node"]
    assert with_node and all(rv.verdicts[i].p == pytest.approx(p[i], rel=0.05)
                             for i in with_node)
    regressed = {i for i, v in enumerate(rv.verdicts) if v.outcome == V.REGRESSED}
    assert {i for i in range(40) if slow[i] == 2.2} <= regressed
    assert regressed == {i for i in range(40) if q[i] <= V.ALPHA and d_raw[i] >= math.log1p(0.03)}


def test_a_lone_value_three_times_slower_among_alike_values_is_regressed():
    values = _sessions(n_values=40, k=5, spread=0.02, seed=3)
    values[7] = (values[7][0], [x * 3 for x in values[7][1]])
    rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                      for base, new in values])
    assert [i for i, v in enumerate(rv.verdicts) if v.outcome == V.REGRESSED] == [7]
    assert not rv.node.flagged and rv.verdicts[7].why == ""


def test_a_value_with_states_is_called_neither_way_however_far_it_moved():
    """The same value three times slower (or faster) among alike values is regressed
    (improved) without states and undecided ("states") with them, its change shown."""
    for factor, hib, called in ((3, False, V.REGRESSED), (3, True, V.IMPROVED)):
        values = _sessions(n_values=40, k=5, spread=0.02, seed=3)
        values[7] = (values[7][0], [x * factor for x in values[7][1]])
        series = [V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], hib)
                  for base, new in values]
        assert V.judge_run(series).verdicts[7].outcome == called
        v = V.judge_run(series, prone={7}).verdicts[7]
        assert (v.outcome, v.why, v.gross) == (V.UNDECIDED, "states", None)
        assert v.ratio == pytest.approx(factor, rel=0.1)


def test_direction_follows_higher_is_better_and_faster_is_improved():
    values = _sessions(n_values=40, k=5, spread=0.02, seed=4)
    values[2] = (values[2][0], [x * 3 for x in values[2][1]])
    for hib, outcome in ((True, V.IMPROVED), (False, V.REGRESSED)):
        rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], hib)
                          for base, new in values])
        assert rv.verdicts[2].outcome == outcome and rv.verdicts[2].higher_is_better is hib


def test_a_change_below_the_minimum_effect_is_never_regressed():
    values = _sessions(n_values=40, k=5, spread=0.001, seed=6)
    values = [(base, [x * 1.02 for x in new]) if i == 5 else (base, new)
              for i, (base, new) in enumerate(values)]
    rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                      for base, new in values])
    assert rv.verdicts[5].outcome != V.REGRESSED


def test_launches_of_one_session_are_not_independent_draws():
    # every value moves by +-8% between the two sessions; a value 8% slower with ten tight
    # launches is one draw of that spread, not ten
    rng = np.random.default_rng(9)
    series = []
    for i in range(20):
        base = list(10.0 * np.exp(rng.normal(0, 0.002, 10)))
        shift = 1.08 if i == 0 else float(np.exp(rng.choice([-1, 1]) * 0.08))
        series.append(V.Series([x * shift for x in base], [("s0", base)], False))
    v = V.judge_run(series).verdicts[0]
    assert v.outcome != V.REGRESSED and v.sessions == 1


def test_coarse_values_are_left_out_of_the_prior_and_small_shifts_never_regress():
    fine = _sessions(n_values=20, k=3, spread=0.03, seed=8)
    coarse_base = [[0.02, 0.02, 0.02]] * 3
    series = [V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
              for base, new in fine]
    series.append(V.Series([0.021, 0.021, 0.021], [(f"s{j}", r) for j, r in enumerate(coarse_base)],
                           False))
    rv = V.judge_run(series)
    assert rv.prior.values == 20                  # the coarse value is not in the fit
    assert rv.verdicts[-1].outcome != V.REGRESSED


def test_resolution_is_the_finest_decimal_place_used():
    assert V.resolution([0.02, 0.03, 0.02]) == pytest.approx(0.01)
    assert V.resolution([10.5197, 10.5]) == pytest.approx(1e-4)
    assert V.resolution([1.5e-05]) == pytest.approx(1e-6)


def test_non_finite_runs_are_refused():
    with pytest.raises(ValueError):
        V.judge_value([1.0, float("nan")], [[1.0, 1.1]])


# --- references for plain ReFrame ----------------------------------------------------

def test_reference_bounds_are_one_sided_capped_and_narrow_with_tight_sessions():
    tight = [[10.0, 10.01, 9.99], [10.02, 10.0, 10.01], [9.98, 10.0, 9.99], [10.0, 10.02, 10.01]]
    wide = [[10.0, 12.0, 8.0], [14.0, 15.0, 13.0], [7.0, 7.5, 6.8], [10.0, 11.0, 9.0]]
    prior = verdict.moderation.Prior(0.02 ** 2, 10.0)
    c_t, b_t = V.reference_bound(tight, False, prior, values=50)
    c_w, b_w = V.reference_bound(wide, False, prior, values=50)
    assert c_t == pytest.approx(np.exp(np.mean(np.log([np.median(r) for r in tight]))))
    assert 0 < b_t < b_w <= V.REF_CAP - 1
    # a rate: the bound is a fraction below the centre, never below half of it
    _, b_rate = V.reference_bound(wide, True, prior, values=50)
    assert 0 < b_rate <= 1 - 1 / V.REF_CAP + 1e-12
    one = V.reference_bound([[10.0, 10.1, 9.9]], False, None, values=100)[1]
    assert b_t < one <= V.REF_CAP - 1     # one session: only gross changes are sure


def test_reference_bounds_are_at_ref_alpha_over_the_files_values():
    # the bound is Student's t quantile at REF_ALPHA / values times one sd: against the
    # verdict's 5 % it widens by the ratio of SciPy's quantiles (df = d0 + k - 1)
    tight = [[10.0, 10.01, 9.99], [10.02, 10.0, 10.01], [9.98, 10.0, 9.99], [10.0, 10.02, 10.01]]
    prior = verdict.moderation.Prior(0.02 ** 2, 10.0)
    _, b_ref = V.reference_bound(tight, False, prior, values=50)
    _, b_05 = V.reference_bound(tight, False, prior, values=50, alpha=0.05)
    assert V.REF_ALPHA == 0.001
    ratio = stats.t.ppf(1 - V.REF_ALPHA / 50, 13) / stats.t.ppf(1 - 0.05 / 50, 13)
    assert math.log1p(b_ref) / math.log1p(b_05) == pytest.approx(ratio, rel=1e-9)


def test_a_wide_value_takes_its_siblings_bounds_with_it():
    sessions = {("w", "none"): [[4.6, 14.0, 17.5]], ("w", "scatter"): [[15.0, 15.1, 15.2]],
                ("t", "none"): [[1.0, 1.01, 0.99]], ("t", "scatter"): [[1.0, 1.02, 1.01]]}
    assert V.state_prone(sessions, lambda k: k[0]) == {("w", "none"), ("w", "scatter")}
    assert V.state_prone(sessions, lambda k: k) == {("w", "none")}


# --- adaptive repeats ----------------------------------------------------------------

def test_adaptive_repeats_stop_when_decided_at_the_cap_or_with_nothing_to_judge():
    base = [[10.0, 10.1, 9.9], [10.2, 10.0, 10.1], [9.9, 10.0, 10.05]]
    assert not V.judge_repeats(base, [10.0, 10.1]).stop            # fewer than 3 runs
    assert V.judge_repeats(base, [40.0, 41.0, 40.5]).stop           # 4x slower: regressed
    assert V.judge_repeats([], [10.0, 10.1, 9.9]).stop              # nothing to judge against
    noisy = [5.0, 20.0, 9.0, 15.0, 6.0, 14.0, 10.0, 12.0, 8.0, 11.0]
    capped = V.judge_repeats(base, noisy, max_runs=10)
    assert capped.stop and capped.reason.startswith("cap of 10 runs reached")
    with pytest.raises(ValueError):
        V.judge_repeats(base, [1.0], min_runs=0)


def test_adaptive_repeats_go_on_while_more_launches_could_decide():
    base = [[10.0, 10.01, 9.99], [10.0, 10.02, 9.98], [10.01, 10.0, 9.99]]
    d = V.judge_repeats(base, [8.0, 12.5, 10.0])                    # launches dominate
    assert not d.stop and d.verdict.outcome == V.UNDECIDED
    # a baseline whose sessions spread widely: more launches of one session cannot help
    wide = [[5.0, 5.01, 5.02], [10.0, 10.01, 10.02], [20.0, 20.1, 20.05]]
    d = V.judge_repeats(wide, [10.0, 10.01, 10.02])
    assert d.stop and "more launches can narrow" in d.reason


def test_undecided_shows_the_spread_of_the_new_runs_and_what_could_be_called():
    base = [[1.0, 1.1, 0.95], [1.2, 1.05, 1.0], [0.9, 1.0, 1.1]]
    v = V.judge_value([1.0, 1.3, 0.9, 1.6, 1.1], base)
    assert v.outcome == V.UNDECIDED
    cv, lo, hi = v.spread
    assert lo == 0.9 and hi == 1.6
    assert cv == pytest.approx(np.std([1.0, 1.3, 0.9, 1.6, 1.1], ddof=1) / 1.18)
    assert "spread CV 23.5% (0.9 to 1.6)" in v.text() and "add sessions" in v.text()


# --- two modes -----------------------------------------------------------------------

def test_two_modes_found_and_reported_with_the_median():
    runs = [1.00, 1.01, 1.02, 1.00, 1.80, 1.82, 1.01, 1.81]
    m = V.two_modes(runs)
    assert m is not None and m.low == pytest.approx(1.01) and m.high == pytest.approx(1.81)
    assert m.share_high == pytest.approx(3 / 8)


def test_one_mode_or_few_runs_is_not_two_modes():
    assert V.two_modes([10.02, 9.97, 10.05, 9.99, 10.10, 9.94]) is None
    assert V.two_modes([1.0, 1.0, 2.0, 2.0]) is None  # under 5 runs
    assert V.two_modes([1.0, 1.01, 1.02, 1.03, 1.04, 1.9]) is None  # one outlier, not a mode


def test_two_mode_runs_are_marked_in_the_boxplot_section(tmp_path):
    from placement.report.sections import boxplot_section
    from placement.report.tables import Numbers
    from placement.judgement.reading.run_report import Case, PerfValue
    runs = [1.00, 1.01, 1.02, 1.00, 1.80, 1.82, 1.01, 1.81]
    case = Case("NpbLike", {"affinity": "none"}, "sys", "part", "gnu", "pass", None,
                {"time": PerfValue(1.2, None, None, None, "s", None)}, samples={"time": runs})
    sec = boxplot_section([case], tmp_path, Numbers())
    caption = sec.images[0][1] if sec.images else ""
    assert "[two modes]" in caption and "two modes: 1.01 and 1.81" in caption


# --- change points -------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_the_split_is_the_one_ruptures_finds(seed):
    import ruptures
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(0, 0.05, 4 + seed), rng.normal(0.2, 0.05, 6)])
    (k,), _ = verdict.changepoints.best_split(x)
    assert k == ruptures.Dynp(model="l2", min_size=2, jump=1).fit(x).predict(n_bkps=1)[0]


def test_a_real_step_is_found_where_it_started():
    rng = np.random.default_rng(2)
    # (ten sessions split 5|5 cannot reach p <= 0.01: 2 of 252 orders are as extreme)
    sessions = [f"s{i:02d}" for i in range(12)]
    runs = [list(rng.normal(1.0 if i < 6 else 1.3, 0.01, 3)) for i in range(12)]
    s = verdict.changepoints.step(sessions, runs)
    assert s is not None and s.session == "s06" and s.p <= 0.01 and s.outcome == V.REGRESSED
    assert verdict.changepoints.step(sessions[:3], runs[:3]) is None  # too short a history


def _step_by_the_book(sessions, medians, higher_is_better, seed=0):
    """The most likely step and its permutation p as written out: 999 series shuffled
    with ``rng.permutation``, each split searched over every k (the reference the step
    search's faster arithmetic and shared shuffles must give again, number for number)."""
    logs = np.log(np.array(medians, dtype=float))
    n = len(logs)

    def best(x):
        gains = [k * (n - k) / n * (x[:k].sum() / k - x[k:].sum() / (n - k)) ** 2
                 for k in range(2, n - 1)]
        return 2 + int(np.argmax(gains)), max(gains) / ((x - x.mean()) ** 2).sum()
    k, share = best(logs)
    rng = np.random.default_rng(seed)
    shares = [best(rng.permutation(logs))[1] for _ in range(verdict.changepoints.PERMUTATIONS)]
    p = (1 + sum(s >= share - 1e-12 for s in shares)) / (verdict.changepoints.PERMUTATIONS + 1)
    ratio = math.exp(float(logs[k:].mean() - logs[:k].mean()))
    return sessions[k], round(ratio, 9), p


def test_values_searched_together_get_the_steps_each_gets_alone():
    """Values over the same sessions are searched together (their shuffles drawn once, as
    positions): each gets the step, p and ratio it gets alone, and the one written out
    (:func:`_step_by_the_book`); values over other sessions, and too short or too flat a
    series, are left as alone."""
    rng = np.random.default_rng(12)
    series = []
    for j in range(7):
        n = (40, 40, 40, 25, 3, 40, 25)[j]
        jump = (1.3, 1.0, 0.8, 1.2, 1.5, 1.01, 1.0)[j]
        meds = list(rng.lognormal(0, 0.05, n) * np.where(np.arange(n) >= n // 3, jump, 1))
        series.append(([f"s{i}" for i in range(n)], meds, bool(j % 2)))
    series.append(([f"s{i}" for i in range(9)], [2.0] * 9, False))      # no spread
    together = verdict.changepoints.steps_of_medians(series, candidates=True)
    alone = [verdict.changepoints.step_of_medians(*s, candidates=True) for s in series]
    assert together == alone and together[4] is None and together[-1] is None
    for s, got in zip(series, together):
        if got is not None and len(s[0]) == 25:
            assert (got.session, round(got.ratio, 9), got.p) == _step_by_the_book(*s)
    reported = verdict.changepoints.steps_of_medians(series)
    assert [s is not None for s in reported] == [
        s is not None and s.p <= verdict.changepoints.ALPHA and abs(s.ratio - 1) >= V.MIN_EFFECT
        for s in alone]
    assert sum(s is not None for s in reported) >= 2


def test_noise_gets_a_step_in_at_most_one_series_in_a_hundred():
    rng = np.random.default_rng(7)
    sessions = [f"s{i:02d}" for i in range(10)]
    found = sum(verdict.changepoints.step(sessions, [list(rng.normal(10, 0.5, 3)) for _ in range(10)],
                                  seed=i) is not None for i in range(100))
    assert found <= 2


# --- the prior's trend on the launches' spread (limma-trend) ------------------------------

def test_trend_fit_recovers_a_known_line_and_agrees_with_numpy():
    rng = np.random.default_rng(11)
    n, d, d0 = 3000, 2, 8.0
    x = rng.uniform(-12, -4, n)                        # log launch variances
    scale = np.exp(-6.0 + 0.5 * (x - x.mean()))        # s0^2 rises with x, slope 0.5
    s2 = scale * rng.f(d, d0, size=n)
    s0_2, got_d0, slope, x0 = verdict.moderation.fit_f_dist_trend(s2, d, x)
    assert slope == pytest.approx(0.5, abs=0.05)
    assert 4 < got_d0 < 20 and s0_2 == pytest.approx(math.exp(-6.0), rel=0.2)
    # d0 is the plain fit's on the variances with the fitted line taken out
    flat_s0_2, flat_d0 = verdict.moderation.fit_f_dist(s2 / np.exp(slope * (x - x0)), d)
    assert got_d0 == pytest.approx(flat_d0, rel=0.02)
    assert s0_2 == pytest.approx(flat_s0_2, rel=0.02)
    # the line is NumPy's least squares on limma's moment-matched log variances
    e = np.log(s2) - special.digamma(d / 2) + np.log(d / 2)
    assert slope == pytest.approx(np.polyfit(x - x.mean(), e, 1)[0], rel=1e-9)
    assert x0 == pytest.approx(x.mean())


def test_a_falling_or_flat_trend_is_the_plain_fit():
    rng = np.random.default_rng(5)
    s2 = 0.02 ** 2 * rng.f(2, 6.0, size=400)
    x = -np.log(s2) + rng.normal(0, 0.1, 400)          # falls with the variance
    s0_2, d0, slope, _ = verdict.moderation.fit_f_dist_trend(s2, 2, x)
    assert slope == 0.0
    assert (s0_2, d0) == pytest.approx(verdict.moderation.fit_f_dist(s2, 2))
    p = verdict.moderation.fit(s2, 2, "baseline", x=x)
    assert p.scale(-3.0) == p.scale(3.0) == p.s0_2


def test_the_prior_scale_is_clipped_to_the_fitted_range():
    p = verdict.moderation.Prior(0.01, 6.0, slope=1.0, x0=0.0, x_range=(-1.0, 1.0))
    assert p.scale(0.5) == pytest.approx(0.01 * math.exp(0.5))
    assert p.scale(5.0) == pytest.approx(0.01 * math.exp(1.0))     # not extrapolated
    assert p.scale(None) == 0.01
    assert verdict.moderation.squeeze(0.0, 0, p, 5.0) == pytest.approx(0.01 * math.e)


def _spread_with_launches(n_values=40, k=1, seed=3):
    """Values whose session spread follows their launch spread (as on a real node):
    launch SD from 0.5% to 8%, session SD twice the launch SD."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n_values):
        lsd = 0.005 * 16 ** (i / (n_values - 1))
        sess = [list(np.round(100 * np.exp(rng.normal(0, 2 * lsd) + rng.normal(0, lsd, 3)), 6))
                for _ in range(k + 1)]
        out.append((sess[:k], sess[k]))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_a_tight_value_40_percent_slower_is_regressed_and_a_noisy_one_is_not(seed):
    """With three baseline sessions a value whose launches agree within ~1% is called
    40% slower; a value whose launches spread 8% (its kind moves that far) is not."""
    values = _spread_with_launches(n_values=60, k=3, seed=seed)
    values[2] = (values[2][0], [x * 1.4 for x in values[2][1]])
    values[-1] = (values[-1][0], [x * 1.4 for x in values[-1][1]])
    rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                      for base, new in values])
    assert rv.prior.source == "baseline" and rv.prior.slope > 0
    assert rv.verdicts[2].outcome == V.REGRESSED
    assert rv.verdicts[-1].outcome == V.UNDECIDED
    assert rv.verdicts[2].detectable < rv.verdicts[-1].detectable


def test_one_baseline_session_borrows_a_trend_from_the_run():
    values = _spread_with_launches(n_values=126, k=1)
    rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                      for base, new in values])
    assert rv.prior.source == "run" and rv.prior.slope > 0
    assert rv.verdicts[0].detectable < rv.verdicts[-1].detectable


@pytest.mark.parametrize("k", [1, 2, 3])
def test_unchanged_reruns_with_a_launch_trend_fail_at_most_the_runs_level(k):
    failed = 0
    for seed in range(100):
        values = _spread_with_launches(k=k, seed=1000 * k + seed)
        rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                          for base, new in values])
        failed += any(v.outcome == V.REGRESSED for v in rv.verdicts) or rv.node.flagged
    assert failed <= 10          # 5 expected at the 5% level


def test_launches_wider_than_the_cap_get_no_reframe_bound():
    assert V.launches_beyond_cap([[0.02, 0.16, 0.02]])              # one time slice, x8
    assert not V.launches_beyond_cap([[0.02, 0.021, 0.022], [0.03, 0.031, 0.029]])


# --- a control value (the site's reference build) gives the node's shift -------------------

def _judge(values, factors=None, control=None):
    factors = factors or [1.0] * len(values)
    return V.judge_run([V.Series([x * f for x in new], [(f"s{j}", r) for j, r in enumerate(base)],
                                 False, ("Case", (str(i),), "t"))
                        for i, ((base, new), f) in enumerate(zip(values, factors))],
                       control=control)


def test_a_control_values_change_is_the_nodes_shift():
    values = _sessions(n_values=40, k=3, spread=0.01, seed=31)
    rv = _judge(values, control=7)
    # NumPy: the control's new median against the mean of its session medians, and each
    # baseline session's shift its deviation there
    base, new = values[7]
    med = np.array([np.median(np.log(r)) for r in base])
    assert rv.node.shift == pytest.approx(np.median(np.log(new)) - med.mean(), abs=1e-12)
    assert [rv.shifts[f"s{j}"] for j in range(3)] == pytest.approx(list(med - med.mean()))
    assert rv.node.control == "Case[7].t" and rv.node.values == 39
    assert rv.verdicts[7].own_ratio == pytest.approx(1.0)     # nothing beyond itself


def test_the_control_alone_flags_the_node_and_values_are_judged_beyond_it():
    values = _sessions(n_values=40, k=3, spread=0.01, seed=32)
    # the control 30% slower, the others unchanged: the site's control says the node moved
    rv = _judge(values, [1.3 if i == 7 else 1.0 for i in range(40)], control=7)
    assert rv.node.flagged and rv.node.slower
    assert re.match(r"node 3\d% slower than its baseline by its control value Case\[7\]\.t "
                    r"\(\d of 39 values moved with it\)", rv.node.line())
    # the median alone sees no node change
    assert not _judge(values, [1.3 if i == 7 else 1.0 for i in range(40)]).node.flagged
    # every value 30% slower but the control: no node line, the values regressed on their own
    rv = _judge(values, [1.0 if i == 7 else 1.3 for i in range(40)], control=7)
    assert not rv.node.flagged and "by its control value Case[7].t" in rv.node.text()
    own = [v for i, v in enumerate(rv.verdicts) if i != 7 and v.outcome == V.REGRESSED]
    assert len(own) >= 30 and not any(v.why for v in own)
    with pytest.raises(ValueError, match="control value 40 is not one of the 40 values"):
        _judge(values, control=40)


def test_one_baseline_session_calls_a_tight_value_40_percent_slower_when_the_run_finds_values_alike():
    """The limit of a one-session baseline, on values that spread alike: the run's own prior
    is fitted on one difference per value, so its d0 lands anywhere from about 1 to its bound;
    a tight value 40% slower is called when the fit finds the values alike, else it stays
    undecided (docs/reference/limits.md: one baseline session calls little)."""
    called, alike = 0, 0
    for seed in range(20):
        values = _spread_with_launches(n_values=60, k=1, seed=seed)
        values[2] = (values[2][0], [x * 1.4 for x in values[2][1]])
        rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                          for base, new in values])
        assert rv.prior.source == "run"
        outcome = rv.verdicts[2].outcome
        assert outcome in (V.REGRESSED, V.UNDECIDED)
        called += outcome == V.REGRESSED
        if rv.prior.d0 >= verdict.moderation.D0_MAX:
            alike += 1
            assert outcome == V.REGRESSED, seed
    assert (called, alike) == (10, 5)


def test_the_tight_value_40_percent_slower_that_one_session_leaves_undecided_is_gross():
    """The runs above that leave the value undecided mark it gross: a second session decides
    it (placement.acceptance.confirmation); no other value of those runs is gross."""
    for seed in range(20):
        values = _spread_with_launches(n_values=60, k=1, seed=seed)
        values[2] = (values[2][0], [x * 1.4 for x in values[2][1]])
        rv = V.judge_run([V.Series(new, [(f"s{j}", r) for j, r in enumerate(base)], False)
                          for base, new in values])
        v = rv.verdicts[2]
        assert (v.outcome == V.REGRESSED) == (v.gross is None), seed
        assert all(w.gross is None for i, w in enumerate(rv.verdicts) if i != 2), seed


def test_a_gross_change_is_beyond_the_worst_session_with_launches_that_leave_no_doubt():
    """``gross_change`` on fixed samples: the change beyond the worst baseline session and the
    node's shift, at least 25 %, launches within 2 %, the gap against launch noise alone a
    Student t (SciPy)."""
    base = [("a", [10.0, 10.1, 9.9]), ("b", [11.0, 11.2, 10.9])]
    new = [14.3, 14.5, 14.2]
    v = V._prepare(V.Series(new, base, False))
    d = float(np.median(np.log(new)) - np.median(np.log([11.0, 11.2, 10.9])))
    assert V.gross_change(v, 0.0, v.w, 0.0, 1.0) == pytest.approx(math.expm1(d), rel=1e-12)
    se = math.sqrt(math.pi / 2 * v.w * (1 / 3 + 1 / 3))
    for w_df in (0.0, 4.0):
        p = float(stats.t.sf(d / se, v.dfw + w_df))
        assert V.gross_change(v, 0.0, v.w, w_df, p * 1.001) is not None
        assert V.gross_change(v, 0.0, v.w, w_df, p * 0.999) is None
    # the node's shift first: 30 % beyond the worst session, 10 % of it the node's
    assert V.gross_change(v, math.log(1.1), v.w, 0.0, 1.0) is None
    # launches wider than 2 %: not tight
    wide = V._prepare(V.Series([13.6, 14.4, 15.0], base, False))
    assert math.sqrt(wide.w) > 0.02 and V.gross_change(wide, 0.0, wide.w, 0.0, 1.0) is None
    # single launches: nothing to be tight against
    one = V._prepare(V.Series([14.3], [("a", [10.0])], False))
    assert V.gross_change(one, 0.0, 0.0, 0.0, 1.0) is None
    # a rate: worse is lower
    rate = V._prepare(V.Series([1 / x for x in new], [(s, [1 / x for x in r]) for s, r in base],
                               True))
    assert V.gross_change(rate, 0.0, rate.w, 0.0, 1.0) == pytest.approx(math.expm1(d), rel=1e-9)


def _tight_run(factors: list[float]) -> list[V.Series]:
    """One baseline session and a new one of values whose launches agree within 1 %, value
    ``i`` ``factors[i]`` times slower in the new session."""
    out = []
    for i, f in enumerate(factors):
        x = 1.0 + 0.05 * i
        base = [x, x * 1.005, x * 0.995]
        out.append(V.Series([f * y for y in (x * 1.002, x * 0.997, x)], [("s0", base)], False))
    return out


def test_a_slower_nodes_shift_is_not_taken_off_a_gross_value():
    """In a session 19 % slower as a whole, a value 40 % slower
    than its baseline session (tight launches) is gross, though only 18 % beyond the node's
    shift; the values that slowed with the node are not. In a session 15 % faster, the
    shift is still taken off: a value 10 % slower stands 29 % beyond it (gross), and one
    unchanged (18 % beyond) is not."""
    assert V.gross_shift(math.log(1.19)) == 0.0
    assert V.gross_shift(math.log(0.85)) == math.log(0.85)
    slower = V.judge_run(_tight_run([1.19] * 30 + [1.40]))
    assert slower.node is not None and slower.node.shift == pytest.approx(math.log(1.19), abs=0.01)
    assert slower.verdicts[-1].gross == pytest.approx(0.40, abs=0.01)
    assert all(v.gross is None for v in slower.verdicts[:-1])
    faster = V.judge_run(_tight_run([0.85] * 30 + [1.10, 1.0]))
    assert faster.verdicts[-2].gross == pytest.approx(1.10 / 0.85 - 1, abs=0.01)
    assert faster.verdicts[-1].gross is None


def test_gross_again_is_the_median_beyond_the_worst_session_however_the_launches_spread():
    """``gross_again`` on fixed samples (NumPy's median): in a confirmation session the
    median of the launches beyond the worst baseline session and the first session's node
    shift, at least 25 %; a launch in a slow state does not hide it."""
    base = [("a", [10.0, 10.1, 9.9]), ("b", [11.0, 11.2, 10.9])]
    spread = [14.3, 14.2, 25.0]      # one launch of three in a slow state
    v = V._prepare(V.Series(spread, base, False))
    assert math.sqrt(v.w) > V.GROSS_LAUNCHES and V.gross_change(v, 0.0, v.w, 0.0, 1.0) is None
    d = float(np.median(np.log(spread)) - np.median(np.log([11.0, 11.2, 10.9])))
    assert V.gross_again(v, 0.0) == pytest.approx(math.expm1(d), rel=1e-12)
    assert V.gross_again(v, math.log(1.1)) is None      # 29 % beyond, 10 % of it the node's
    calm = V._prepare(V.Series([11.5, 11.4, 25.0], base, False))
    assert V.gross_again(calm, 0.0) is None              # the median 3 % beyond: not gross
    # a confirmation run (``selected_by``) marks it gross again, and says so
    first = V.judge_run([V.Series([14.3, 14.4, 14.2], base, False)])
    rv = V.judge_run([V.Series(spread, base, False)], selected_by=first)
    (w,) = rv.verdicts
    assert w.outcome == V.UNDECIDED and w.again
    assert "; gross again: median +30% beyond its worst baseline session" in w.text()


def test_values_with_states_or_printed_coarsely_are_never_gross():
    values = _spread_with_launches(n_values=40, k=1, seed=1)
    series = [V.Series(new, [("s0", base[0])], False) for base, new in values]
    series[2] = V.Series([x * 1.6 for x in series[2].new], series[2].sessions, False)
    series[5] = V.Series([0.03, 0.03, 0.03], [("s0", [0.02, 0.02, 0.02])], False)
    rv = V.judge_run(series)
    assert rv.verdicts[2].outcome == V.REGRESSED or rv.verdicts[2].gross is not None
    assert rv.verdicts[5].gross is None          # printed in steps of 0.01 s: coarse
    rv = V.judge_run(series, prone=[2])
    assert rv.verdicts[2].outcome == V.REGRESSED or rv.verdicts[2].gross is None
