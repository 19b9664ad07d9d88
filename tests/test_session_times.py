"""A run report's session: crafted values never run, and "latest"/"previous" by its own time.

A run report anyone can drop into ``results/runs/`` reaches ReFrame's stored-session
queries, whose filter ReFrame evaluates as Python; here crafted ``time_start``,
``time_end`` and ``uuid`` values go through the real ``placement report`` (ReFrame
and its results storage included) and must run nothing. "Latest" and "previous" are
chosen by the sessions' recorded start and system, with file times that disagree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid as _uuid
from pathlib import Path

import pytest

from placement.judgement import reading
from placement.report import previous_run
from placement.util import PlacementError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "runreports"
FIRST = FIXTURES / "generic-first-run.json"


def _report(tmp: Path, name: str, start: str, system: str | None = None, **session) -> Path:
    """A copy of a real run report with its own session time (and system)."""
    data = json.loads(FIRST.read_text())
    when = reading.session_info.parse_time(start).timestamp()
    uuid = str(_uuid.uuid4())
    data["session_info"].update({"uuid": uuid, "time_start": start, "time_end": start,
                                 "time_start_unix": when, "time_end_unix": when, **session})
    for run in data["runs"]:
        for tc in run["testcases"]:
            tc["uuid"] = f"{uuid}:{tc['uuid'].split(':', 1)[-1]}"
            tc["system"] = system or tc["system"]
    path = tmp / name
    path.write_text(json.dumps(data))
    return path


def _placement(*args: str, results: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PLACEMENT_RESULTS": str(results)}
    return subprocess.run([sys.executable, "-m", "placement", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def _crafted(marker: Path) -> str:
    return f"20261201T000000+0000?__import__('os').system('touch {marker}') or True#"


@pytest.mark.parametrize("key", ["time_start", "time_end", "uuid"])
def test_a_crafted_session_value_is_refused_and_runs_nothing(tmp_path, key):
    if shutil.which("reframe") is None and not (Path(sys.executable).parent / "reframe").exists():
        pytest.skip("ReFrame is not installed (make venv): the query it would evaluate")
    marker = tmp_path / "ran"
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    # a stored session for ReFrame's filter to be evaluated over, earlier than the crafted one
    _store([FIRST], results)
    crafted = _report(results / "runs", "run-report-crafted.json", "20261201T000000+0000",
                      **{key: _crafted(marker)})
    proc = _placement("report", "--run", str(crafted), "--output", str(tmp_path / "out"),
                      results=results, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    expected = "is not a UUID" if key == "uuid" else "is not a session time"
    assert f"{crafted}: " in line and expected in line, line
    # --latest alone: the crafted report is passed over with its reason, nothing else to show
    proc = _placement("report", "--latest", "--output", str(tmp_path / "out"),
                      results=results, cwd=ROOT)
    assert proc.returncode == 2 and f"skipped the run report {crafted}: " in proc.stderr
    assert "no run reports in" in proc.stderr.strip().splitlines()[-1]
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_a_good_report_beside_a_crafted_one_is_reported_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    results = tmp_path / "results"
    (results / "runs").mkdir(parents=True)
    _store([FIRST], results)
    good = _report(results / "runs", "run-report-a.json", "20261130T000000+0000")
    _report(results / "runs", "run-report-b.json", "20261130T000000+0000",
            time_start=_crafted(marker))                    # written last
    proc = _placement("report", "--latest", "--output", str(tmp_path / "out"),
                      results=results, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "skipped the run report" in proc.stderr and "run-report-b.json" in proc.stderr
    text = (Path(proc.stdout.strip()) / "README.md").read_text()
    assert json.loads(good.read_text())["session_info"]["uuid"] in text
    # compared with the stored run before it, by a query of ours
    assert "Previous run: session 61018214 " in text
    assert not marker.exists()


def test_the_stored_session_query_is_ours_alone():
    when = reading.session_info.parse_time("20261122T231250+0100")
    query = previous_run.sessions_query(when)
    assert query == ("19700101T0000+0000:20261122T221250+0000"
                     "?locals().get('acceptance') != 'confirmation'")
    for bad in ("20261122T231250", "now", "2026-11-22 23:12:50+00:00'", 1795389170, None,
                "20261122T231250+0000\n"):
        with pytest.raises(ValueError, match="is not a session time"):
            reading.session_info.parse_time(bad)


def test_latest_is_the_session_that_started_last_not_the_file_written_last(tmp_path,
                                                                            monkeypatch, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    later = _report(runs, "run-report-1.json", "20261123T120000+0000")
    earlier = _report(runs, "run-report-2.json", "20261123T110000+0000")
    os.utime(later, (1_000_000_000, 1_000_000_000))       # the later session, written first
    assert reading.run_report.latest(runs) == later
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"placement: the clock went backwards: {earlier.name} was written last but "
                   f"its session started 2026-11-23 11:00:00 +0000, before {later.name}'s "
                   f"(2026-11-23 12:00:00 +0000); the latest run is {later.name}, by session "
                   "time (a clock set back, or a copied file)"]
    # in agreement: nothing said
    os.utime(later, None)
    assert reading.run_report.latest(runs) == later and capsys.readouterr().err == ""


def test_report_latest_shows_the_run_that_started_last(tmp_path):
    results = tmp_path / "results"
    runs = results / "runs"
    runs.mkdir(parents=True)
    later = _report(runs, "run-report-1.json", "20261123T120000+0000")
    _report(runs, "run-report-2.json", "20261123T110000+0000")
    os.utime(later, (1_000_000_000, 1_000_000_000))
    proc = _placement("report", "--latest", "--no-compare", "--output", str(tmp_path / "out"),
                      results=results, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).name == "generic-20261123T120000"
    line, verdict = proc.stderr.strip().splitlines()
    assert line.startswith("placement: the clock went backwards: run-report-2.json was written")
    assert verdict.startswith("ACCEPTANCE generic ")      # the run's line, judged once


def test_a_session_in_this_clocks_future_is_said(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    future = _report(runs, "run-report-1.json", "20991231T000000+0000")
    assert reading.run_report.latest(runs) == future
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"placement: {future.name} started 2099-12-31 00:00:00 +0000, after "
                           "this machine's clock (")


def test_latest_of_a_system_on_a_shared_results_folder(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    a = _report(runs, "run-report-1.json", "20261123T110000+0000", system="alpha")
    b = _report(runs, "run-report-2.json", "20261123T120000+0000", system="beta")
    assert reading.run_report.latest(runs, "alpha") == a and reading.run_report.latest(runs, "beta") == b
    assert reading.run_report.latest(runs) == b
    with pytest.raises(PlacementError, match="no run reports of system 'gamma'"):
        reading.run_report.latest(runs, "gamma")


def test_record_add_from_latest_takes_the_later_session(tmp_path, capsys):
    results = tmp_path / "results"
    runs = results / "runs"
    runs.mkdir(parents=True)
    first = _report(runs, "run-report-1.json", "20261123T100000+0000")
    baseline = tmp_path / "generic.yaml"
    proc = _placement("baseline", "record", "--system", "generic", "--baselines", str(baseline),
                      "--from", str(first), results=results, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    # the next run, recorded while the clock was an hour behind: an older file time
    second = _report(runs, "run-report-2.json", "20261123T110000+0000")
    os.utime(second, (os.stat(first).st_mtime - 3600,) * 2)
    proc = _placement("baseline", "record", "--add", "--system", "generic", "--baselines",
                      str(baseline), "--from", "latest", results=results, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "the clock went backwards" in proc.stderr
    assert json.loads(second.read_text())["session_info"]["uuid"] in baseline.read_text()


def test_the_previous_run_is_of_the_same_system_by_session_time(tmp_path, monkeypatch):
    """ReFrame's own storage holds sessions of two systems on one host; the previous run
    of each is its own system's, chosen by recorded start."""
    if not (Path(sys.executable).parent / "reframe").exists():
        pytest.skip("ReFrame is not installed (make venv): its results storage is the input")
    results = tmp_path / "results"
    results.mkdir()
    reports = {name: _report(tmp_path, f"{name}.json", start, system=system)
               for name, start, system in (("a1", "20261123T100000+0000", "alpha"),
                                           ("b1", "20261123T103000+0000", "beta"),
                                           ("a2", "20261123T110000+0000", "alpha"),
                                           ("b2", "20261123T113000+0000", "beta"))}
    _store(reports.values(), results)
    monkeypatch.setenv("PLACEMENT_RESULTS", str(results))
    a2, b2 = (reading.run_report.load(reports[n]) for n in ("a2", "b2"))
    uuid = {n: json.loads(p.read_text())["session_info"]["uuid"] for n, p in reports.items()}
    assert previous_run.previous_session(a2, ROOT) == uuid["a1"]
    assert previous_run.previous_session(b2, ROOT) == uuid["b1"]
    # b1 and b2 as the two parts of one resumed run: no earlier run of beta
    pooled = reading.run_report.pool([reading.run_report.load(reports["b1"]), b2])
    assert previous_run.previous_session(pooled, ROOT) is None
    # its history: this system's sessions only (ReFrame's period ends at this run's end, exclusive)
    assert [r.uuid for r in previous_run.stored_sessions(b2, ROOT)] == [uuid["b1"]]


