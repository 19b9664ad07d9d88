"""ReFrame's stored sessions read a period at a time, each session parsed on its own.

Ten thousand stored sessions described at once are 450 MB of JSON and 1.9 GB in ReFrame;
a report now asks for periods that meet end to end (each session once, none left out,
down to 1970) and parses each answer one session at a time. Here the periods against
made-up session starts, the parsing against ``json.loads``, the step search over the
sessions' medians against the one over their launches, and the periods against ReFrame's
own storage: the same sessions in the same order as one query over them all.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from pathlib import Path

import pytest

from placement.judgement import verdict, reading
from placement.report import previous_run, stored_windows
from placement.report.stored_windows import items, next_length, periods

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text", ["[]", " [ ] \n", '[{"a": [1, 2]}, {"b": "x]"}]\n',
                                  '[1,2 , "3",{"c":{}}]', "[[], [[]]]"])
def test_an_array_parsed_one_element_at_a_time_is_json_s(text):
    assert list(items(text)) == json.loads(text)


@pytest.mark.parametrize("text", ["", "{}", "null", '"x"'])
def test_output_that_is_no_array_gives_no_sessions(text):
    assert list(items(text)) == []


@pytest.mark.parametrize("text", ["[1, 2", "[1 2]", "[1,]", "[1] x", "[{]", "{"])
def test_a_malformed_array_is_refused_as_json_refuses_it(text):
    with pytest.raises(ValueError):
        list(items(text))


def _describer(starts: list[float], calls: list[tuple[int, int, int]]):
    """ReFrame's selection of ``starts`` by period (``FROM <= start < TO``), as JSON."""
    def describe(query: str) -> str:
        lo, hi = (int(reading.session_info.parse_time(t).timestamp()) for t in query.split(":"))
        got = [s for s in starts if lo <= s < hi]
        calls.append((lo, hi, len(got)))
        return json.dumps([{"start": s} for s in got])
    return describe


@pytest.mark.parametrize("n, span_days", [(0, 0), (5, 3), (3000, 365), (2000, 3650)])
def test_periods_describe_each_session_once_back_to_1970(n, span_days):
    end = int(dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc).timestamp())
    rng = random.Random(n)
    starts = sorted(end - rng.uniform(0, span_days * 86400) for _ in range(n))
    calls: list[tuple[int, int, int]] = []
    seen = [d["start"] for p in periods(end, _describer(starts, calls)) for d in p]
    assert sorted(seen) == starts                       # each once, none left out
    assert calls[0][1] == end and calls[-1][0] == 0     # from the end back to 1970
    assert all(a[0] == b[1] for a, b in zip(calls, calls[1:]))     # end to end
    # about PER_CALL a call at an even density, a few calls to cross the empty decades
    assert max(c[2] for c in calls) <= 3 * stored_windows.PER_CALL
    assert len(calls) <= n // stored_windows.PER_CALL * 2 + 20


def test_a_period_after_one_that_held_none_is_longer_and_one_after_many_shorter():
    assert next_length(100, 0) == 100 * stored_windows.GROWTH
    assert next_length(100, 1) == 100 * stored_windows.GROWTH
    assert next_length(1000, 4 * stored_windows.PER_CALL) == 250
    assert next_length(1, 10 * stored_windows.PER_CALL) == 1


