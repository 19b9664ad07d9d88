"""The history pages' fixes: each node's page judged against its own baseline entries (as
the summary's HISTORY line), the NODE column from the summary's own NODE lines (the load
included), the shared page read to now whatever run's report writes it, unreadable stored
sessions counted on the page, and the sessions' hosts shown."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from placement import cli
from placement.acceptance import peer_lines
from placement.judgement import baselines, reading
from placement.report import history_page, history_points, history_read, previous_run

FIXTURES = Path(__file__).parent / "fixtures"
PEERS = FIXTURES / "peers"
HOG = sorted((FIXTURES / "aa-dev2core-quiet-20261126" / "hog").glob("run-*.json"))


def _copies(tmp: Path, paths: list[Path]) -> list[Path]:
    """The fixtures copied beside each other in ``tmp`` (nothing written beside a fixture)."""
    out = []
    for i, p in enumerate(paths):
        dest = tmp / f"{i:02d}-{p.name}"
        shutil.copy(p, dest)
        out.append(dest)
    return out


def _unchanged(tmp: Path) -> list[Path]:
    """The first run report of each ``peers/unchanged-*`` session, copied."""
    firsts = [sorted(d.glob("run-*.json"))[0] for d in sorted(PEERS.glob("unchanged-*"))]
    return _copies(tmp, firsts[:5])


def test_a_nodes_page_judges_its_values_against_its_own_entries(tmp_path, monkeypatch):
    """A distributed run's baseline keys each value by its node; a node's page judged the
    node's cases alone (keyed without the node) and found none of its entries: every
    session blank. Now it judges the node as the summary's HISTORY line does, the same
    shift and the same line."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "bl"))
    runs = _unchanged(tmp_path)
    froms = [a for p in runs[:4] for a in ("--from", str(p))]
    assert cli.main(["baseline", "record", "--system", "testnodes", *froms]) == 0
    path = tmp_path / "bl" / "testnodes.yaml"
    old = baselines.store.load(path)
    report = reading.run_report.load(runs[4])
    said = {f.node: f for f in peer_lines.own_history(report, "testnodes")}
    assert said, "the summary judges each node against its own entries"
    for node, finding in said.items():
        judge = history_points.Judge("testnodes", old, str(path), node=node)
        p, _ = judge(report)
        assert p.shift is not None and p.medians, node
        assert all(node in map(str, e[1]) for e in p.medians)
        percent = finding.data["node_percent"]
        if percent is not None:     # the summary's HISTORY line names the shift: so does the row
            assert abs(p.shift - percent * 100) < 1e-9 and p.flagged
            assert any(ln.startswith(f"HISTORY testnodes {node}:") for ln in p.lines)


def test_the_node_column_shows_the_summarys_load_line():
    """A run beside a competing load fails on its load's NODE line; the history's column
    showed only the node's shift and left that session blank."""
    report = reading.run_report.load(HOG[0])
    system = report.systems[0]
    p = history_points.point(report, system, baselines.samples.Against({}, "none"), set(), {})
    assert any("under a competing load" in ln and ln.startswith(f"NODE {system}:")
               for ln in p.lines), p.lines
    assert p.flagged
    row = history_page._table([p], [], history_page.Numbers(), p.uuid).rows[0]
    assert "under a competing load" in " ".join(row)


def test_the_kept_points_keep_their_lines_and_host(tmp_path):
    """The points kept for the next page keep each session's NODE lines and host."""
    p = history_points.Point("u1", dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc), 1.0,
                             True, False, {}, ("NODE x: y",), "h1")
    hist = history_points.History([p], {})
    history_points.write_cache(tmp_path / "c.json", "k", hist)
    kept, _ = history_points.read_cache(tmp_path / "c.json", "k")
    assert kept["u1"] == p


def test_an_older_runs_report_reads_every_stored_session():
    """The shared page is read to now, whatever run's report writes it: an older run's
    report read to its own end shrank the page the newer reports link to."""
    old_end = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    assert history_read.until(old_end) >= dt.datetime.now(dt.timezone.utc)
    later = dt.datetime(2099, 1, 1, tzinfo=dt.timezone.utc)
    assert history_read.until(later) == later


def test_the_previous_run_and_steps_stop_at_the_reported_run():
    """What is the run's alone (the previous run, the step search) is still cut at its end."""
    end = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
    seen = [history_read.Seen(f"u{i}", end + dt.timedelta(days=d), Path("x"), {}, {}, None, {})
            for i, d in enumerate((-2, -1, 1))]
    out = history_read._Judges(None).reading(seen, [], end)
    assert [u for _, u in out.sessions] == ["u0", "u1"]


def test_an_unreadable_stored_session_is_counted_and_said():
    """A stored session whose case name holds a line break is no run report: it was skipped
    without a word; now the page says how many, and why the first was refused."""
    data = json.loads(HOG[0].read_text())
    bad = json.loads(json.dumps(data))
    bad["session_info"]["uuid"] = "bad"
    for run in bad["runs"]:
        for tc in run["testcases"]:
            tc["name"] = "two\nlines"
    unread = previous_run.Unreadable()
    got = list(previous_run._reports([data, bad, 7], {"generic", *_systems(data)}, unread))
    assert len(got) == 1 and unread.count == 2 and unread.first
    hist = history_points.History([], {}, unreadable=unread.count, unreadable_why=unread.first)
    sub = history_page._subtitle(hist, {})
    assert "2 stored session(s)" in sub and "could not be read" in sub and "\n" not in sub


def _systems(data: dict) -> set[str]:
    return {str(tc.get("system", "")).split(":")[0] for r in data["runs"]
            for tc in r["testcases"]}


def test_the_page_shows_each_sessions_host():
    """ReFrame's hostname is the host it ran on (a cluster's login nodes differ, and two
    machines may share a system's name): the page names the hosts and shows each row's."""
    at = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    pts = [history_points.Point(f"u{i}", at + dt.timedelta(hours=i), 0.0, False, False, {},
                                (), host) for i, host in enumerate(["a", "otherhost"])]
    hist = history_points.History(pts, {}, reported="u1")
    sub = history_page._subtitle(hist, {})
    assert "2 hosts (a, otherhost)" in sub and "u1"[:8] in sub
    t = history_page._table(pts, [], history_page.Numbers(), "u1")
    assert "host" in t.header
