"""The report's answer is the summary's for exactly the parts it shows.

A verdict record is read only for the parts (and ReFrame sessions) it judged; runs of
several systems answer with the worst of their summaries; an aborted case is listed as
not passed; the lead says why nothing was judged; a line that leaves the run INCOMPLETE is
not marked failing; ``--latest`` names the files it reads. Fixtures are copied to
``tmp_path`` first: the summary and the report write ``verdict-*.json`` beside their input.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from placement import cli
from placement.acceptance import record
from placement.report import lead

FIX = Path(__file__).parent / "fixtures"
HOG = sorted((FIX / "aa-dev2core-quiet-20261126" / "hog").glob("run-*.json"))[0]
GEN = FIX / "validation" / "dev2core-acceptance-20261201" / "run-20261201T133139+0000.json"
TWO_ODD = FIX / "peers" / "twoodd-20261203T1555" / "run-20261203T155557+0000.json"


@pytest.fixture
def env(tmp_path, monkeypatch):
    """No baselines, results and reports in ``tmp_path``: each run judged on its own."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "no-baselines"))
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PLACEMENT_REPORTS", str(tmp_path / "reports"))
    return tmp_path


def _copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    return dest


def _report(*runs: Path, out: Path, extra: tuple[str, ...] = ()) -> int:
    args = ["report", "--no-compare", "--exit-status", "--output", str(out)]
    for r in runs:
        args += ["--run", str(r)]
    return cli.main(args + list(extra))


def _readme(out: Path) -> str:
    (folder,) = out.iterdir()
    return (folder / "README.md").read_text()


def _banner(readme: str) -> str:
    return next(ln for ln in readme.splitlines() if ln.startswith("**")
                and ln.split("**")[1] in ("PASS", "FAIL", "INCOMPLETE", "UNFINISHED"))


