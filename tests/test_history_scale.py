"""A history page of many sessions stays bounded: rows, figure points, memory and judging.

The benchmark (``benchmarks/history_page.py``) times 10,000 sessions; these tests check,
without timing anything, what makes that possible: each session judged once against a
baseline prepared once, no session kept whole, the page listing the newest sessions (the
CSV every one), the figure drawing groups of sessions beyond a bound while the NODE
sessions and the baseline's stay one by one, and the step still found where it starts.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import sys
import uuid
from pathlib import Path

import pytest

from placement import cli
from placement.judgement import baselines, reading, verdict
from placement.report import history_bins, history_page
from placement.report.history_points import Point
from placement.util import PlacementError, baseline_file

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import history_page as bench  # noqa: E402  (the benchmark's sessions)

#: more sessions than the page lists and than a panel draws one by one
MANY = 450


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """The system's baseline of the first five A/A sessions."""
    where = tmp_path_factory.mktemp("baselines")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLACEMENT_BASELINES", str(where))
        froms = [a for p in bench.SOURCES[:5] for a in ("--from", str(p))]
        assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
        yield mp


def _stream(n: int, seen: list[int]):
    """The benchmark's ``n`` sessions as run reports, one at a time; ``seen`` counts
    how many were made (a page that holds them all would need them made before)."""
    for d in bench.made(n):
        seen.append(1)
        yield reading.run_report.from_data(d, Path("stored"))


def test_a_node_line_alone_is_the_one_the_whole_judgement_draws(baseline):
    """Each session's node line, judged against a baseline prepared once, is the one
    ``judge_run`` gives it: the same shift and flag, session by session."""
    # the weeks around the NODE week (the whole judgement of each is slow)
    sessions = list(bench.made(bench.WEEKS))[bench.NODE_WEEK - 4:bench.NODE_WEEK + 4]
    path = baseline_file("generic")
    old = baselines.store.load(path)
    against = baselines.samples.Against(old, str(path))
    flagged = 0
    for d in sessions:
        new = baselines.store.from_run(reading.run_report.from_data(d, Path("stored")), "generic")
        whole = baselines.samples.judge_entries(old, new, str(path)).node
        alone = against.node(new)
        assert alone == whole
        flagged += bool(alone and alone.flagged)
    assert flagged == 1        # the NODE week


def _counted(monkeypatch, module, name: str, calls: dict) -> None:
    """``module.name`` counting its calls in ``calls[name]`` (and doing what it did)."""
    real = getattr(module, name)

    def counted(*a, **k):
        calls[name] += 1
        return real(*a, **k)
    calls[name] = 0
    monkeypatch.setattr(module, name, counted)