def test_a_report_reads_the_stored_sessions_once(tmp_path, monkeypatch):
    """The comparison with the previous run and the history read the same stored whole
    runs: ReFrame describes each once for a report (every stored session's JSON is
    gigabytes for ten thousand sessions), and the previous run is still found."""
    if not (Path(sys.executable).parent / "reframe").exists():
        pytest.skip("ReFrame is not installed (make venv): its results storage is the input")
    from placement.report import assembly
    results, reports = _two_stored(tmp_path)
    monkeypatch.setenv("PLACEMENT_RESULTS", str(results))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "baselines"))
    described: list[str] = []
    real = previous_run.run_reframe

    def counted(cmd, root):
        out = real(cmd, root)
        if any(a.startswith("--describe-stored-sessions") for a in cmd):
            described.extend(d["session_info"]["uuid"] for d in json.loads(out or "[]"))
        return out
    monkeypatch.setattr(previous_run, "run_reframe", counted)
    out = assembly.report_runs([reading.run_report.load(reports[-1])], tmp_path / "reports", None)
    first = json.loads(reports[0].read_text())["session_info"]["uuid"]
    # each described once; read to now (the shared history page shows every stored session)
    last = json.loads(reports[-1].read_text())["session_info"]["uuid"]
    assert described == [first, last], described
    assert f"Previous run: session {first[:8]}" in (out / "README.md").read_text()