def test_a_record_of_one_part_is_not_read_for_two(env, capsys):
    """Finding 1a: B's own PASS record did not answer for A (a loaded node) and B."""
    hog, r = _copy(HOG, env / "pool" / "a" / "hog.json"), _copy(GEN, env / "pool" / "b" / "r.json")
    assert cli.main(["acceptance", "summary", str(r)]) == 0
    assert record.path_for(r).is_file()
    capsys.readouterr()
    assert _report(hog, r, out=env / "o") == 1
    assert _banner(_readme(env / "o")).startswith("**FAIL**")
    assert "node=loaded" in capsys.readouterr().err
    # given explicitly, it is refused in one line, nothing written
    assert cli.main(["report", "--no-compare", "--run", str(hog), "--run", str(r), "--record",
                     str(record.path_for(r)), "--output", str(env / "p")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "hog.json" in err[0] and "Traceback" not in err[0]
    assert not (env / "p").exists()


def test_a_record_of_two_parts_is_not_read_for_one(env, capsys):
    """Finding 1b: A+B's record (102 cases, A's NODE line) did not head B's page alone."""
    hog, r = _copy(HOG, env / "pool" / "a" / "hog.json"), _copy(GEN, env / "pool" / "b" / "r.json")
    assert cli.main(["acceptance", "summary", str(hog), str(r)]) == 1
    both = record.read(record.path_for(r))
    assert both.counts["passed"] == 102
    capsys.readouterr()
    assert _report(r, out=env / "o") == 0
    readme = _readme(env / "o")
    assert _banner(readme).startswith("**PASS**: 53 case(s) passed")
    assert "**NODE" not in readme and "102" not in _banner(readme)
    # the summary's record stays: the report of both parts reads it
    assert record.read(record.path_for(r)) == both
    assert _report(hog, r, out=env / "p") == 1


def test_a_record_matches_parts_by_name_and_session():
    """Schema 3 records match the parts' names and sessions; older ones their names."""
    rec = record.VerdictRecord("s", "run", "PASS", 0, ["/x/a.json", "/x/b.json"], {}, ["A"],
                               sessions=["u1", "u2"])
    assert record.mismatch(rec, [Path("/y/b.json.gz"), Path("/y/a.json")], ["u2", "u1"]) == ""
    assert "not a.json" in record.mismatch(rec, [Path("a.json")], ["u1"])
    assert "session" in record.mismatch(rec, [Path("a.json"), Path("b.json")], ["u1", "u9"])
    old = record.VerdictRecord("s", "run", "PASS", 0, ["a.json"], {}, ["A"], schema=2)
    assert record.mismatch(old, [Path("a.json")], ["u7"]) == ""
    assert record.mismatch(old, [Path("a.json"), Path("b.json")], ["u7", "u8"])


def test_runs_of_two_systems_answer_with_the_worst_summary(env, capsys):
    """Finding 2: generic's PASS pooled with testnodes' FAIL (odd nodes, no majority) is a
    FAIL, exit 1, where it was a PASS banner with exit 4."""
    tn = _copy(TWO_ODD, env / "tn.json")
    assert cli.main(["acceptance", "summary", str(tn)]) == 1
    record.path_for(tn).unlink()
    gen = _copy(GEN, env / "gen.json")
    capsys.readouterr()
    assert _report(gen, tn, out=env / "o") == 1
    readme = _readme(env / "o")
    assert _banner(readme).startswith("**FAIL**")
    assert "generic PASS, testnodes FAIL" in readme
    assert "testnodes FAIL" in capsys.readouterr().err


def test_pooled_records_take_the_worst_outcome():
    recs = [record.VerdictRecord(s, "run", o, record.OUTCOMES[o], [f"{s}.json"],
                                 {"passed": 2, "failed": 0}, [f"ACCEPTANCE {s}"],
                                 sessions=[s])
            for s, o in (("a", "PASS"), ("b", "INCOMPLETE"), ("c", "UNFINISHED"))]
    pooled = record.pooled(recs)
    assert (pooled.outcome, pooled.exit_status) == ("UNFINISHED", 3)
    assert pooled.counts == {"passed": 6, "failed": 0} and pooled.sessions == ["a", "b", "c"]
    assert pooled.line.startswith("NOTE runs of 3 systems") and "a PASS" in pooled.line
    fail = record.VerdictRecord("d", "run", "FAIL", 1, ["d.json"], {}, ["ACCEPTANCE d"])
    assert record.pooled([*recs, fail]).outcome == "FAIL"


def test_an_aborted_case_is_listed_and_not_passed(env, capsys):
    """Finding 3: the banner counted it failed; the table now lists it too, as aborted."""
    data = json.loads(GEN.read_text())
    tc = next(tc for r in data["runs"] for tc in r["testcases"]
              if tc["result"] == "pass" and not tc.get("fixture"))
    tc.update(result="abort", fail_phase="run", fail_reason="KeyboardInterrupt: ")
    run = env / "aborted.json"
    run.write_text(json.dumps(data))
    assert _report(run, out=env / "o") == 1
    readme = _readme(env / "o")
    assert _banner(readme).startswith("**FAIL**")
    row = next(ln for ln in readme.splitlines() if "aborted in run" in ln)
    assert tc["display_name"].split()[0] in row and "not passed" in row


@pytest.mark.parametrize("ran, stored, built, says", [
    (0, [], 0, "no case ran"),
    (0, [{"x": 1}], 0, "no case ran"),
    (0, [{"x": 1}], 2, "no check ran, only build fixtures"),
    (5, [], 0, "no baseline with stored sessions"),
    (5, [{}], 0, "no baseline with stored sessions"),
    (5, [{"x": 1}], 0, "no measured value matched an entry of the baseline"),
])
def test_the_lead_says_why_nothing_was_judged(ran, stored, built, says):
    """Finding 4: an all-skipped run judged with a baseline of ten sessions was said to
    have no baseline."""
    judged = [SimpleNamespace(stored=s) for s in stored]
    assert lead.why_nothing(ran, judged, built) == says
    assert lead.facts(ran, 0, {}, nothing=says).endswith(f"; {says}: nothing judged.")


def test_an_all_skipped_run_says_no_case_ran(env):
    data = json.loads(GEN.read_text())
    for r in data["runs"]:
        for tc in r["testcases"]:
            tc.update(result="skip", fail_phase=None)
    run = env / "skipped.json"
    run.write_text(json.dumps(data))
    assert _report(run, out=env / "o") == 1
    banner = _banner(_readme(env / "o"))
    assert "no case ran: nothing judged" in banner and "no baseline" not in banner


def test_lines_that_leave_the_run_incomplete_are_not_marked_failing():
    """Finding 5: a NODES line of a node not judged, and a NODE line no confirmation
    session decided, make the run INCOMPLETE; their rows say so and are not red."""
    F = record.Finding
    not_judged = F("NODES", "NODES c:b n2: not judged (1 usable value)", "c:b", "n2",
                   {"what": "not judged", "usable": 1, "peers_had": 8})
    unconfirmed = F("NODE", "NODE c: 3% slower (not confirmed: ...)", "c",
                    data={"what": "shift", "unconfirmed": True})
    odd = F("NODES", "NODES c:b: n3 slower", "c:b", "n3", {"what": "odd"})
    for f in (not_judged, unconfirmed):
        assert not lead.fails_run(f) and lead.makes_incomplete(f)
    assert lead.fails_run(odd) and not lead.makes_incomplete(odd)
    rec = record.VerdictRecord("c", "run", "INCOMPLETE", 4, ["r.json"], {},
                               [not_judged.line, unconfirmed.line, odd.line],
                               [not_judged, unconfirmed, odd])
    table = lead.summary_table(rec)
    assert table.row_classes == ["incomplete", "incomplete", "bad"]
    assert [r[1] for r in table.rows] == ["leaves the run incomplete"] * 2 + ["fails the run"]
    assert "INCOMPLETE" in table.note


def test_latest_names_the_files_it_reads(env, capsys):
    """Finding 6: a runs folder of ``run-2026...json`` files names the pattern read."""
    runs = env / "results" / "runs"
    _copy(GEN, runs / GEN.name)
    assert cli.main(["report", "--latest", "--output", str(env / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run-report-*.json" in err[0] and str(runs) in err[0]