def test_a_long_history_lists_the_newest_sessions_and_draws_groups(baseline, tmp_path,
                                                                   monkeypatch):
    """450 sessions: the page lists the newest 200 (the CSV has every one's shift, NODE
    line and medians), the figure says it draws groups, the NODE session is flagged and
    the step found where it starts. Judging is linear in the sessions: each value's
    baseline sessions are prepared once for the page, not once per session, and no
    session gets the whole judgement (every value's test)."""
    calls: dict = {}
    _counted(monkeypatch, verdict.over_sessions, "prepare_sessions", calls)
    _counted(monkeypatch, verdict.over_sessions, "judge_run", calls)
    conf = [reading.run_report.from_data(d, Path("c")) for d in bench.confirmations(MANY)]
    seen: list[int] = []
    out = history_page.write("generic", _stream(MANY, seen), conf, tmp_path / "history")
    stored = baselines.samples.entries(baselines.store.load(baseline_file("generic")))
    assert len(seen) == MANY
    assert calls == {"prepare_sessions": len(stored), "judge_run": 0}, calls
    html = (out / "index.html").read_text()
    table = re.search(r'<table id="sessions">.*?</table>', html, re.S).group(0)
    dates = re.findall(r"<tr[^>]*><td>(\d{4}-\d\d-\d\d) ", table)
    assert len(dates) == history_page.RECENT_ROWS
    assert dates[-1] == bench.when_of(MANY - 1, MANY).strftime("%Y-%m-%d")
    assert f"The newest {history_page.RECENT_ROWS} of {MANY} sessions" in html
    with open(out / "numbers.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    shifts = {r["row"] for r in rows if r["quantity"] == "node shift"}
    node = str(uuid.uuid5(uuid.NAMESPACE_URL, f"history-{bench.node_session(MANY)}-False"))
    assert len(shifts) == MANY
    assert node in {r["row"] for r in rows if r["quantity"] == "NODE line"}
    assert "median of 2 consecutive sessions" in html
    steps = re.search(r'<table id="steps">.*?</table>', html, re.S).group(0)
    on = re.findall(rf"<td>{bench.STEP_TEST}[^<]*</td><td>(\d{{4}}-\d\d-\d\d)", steps)
    step_day = bench.when_of(int(bench.STEP_WEEK * MANY / bench.WEEKS) + 1, MANY).date()
    assert any(abs(dt.date.fromisoformat(d) - step_day) <= dt.timedelta(days=2) for d in on)
    assert (out / history_page.FIGURE).stat().st_size > 0


def _points(n: int, flagged: set[int], base: set[int]) -> list[Point]:
    start = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    return [Point(f"s{i}", start + dt.timedelta(hours=i), float(i % 7), i in flagged,
                  i in base, {("T", (), "t"): 1.0 + i % 5}) for i in range(n)]


def test_beyond_the_bound_sessions_are_drawn_in_groups_and_flagged_ones_alone():
    """10,000 sessions: a panel draws at most the bound of grouped points plus the NODE
    sessions (node panel) or the baseline's (value panels), each one by one."""
    n, flagged, base = 10_000, {17, 5003, 9999}, {0, 1, 2}
    pts = _points(n, flagged, base)
    gs = history_bins.groups(n)
    assert len(gs) <= history_bins.MAX_POINTS
    assert sorted(i for g in gs for i in g) == list(range(n))
    node = history_bins.node_series(pts, gs)
    assert len(node["dates"]) <= history_bins.MAX_POINTS + len(flagged)
    assert sorted(d for d, f in zip(node["dates"], node["flagged"]) if f) == \
        [pts[i].when for i in sorted(flagged)]
    assert node["dates"] == sorted(node["dates"])
    panel = history_bins.value_series(pts, gs, ("T", (), "t"))
    assert len(panel["dates"]) <= history_bins.MAX_POINTS + len(base)
    assert sum(panel["baseline"]) == len(base)
    assert history_bins.caption(gs, n)
    few = history_bins.groups(52)
    assert len(few) == 52 and not history_bins.caption(few, 52)


def test_a_value_s_median_taken_in_python_is_numpy_s():
    """The new launches' median (``_Value.a``, sorted in Python for speed) is the number
    NumPy's median gives, for an odd and an even count of launches."""
    import numpy as np
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 6, 9, 10):
        runs = list(rng.lognormal(0, 0.2, n))
        v = verdict.over_sessions.Series(runs, [("s0", [1.0, 1.1])], False).prepared
        assert v.a == float(np.median(np.log(runs)))


def test_the_page_after_a_run_judges_only_the_sessions_it_has_not_kept(baseline, tmp_path,
                                                                        monkeypatch):
    """A page rebuilt in its folder (the next run's report) judges only the new session:
    the points of those judged before are kept beside it for the same baseline and
    judgement, and the page is the same as one built from nothing."""
    from placement.report import history_points
    calls: dict = {}
    _counted(monkeypatch, verdict.over_sessions, "node_line", calls)
    kept, fresh = tmp_path / "kept", tmp_path / "fresh"
    data = list(bench.made(31))
    history_page.write("generic", (reading.run_report.from_data(d, Path("s")) for d in data[:30]), [],
                       kept)
    assert calls["node_line"] == 30
    history_page.write("generic", (reading.run_report.from_data(d, Path("s")) for d in data), [], kept)
    assert calls["node_line"] == 31          # the one new session alone
    history_page.write("generic", (reading.run_report.from_data(d, Path("s")) for d in data), [], fresh)
    for name in ("index.html", "numbers.csv", "README.md"):
        assert (kept / name).read_text() == (fresh / name).read_text(), name
    assert history_points.CACHE in (kept / ".placement-report").read_text()
    key = history_points.cache_key("generic", baselines.store.version(baseline_file("generic")))
    pts, _ = history_points.read_cache(kept / history_points.CACHE, key)
    assert len(pts) == 31
    # another baseline or judgement (another key), or a link in its place: judged again
    assert history_points.read_cache(kept / history_points.CACHE, "another") == ({}, {})
    link = tmp_path / "link.json"
    link.symlink_to(kept / history_points.CACHE)
    assert history_points.read_cache(link, key) == ({}, {})


