"""The measurement loop's statistics against SciPy, on fixed samples (C harness)."""

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

KERNELS = Path(__file__).resolve().parents[1] / "src" / "kernels"


@pytest.fixture(scope="module")
def harness() -> Path:
    subprocess.run(["make", "-s", "-C", str(KERNELS), "statloop_harness"], check=True)
    return KERNELS / "statloop_harness"


def run(harness, samples, *args, env=None):
    out = subprocess.run([str(harness), *args], input="\n".join(repr(float(x)) for x in samples),
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return {k: v for k, v in (line.split(" ", 1) for line in out.stdout.splitlines())}


def scipy_chi2(x):
    """Pearson chi-square of normality as the C library defines it, with NumPy/SciPy."""
    x = np.asarray(x, dtype=float)
    k = max(4, math.ceil(math.log2(len(x))) + 1)
    obs, edges = np.histogram(x, bins=k)
    cdf = stats.norm.cdf(edges[1:-1], loc=x.mean(), scale=x.std(ddof=1))
    probs = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
    res = stats.chisquare(obs, len(x) * probs, ddof=2)
    return k, res.statistic, res.pvalue


def window(x, alpha=0.05, share=0.8):
    s = np.sort(np.asarray(x, dtype=float))
    m = math.ceil(share * len(s) - 1e-9)
    starts = sorted(range(len(s) - m + 1), key=lambda i: (s[i + m - 1] - s[i], i))
    for i in starts:
        if scipy_chi2(s[i:i + m])[2] >= alpha:
            return s[i], s[i + m - 1]
    return None


SAMPLES = {
    "normal": np.random.default_rng(1).normal(1e-3, 1e-4, 64),
    "normal_small": np.random.default_rng(2).normal(5.0, 0.5, 16),
    "exponential": np.random.default_rng(3).exponential(1.0, 128),
    "bimodal": np.concatenate([np.random.default_rng(4).normal(1, 0.01, 40),
                               np.random.default_rng(5).normal(3, 0.01, 40)]),
    "outliers": np.concatenate([np.random.default_rng(6).normal(10, 1, 90), [40.0] * 10]),
    "uniform": np.random.default_rng(7).uniform(0, 1, 200),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_chi2_matches_scipy(harness, name):
    x = SAMPLES[name]
    got = run(harness, x)
    k, stat, p = scipy_chi2(x)
    assert float(got["mean"]) == pytest.approx(np.mean(x), rel=1e-12)
    assert float(got["stddev"]) == pytest.approx(np.std(x, ddof=1), rel=1e-10)
    assert int(got["bins"]) == k and int(got["dof"]) == k - 3
    assert float(got["chi2"]) == pytest.approx(stat, rel=1e-9)
    assert float(got["p"]) == pytest.approx(p, rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_criterion_in_order(harness, name):
    x = SAMPLES[name]
    got = run(harness, x)
    if scipy_chi2(x)[2] >= 0.05:
        want = "chi2"
    elif np.std(x, ddof=1) / abs(np.mean(x)) <= 0.02:
        want = "spread"
    elif window(x) is not None:
        want = "window"
    else:
        want = "unreliable"
    assert got["criterion"] == want
    if want == "window":
        lo, hi = window(x)
        assert float(got["window_lo"]) == lo and float(got["window_hi"]) == hi


def test_fixture_set_covers_every_criterion(harness):
    seen = {run(harness, x)["criterion"] for x in SAMPLES.values()}
    tight = 100 + np.random.default_rng(8).uniform(-1, 1, 64) ** 9   # not normal, spread < 2 %
    seen.add(run(harness, tight)["criterion"])
    assert seen == {"chi2", "spread", "window", "unreliable"}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_p_value_is_chi2_survival(harness, name):
    got = run(harness, SAMPLES[name])
    assert float(got["p"]) == pytest.approx(stats.chi2.sf(float(got["chi2"]), int(got["dof"])),
                                            rel=1e-9, abs=1e-300)


def test_rounds_double_until_reliable(harness):
    rng = np.random.default_rng(9)
    bad = np.tile([1.0, 10.0], 8)                       # round 1: 16 samples, two values
    worse = np.tile([1.0, 5.0, 25.0, 125.0], 8)         # round 2: 32 samples
    good = rng.normal(100.0, 0.5, 64)                   # round 3: 64 samples, tight
    got = run(harness, np.concatenate([bad, worse, good]), "--measure")
    assert got["rounds"] == "3" and got["n"] == "64" and got["consumed"] == str(16 + 32 + 64)
    assert got["criterion"] in ("chi2", "spread")


def test_at_most_six_rounds(harness):
    x = np.tile([1.0, 10.0], 600)                       # two values: never normal
    got = run(harness, x, "--measure")
    assert got["rounds"] == "6" and got["criterion"] == "unreliable"
    assert got["n"] == str(16 * 32) and got["consumed"] == str(16 * 63)


def test_iterations_from_environment(harness):
    x = np.random.default_rng(10).normal(1.0, 0.001, 8)
    got = run(harness, x, "--measure", env={"STATLOOP_ITERS": "8"})
    assert got["rounds"] == "1" and got["n"] == "8"


def test_bad_environment_exits_2(harness):
    out = subprocess.run([str(harness)], input="1\n2\n", capture_output=True, text=True,
                         env={"STATLOOP_ITERS": "lots"})
    assert out.returncode == 2 and "STATLOOP_ITERS" in out.stderr