def _two_stored(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Two run reports an hour apart, stored in ReFrame's results database under tmp_path."""
    results = tmp_path / "results"
    results.mkdir()
    reports = [_report(tmp_path, f"r{i}.json", start) for i, start in
               enumerate(("20261123T100000+0000", "20261123T110000+0000"))]
    _store(reports, results)
    return results, reports


def _store(paths, results: Path) -> None:
    """Put run reports into ReFrame's results database, with ReFrame's own storage code."""
    script = ("import json, sys\n"
              "import reframe.core.config as config\n"
              "import reframe.core.runtime as rt\n"
              "site = config.load_config(sys.argv[1])\n"
              "site.select_subconfig('generic')\n"
              "rt.init_runtime(site)\n"
              "from reframe.frontend.reporting.storage import StorageBackend\n"
              "backend = StorageBackend.default()\n"
              "for p in sys.argv[2:]:\n"
              "    backend.store(json.load(open(p)), p)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(ROOT / "config" / "settings.py"),
                           *map(str, paths)], capture_output=True, text=True,
                          env={**os.environ, "PLACEMENT_RESULTS": str(results)}, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_an_acceptance_runs_session_filter_takes_only_uuids(tmp_path):
    """acceptance.sh puts ``placement acceptance sessions`` into --performance-compare,
    whose filter ReFrame evaluates: a part with a crafted uuid is dropped, never quoted in."""
    marker = tmp_path / "ran"
    good = _report(tmp_path, "run-report-1.json", "20261123T100000+0000")
    bad = _report(tmp_path, "run-report-2.json", "20261123T110000+0000",
                  uuid=f"x',) or __import__('os').system('touch {marker}') or ('")
    proc = _placement("acceptance", "sessions", str(good), str(bad), results=tmp_path,
                      cwd=ROOT)
    uuid = json.loads(good.read_text())["session_info"]["uuid"]
    assert proc.returncode == 0 and proc.stdout == f"?uuid in ('{uuid}',)\n", proc.stderr
    proc = _placement("acceptance", "sessions", str(bad), results=tmp_path, cwd=ROOT)
    assert proc.returncode == 2 and "is not a UUID" in proc.stderr
    assert not marker.exists()


def test_a_report_reads_its_baseline_once(tmp_path, monkeypatch):
    """The verdicts, the history page and its points judge against one reference file:
    a report reads and checks it once (seconds each at 100k entries), not once for each."""
    if not (Path(sys.executable).parent / "reframe").exists():
        pytest.skip("ReFrame is not installed (make venv): its results storage is the input")
    from placement.judgement import baselines
    from placement.report import assembly
    results, reports = _two_stored(tmp_path)
    where = tmp_path / "baselines"
    proc = _placement("baseline", "record", "--system", "generic", "--baselines",
                      str(where / "generic.yaml"), "--from", str(reports[0]),
                      results=results, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    monkeypatch.setenv("PLACEMENT_RESULTS", str(results))
    monkeypatch.setenv("PLACEMENT_BASELINES", str(where))
    read: list[Path] = []
    real = baselines.store._load

    def counted(path):
        read.append(path)
        return real(path)
    monkeypatch.setattr(baselines.store, "_load", counted)
    out = assembly.report_runs([reading.run_report.load(reports[-1])], tmp_path / "reports", None)
    assert (out.parent / "history" / "generic" / "index.html").is_file()
    assert read == [where / "generic.yaml"], read


def test_reframe_s_form_is_read_as_strptime_reads_it():
    """A time in ReFrame's own form is read without ``strptime`` (a history reads three of
    each of ten thousand sessions): the same datetime and zone where ``strptime`` reads
    one, the same refusal where it reads none (no such day, second 60, a zone of a day or
    more, minutes 60, other digits than ASCII's), and other forms still ``strptime``'s."""
    import datetime as dt
    import random

    def by_strptime(value):
        try:
            when = dt.datetime.strptime(value, "%Y%m%dT%H%M%S%z")
        except ValueError:
            try:
                when = dt.datetime.fromisoformat(value)
            except ValueError:
                return None
        return (when, when.utcoffset()) if when.tzinfo is not None else None

    def ours(value):
        try:
            when = reading.session_info.parse_time(value)
        except ValueError:
            return None
        return when, when.utcoffset()
    rng = random.Random(6)
    values = ["20261122T231250+0000", "20261122T231250-0130", "20260229T000000+0000",
              "20280229T000000+0000", "20261322T231250+0000", "20261122T235960+0000",
              "20261122T231250+2400", "20261122T231250+2359", "20261122T231250+0060",
              "00001122T231250+0000", "20261122T231250Z", "2026-11-22T23:12:50+00:00",
              "20261122T231250", "20261122T231250+00000", "\u0662\u0660\u0662\u0666"
              "1122T231250+0000"]
    for _ in range(20000):
        d = dt.datetime(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28),
                        rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
        values.append(f"{d.year:04d}{d:%m%d}T{d:%H%M%S}{rng.choice('+-')}"
                      f"{rng.randint(0, 25):02d}{rng.randint(0, 61):02d}")
        values.append("".join(rng.choice("0123456789") for _ in range(8)) + "T" +
                      "".join(rng.choice("0123456789") for _ in range(6)) + "+0000")
    assert [ours(v) for v in values] == [by_strptime(v) for v in values]
    assert sum(ours(v) is not None for v in values) > 10000