def test_the_baseline_sessions_shifts_are_taken_once_for_the_page(baseline, tmp_path,
                                                                  monkeypatch):
    """The baseline sessions' own shifts depend on the baseline and the values a session's
    shift is taken over, not on the session: a page of sessions with the same values takes
    them once, not once per session (they were a tenth of each session's node line)."""
    from placement.judgement import verdict
    calls: dict = {}
    _counted(monkeypatch, verdict.node_shift, "session_shifts", calls)
    sessions = [reading.run_report.from_data(d, Path("stored")) for d in bench.made(60)]
    history_page.write("generic", sessions, [], tmp_path / "history")
    assert calls == {"session_shifts": 1}, calls


def test_a_session_is_judged_with_the_cyclic_collector_paused(baseline, tmp_path):
    """Thousands of sessions make millions of objects and no cycles: the collector's walks
    over them found nothing and cost a tenth of a page, so it is paused while the page
    judges them, and resumed after."""
    import gc
    enabled: list[bool] = []

    def sessions():
        for d in bench.made(8):
            enabled.append(gc.isenabled())
            yield reading.run_report.from_data(d, Path("stored"))
    assert gc.isenabled()
    history_page.write("generic", sessions(), [], tmp_path / "history")
    assert enabled == [False] * 8 and gc.isenabled()


def test_a_runs_own_entries_read_unchecked_are_the_checked_ones():
    """A run's entries as ``from_run`` made them read the same without each leaf's checks
    (``run_entries``) as through them (``entries``): sessions, launches and marks."""
    fixtures = Path(__file__).resolve().parent / "fixtures"
    paths = sorted(fixtures.glob("runreports/*.json")) + sorted(fixtures.glob("*/*.json"))[::9]
    read = 0
    for p in paths:
        try:
            report = reading.run_report.load(p)
        except PlacementError:      # a fixture that is no run report
            continue
        for system in report.systems:
            try:
                new = baselines.store.from_run(report, system)
            except PlacementError:  # no values measured
                continue
            assert baselines.samples.run_entries(new) == baselines.samples.entries(new, "run"), p
            read += 1
    assert read >= 20


def test_a_node_line_alone_takes_no_launch_spread(baseline):
    """The node's line reads each value's launches' median, never their spread: a history
    judging only node lines leaves each value's pooled launch variance untaken."""
    path = baseline_file("generic")
    old = baselines.store.load(path)
    against = baselines.samples.Against(old, str(path))
    new = baselines.store.from_run(reading.run_report.from_data(next(bench.made(3)), Path("s")), "generic")
    fresh = baselines.samples.entries(new, "run")
    keys, series, _ = baselines.samples._series(against.stored, fresh, {}, against._intervals,
                                               prepared=against.prepared)
    assert verdict.over_sessions.node_line(series) is not None
    assert series and all("w" not in s.prepared.__dict__ for s in series)
    whole = baselines.samples.judge_entries(old, new, str(path))
    assert whole.node == verdict.over_sessions.node_line(series)


def test_unit_mismatches_against_a_file_s_entries_taken_once():
    """``unit_mismatches`` given the file's entries (a history judges thousands of runs
    against one file) finds what it finds walking the file itself."""
    from placement.judgement import verdict
    old = {"T": {"generic:default": {"t": [1.0, -0.1, 0.1, "s"], "r": [2.0, None, 0.1, "GB/s"]}}}
    new = {"T": {"generic:default": {"t": [1.0, -0.1, 0.1, "ms"], "r": [2.0, None, 0.1,
                                                                       "GB/s"]}}}
    want = {("T", ("generic:default",), "t"): ("s", "ms")}
    assert verdict.intervals.unit_mismatches(old, new) == want
    assert verdict.intervals.unit_mismatches({}, new, verdict.intervals.entries(old)) == want