def test_a_step_over_the_sessions_medians_is_the_one_over_their_launches():
    rng = random.Random(3)
    for n in (4, 9, 40):
        ids = [f"s{i}" for i in range(n)]
        runs = [[rng.uniform(1, 2) * (1.5 if i >= n // 2 else 1)
                 for _ in range(rng.choice((1, 2, 3, 4)))] for i in range(n)]
        from placement.report.verdicts import _median
        assert (verdict.changepoints.step_of_medians(ids, [_median(r) for r in runs], False,
                                             candidates=True)
                == verdict.changepoints.step(ids, runs, False, candidates=True))


def _stored(tmp_path, monkeypatch, n: int):
    """``n`` sessions of one system an hour apart in ReFrame's own storage."""
    if not (Path(sys.executable).parent / "reframe").exists():
        pytest.skip("ReFrame is not installed (make venv): its results storage is the input")
    from test_session_times import _report, _store
    results = tmp_path / "results"
    results.mkdir()
    start = dt.datetime(2026, 11, 23, 1, tzinfo=dt.timezone.utc)
    paths = [_report(tmp_path, f"r{i}.json",
                     (start + dt.timedelta(hours=i)).strftime("%Y%m%dT%H%M%S+0000"))
             for i in range(n)]
    _store(paths, results)
    monkeypatch.setenv("PLACEMENT_RESULTS", str(results))
    return [reading.run_report.load(p) for p in paths]


def test_reframe_s_periods_give_the_sessions_one_query_gives(tmp_path, monkeypatch):
    runs = _stored(tmp_path, monkeypatch, 4)
    newest = runs[-1]
    whole = previous_run.sessions_of(previous_run.sessions_query(
        reading.session_info.ended(newest.session)), set(newest.systems), ROOT)
    monkeypatch.setattr(stored_windows, "PER_CALL", 1)
    monkeypatch.setattr(stored_windows, "FIRST_S", 5400)
    monkeypatch.setattr(stored_windows, "GROWTH", 10**6)     # 1970 in a call
    monkeypatch.setattr(stored_windows, "AT_ONCE_BYTES", 0)  # read as a large store
    queries = _counted(monkeypatch)
    got = previous_run.stored_sessions(newest, ROOT)
    assert [r.uuid for r in got] == [r.uuid for r in whole] == [r.uuid for r in runs[:-1]]
    assert len(queries) >= 3 and not any("?" in q for q in queries)


def _counted(monkeypatch) -> list[str]:
    """The stored-session queries the report asks ReFrame for from now on."""
    queries: list[str] = []
    real = previous_run.run_reframe

    def counted(cmd, root):
        queries.extend(a for a in cmd if a.startswith("--describe-stored-sessions"))
        return real(cmd, root)
    monkeypatch.setattr(previous_run, "run_reframe", counted)
    return queries


def test_a_small_store_is_described_in_one_call(tmp_path, monkeypatch):
    # each call is a ReFrame start (0.7 s of CPU); periods back to 1970 would be seven
    runs = _stored(tmp_path, monkeypatch, 4)
    queries = _counted(monkeypatch)
    got = previous_run.stored_sessions(runs[-1], ROOT)
    assert [r.uuid for r in got] == [r.uuid for r in runs[:-1]]
    assert len(queries) == 1 and queries[0].split("=", 1)[1].startswith("19700101T")
    # the report's one reading: every stored session to now (the history pages show them
    # all, whichever run's report writes them), its whole runs and confirmations among them
    from placement.report import history_read
    queries.clear()
    reading = history_read.read(runs[-1], ROOT, None)
    assert not reading.error and [u for _, u in reading.sessions] == [r.uuid for r in runs[:-1]]
    assert len(queries) == 1


def test_a_large_store_is_described_a_period_at_a_time(tmp_path, monkeypatch):
    runs = _stored(tmp_path, monkeypatch, 2)
    database = previous_run.results_database(ROOT)
    monkeypatch.setattr(stored_windows, "AT_ONCE_BYTES", database.stat().st_size - 1)
    assert not stored_windows.at_once(database)
    queries = _counted(monkeypatch)
    got = previous_run.stored_sessions(runs[-1], ROOT)
    assert [r.uuid for r in got] == [runs[0].uuid] and len(queries) > 1


def test_a_store_not_yet_written_is_small(tmp_path):
    assert stored_windows.at_once(tmp_path / "results.db")


def test_a_step_too_small_to_report_is_given_up_before_its_shuffles(monkeypatch):
    # 999 shuffles of every session, thrown away when the step moved the median too little
    rng = random.Random(5)
    ids = [f"s{i}" for i in range(400)]
    tiny = [rng.uniform(1, 1.01) * (1.001 if i >= 200 else 1) for i in range(400)]
    big = [rng.uniform(1, 1.01) * (1.5 if i >= 200 else 1) for i in range(400)]
    calls = []
    real = verdict.changepoints.best_split

    def counted(series, *args):
        calls.append(len(series))
        return real(series, *args)
    monkeypatch.setattr(verdict.changepoints, "best_split", counted)
    assert verdict.changepoints.step_of_medians(ids, tiny) is None and len(calls) == 1
    assert verdict.changepoints.step_of_medians(ids, tiny, candidates=True) is not None
    calls.clear()
    step = verdict.changepoints.step_of_medians(ids, big)
    assert step is not None and step.index == 200 and len(calls) > 1


def test_reframe_s_output_is_read_as_text_mode_reads_it(tmp_path, monkeypatch):
    """ReFrame's output read whole in one go is what ``subprocess.run(text=True)`` gives:
    its newlines made ``\\n``; a failure is its last line of errors (else of output), a
    call past the time limit is killed and says so."""
    import subprocess

    def py(code: str) -> list[str]:
        return [sys.executable, "-c", code]
    text = "import sys; sys.stdout.write('a\\r\\nb\\rc\\n' + 'x' * 100000)"
    assert previous_run.run_reframe(py(text), tmp_path) == \
        subprocess.run(py(text), capture_output=True, text=True).stdout
    fails = "import sys; print('out'); print('one', file=sys.stderr); " \
            "print('ERROR: two', file=sys.stderr); sys.exit(3)"
    with pytest.raises(RuntimeError, match="ERROR: two"):
        previous_run.run_reframe(py(fails), tmp_path)
    with pytest.raises(RuntimeError, match="only out"):
        previous_run.run_reframe(py("import sys; print('only out'); sys.exit(1)"), tmp_path)
    monkeypatch.setattr(previous_run, "TIMEOUT_S", 0.5)
    with pytest.raises(subprocess.TimeoutExpired, match="timed out after 0.5 seconds"):
        previous_run.run_reframe(py("import time; time.sleep(30)"), tmp_path)