def test_judging_a_session_leaves_no_reference_cycle(baseline):
    """With the collector paused (:func:`test_a_session_is_judged_with_the_cyclic_collector_paused`)
    a cycle is never freed until the page is done: judging a session makes none, so ten
    thousand sessions hold no more memory than one."""
    import gc
    from placement.report import history_points
    path = baseline_file("generic")
    against = baselines.samples.Against(baselines.store.load(path), str(path))
    reports = [reading.run_report.from_data(d, Path("stored")) for d in bench.made(6)]
    gc.collect()
    gc.disable()
    try:
        for r in reports:
            history_points.point(r, "generic", against, set(), {})
        assert gc.collect() == 0
    finally:
        gc.enable()


def _panel_one_by_one(pts: list[Point], gs: list[range], e) -> dict:
    """A value's panel as :func:`.history_bins.value_series` took it before it read its
    groups as slices: session by session."""
    import statistics
    out: list[tuple] = []
    for g in gs:
        mine = [pts[i] for i in g if e in pts[i].medians]
        rest = [p for p in mine if not p.baseline]
        part = [(p.when, p.medians[e], True) for p in mine if p.baseline]
        if len(rest) == 1:
            part.append((rest[0].when, rest[0].medians[e], False))
        elif rest:
            part.append((rest[len(rest) // 2].when,
                         statistics.median(p.medians[e] for p in rest), False))
        out += sorted(part, key=lambda x: x[0])
    return {"dates": [x[0] for x in out], "values": [x[1] for x in out],
            "baseline": [x[2] for x in out]}


def test_a_panel_read_in_slices_is_the_one_read_session_by_session():
    """A value's panel, its groups read as slices where every session has the value and
    none is the baseline's, is the panel read session by session: with the baseline's
    sessions among the groups, sessions without the value, and groups of one."""
    import random
    rng = random.Random(4)
    e = ("T", (), "t")
    for n in (5, 399, 450, 3000):
        pts = [Point(p.uuid, p.when, p.shift, p.flagged, rng.random() < 0.02,
                     {} if rng.random() < 0.03 else {e: rng.uniform(1, 2)})
               for p in _points(n, set(), set())]
        gs = history_bins.groups(n)
        assert history_bins.value_series(pts, gs, e) == _panel_one_by_one(pts, gs, e)


def test_values_prepared_together_are_the_ones_prepared_alone(baseline):
    """A run's values judged against a prepared baseline (a history's) have their launches
    taken to the log scale in one call: the same numbers as one value at a time; launches
    that are no positive finite floats are refused as one at a time refuses them."""
    import numpy as np
    path = baseline_file("generic")
    against = baselines.samples.Against(baselines.store.load(path), str(path))
    new = baselines.store.from_run(reading.run_report.from_data(next(bench.made(3)), Path("s")), "generic")
    fresh = baselines.samples.run_entries(new)

    def series() -> list:
        return baselines.samples._series(against.stored, fresh, {}, against._intervals,
                                        prepared=against.prepared)[1]
    together, alone = verdict.over_sessions._prepared(series()), [verdict.over_sessions._prepare(s) for s in series()]
    assert len(together) > 10
    for a, b in zip(together, alone):
        assert a.new.tobytes() == b.new.tobytes() and a.sign == b.sign and a.dfw == b.dfw
    bad = series()
    bad[3] = verdict.over_sessions.Series([1.0, float("nan")], bad[3].sessions, bad[3].higher_is_better,
                            bad[3].key, bad[3].baseline)
    with pytest.raises(ValueError, match="new runs: runs must be positive finite"):
        verdict.over_sessions._prepared(bad)
    assert np.isfinite(verdict.over_sessions._prepared(series())[0].new).all()


def test_the_node_shift_s_median_is_numpy_s():
    """The node's shift, the median of its values' changes taken in Python, is NumPy's:
    odd and even counts, and NumPy's own where a change is zero (of either sign) or not
    finite."""
    import numpy as np
    rng = np.random.default_rng(8)
    for n in (1, 2, 9, 10, 37, 38):
        x = list(rng.normal(0, 0.1, n))
        assert verdict.over_sessions._median(x) == float(np.median(x))
    for x in ([0.0, -0.0, 0.1, -0.1], [-0.0, -0.0, 0.0, 0.2], [1.0, float("inf"), 2.0],
              [1.0, float("nan"), 2.0]):
        got, want = verdict.over_sessions._median(x), float(np.median(x))
        assert repr(got) == repr(want)
