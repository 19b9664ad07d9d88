"""`placement acceptance`: the acceptance run's counting on real run reports, without ReFrame."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from load_probe import with_load
from placement import acceptance
from placement import cli

FIX = Path(__file__).parent / "fixtures" / "runreports"
GUARDS = FIX / "generic-npb-guards.json"        # three unstable (time_cv) failures
COLLAPSE = FIX / "xeon16-lu-collapse.json"       # the watchdog stopped 3 runs; one case aborted
FIRST = FIX / "generic-first-run.json"          # every case passed


def _summary(*parts: Path, compare: Path | None = None, cut_short=False, slowdown=10.0):
    return acceptance.summary(list(parts), "generic", "quick", compare, slowdown, cut_short, [])


def test_all_passed():
    lines, status = _summary(FIRST)
    assert status == 0 and lines[-1].startswith("ACCEPTANCE generic quick: PASS 20 passed, "
                                                "0 failed (0 perf regressions)")


def test_hang_is_a_failure_to_finish_not_a_regression():
    lines, status = _summary(COLLAPSE)
    assert status == 1
    hang = next(ln for ln in lines if "%threads=2xfull" in ln and "did not finish" in ln)
    assert "[did not finish: the watchdog stopped 3 run(s)]" in hang
    assert "(0 perf regressions)" in lines[-1] and "2 failed" in lines[-1]


def test_reference_failures_are_regressions():
    lines, status = _summary(GUARDS)
    assert status == 1 and "3 failed (3 perf regressions)" in lines[-1]
    # each FAIL line carries ReFrame's values, without its preamble
    fail = next(ln for ln in lines if ln.startswith("FAIL ") and "%benchmark=LU" in ln)
    assert "[performance: time_cv=34.64101615137755 %, expected 2.0 (l=-inf, u=2.0)]" in fail
    assert "failed to meet" not in fail


def test_several_missed_references_are_one_line():
    # ReFrame 4.10's words when two references of one case were missed (a real run's)
    tc = {"fail_phase": "performance", "fail_reason":
          "performance error: \n      failed to meet reference(s): \n        latency_1K=1.55284 "
          "us, expected 0.345688 (l=-inf, u=0.691376)\n        bandwidth_1K=0.659435 GB/s, "
          "expected 2.96221 (l=1.481105, u=inf)"}
    assert acceptance.fail_text(tc) == (
        "performance: latency_1K=1.55284 us, expected 0.345688 (l=-inf, u=0.691376); "
        "bandwidth_1K=0.659435 GB/s, expected 2.96221 (l=1.481105, u=inf)")


def test_a_long_or_missing_fail_reason_stays_one_line():
    tc = {"fail_phase": "sanity", "fail_reason": "sanity error: " + "x" * 300 + "\nmore"}
    text = acceptance.fail_text(tc)
    assert text.startswith("sanity: sanity error: x") and text.endswith("...")
    assert "\n" not in text and len(text) == len("sanity: ") + 200
    assert acceptance.fail_text({"fail_phase": "run"}) == "run"


def test_comparison_with_previous_run_is_information_only(tmp_path):
    csv = tmp_path / "compare.csv"
    csv.write_text("name,sysenv,pvar,punit,pval_A,pval_B,pdiff\n"
                   "Case %x=1,generic:default+gnu,rate,MB/s,50,100,-50.0\n"
                   "Case %x=2,generic:default+gnu,time,s,1.05,1.0,5.0\n"
                   "Case %x=3,generic:default+gnu,time,s,1.5,1.0,50.0\n"
                   "Case %x=4,generic:default+gnu,rate,MB/s,150,100,50.0\n"
                   "Case %x=5,generic:default+gnu,max_time,s,15,1.0,1400.0\n")
    info = acceptance.previous_run_info(acceptance.compare_rows(csv), 10.0)
    # worse by more than 10%: the rate drop and the slower time; the extreme never counts
    assert len(info) == 1 and info[0].startswith("INFO 2 value(s) worse than the previous run")
    assert "Case %x=1 rate -50.0%" in info[0] and "max_time" not in info[0]
    lines, status = _summary(FIRST, compare=csv)
    assert status == 0 and "PASS" in lines[-1] and "(0 perf regressions)" in lines[-1]
    assert info[0] in lines


def test_a_reframe_failure_stays_a_failure_whatever_the_verdict():
    tc = {"result": "fail", "fail_phase": "performance", "display_name": "C", "system": "s",
          "environ": "e", "perfvalues": {"s:p:gbps": [1.0, 2.0, -0.1, None, "GB/s", "fail"]}}
    assert acceptance.classify(tc, cut_short=False) == "fail"
    regs = acceptance.find_regressions([tc], {})
    assert [(r.case, r.var) for r in regs] == [("C", "reference")]


def test_interrupted_case_is_not_a_failure_when_cut_short():
    lines, status = _summary(COLLAPSE, cut_short=True)
    assert status == 3 and "UNFINISHED 1 passed, 1 failed" in lines[-1]


def _skipped_report(tmp_path: Path, reasons: list[str]) -> Path:
    data = json.loads(FIRST.read_text())
    cases = data["runs"][0]["testcases"]
    for tc, reason in zip(cases[2:], reasons):
        tc.update(result="skip", fail_phase="setup", fail_reason=reason)
    out = tmp_path / "skips.json"
    out.write_text(json.dumps(data))
    return out


def test_skipped_cases_are_counted_with_their_reasons(tmp_path):
    why = "NPB binary {} not found (searched: NPB_DIR /opt/npb/bni (no such folder); PATH)"
    report = _skipped_report(tmp_path, [why.format("bt.A.x"), why.format("cg.B.x"),
                                        "likwid-pin is not installed here"])
    lines, status = _summary(report)
    assert f"SKIP 2 case(s): {why.format('*.x')}" in lines
    assert "SKIP 1 case(s): likwid-pin is not installed here" in lines
    assert "skipped=3" in lines[-1]


def test_nothing_ran_is_not_a_pass(tmp_path):
    data = json.loads(FIRST.read_text())
    for tc in data["runs"][0]["testcases"]:
        tc.update(result="skip", fail_reason="no NPB")
    report = tmp_path / "none.json"
    report.write_text(json.dumps(data))
    lines, status = _summary(report)
    assert status == 1 and "FAIL 0 passed, 0 failed" in lines[-1] and "no case ran" in lines[-1]


def _corrupt(tmp_path: Path) -> Path:
    bad = tmp_path / "run-report-corrupt.json"
    bad.write_text(FIRST.read_text()[:5000])           # cut off, as a killed writer leaves it
    return bad


def test_resume_drops_a_corrupt_part(tmp_path, capsys):
    bad = _corrupt(tmp_path)
    listing = tmp_path / "unfinished-acceptance-generic-quick.run"
    listing.write_text(f"{COLLAPSE}\n{bad}\n")
    assert cli.main(["acceptance", "resume", str(listing)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == f"part {COLLAPSE}" and str(bad) not in out
    assert out.count("skip -x") == 1 and "skip /" in out    # the stopped case finished
    assert len(err.splitlines()) == 1 and f"dropped part {bad}" in err


def _hanging_part(tmp_path: Path) -> tuple[Path, dict]:
    """A part whose case was still running, with no time limit, when ReFrame was interrupted."""
    data = json.loads(FIRST.read_text())
    tc = next(t for t in data["runs"][0]["testcases"] if not t.get("fixture"))
    tc.update(result="abort", fail_phase="run", time_limit=None, fail_reason="KeyboardInterrupt: ")
    report = tmp_path / "run-report-acceptance-generic-quick-1.json"
    report.write_text(json.dumps(data))
    return report, tc


@pytest.mark.parametrize("mark", [None, "SIGINT\n", ""], ids=["time-box", "signal", "empty-mark"])
def test_a_case_a_signal_stopped_is_interrupted_not_hung(tmp_path, capsys, mark):
    """ReFrame records the time box's interrupt and a user's Ctrl-C alike; the ``.stopped``
    file beside the part tells them apart. Without one (a list written before such files
    existed) the case hung, as it read then."""
    report, tc = _hanging_part(tmp_path)
    if mark is not None:
        report.with_suffix(".stopped").write_text(mark)
    listing = tmp_path / "unfinished-acceptance-generic-quick.run"
    listing.write_text(f"{report.name}\n")
    assert cli.main(["acceptance", "resume", str(listing)]) == 0
    plan = capsys.readouterr().out.splitlines()
    lines, status = _summary(report, cut_short=True)
    hung = [ln for ln in lines if ln.startswith("HUNG ")]
    assert status == 3
    if mark is None:
        assert len(hung) == 1 and f"skip /{tc['hashcode']}" in plan
        assert f"hung {tc['display_name']}" in plan and "19 passed, 1 failed" in lines[-1]
    else:
        assert hung == [] and f"skip /{tc['hashcode']}" not in plan      # runs again
        assert not any(ln.startswith("hung ") for ln in plan)
        assert "19 passed, 0 failed" in lines[-1]


def test_summary_still_written_with_a_corrupt_part(tmp_path):
    """A part that cannot be read held cases no one judged: the rest is summed up, and
    the run is INCOMPLETE, never a PASS."""
    lines, status = _summary(FIRST, _corrupt(tmp_path))
    assert status == 4
    assert lines[-1].startswith("ACCEPTANCE generic quick: INCOMPLETE 20 passed")
    assert "dropped part" in lines[-1] and "not a ReFrame run report" in lines[-1]


def test_nothing_to_resume_and_bad_options(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "placement", "acceptance", *args],
                              capture_output=True, text=True)
    p = run("resume", str(tmp_path / "none.run"))
    assert p.returncode == 2 and "nothing to resume" in p.stderr
    p = run("summary", str(FIRST), "--max-slowdown", "nan")
    assert p.returncode == 2 and "percentage" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("number", ["(2/3)", "(  5/125)"])
def test_skip_reasons_come_from_reframe_output(tmp_path, number):
    """ReFrame's run report has no skip message; acceptance.sh keeps its output as <report>.out.
    ReFrame pads the case's number to the width of the total."""
    data = json.loads(FIRST.read_text())
    tc = next(t for t in data["runs"][0]["testcases"] if not t.get("fixture"))
    tc.update(result="skip", fail_reason=None)
    report = tmp_path / "run-report-acceptance-generic-quick-1.json"
    report.write_text(json.dumps(data))
    sysenv = f"{tc['system']}:{tc['partition']}+{tc['environ']}"
    reason = ("NPB binary ep.S.x not found (searched: NPB_DIR /opt/x (no such folder); "
              "Spack view /x/.spack-env/view/bin; PATH): install NPB 3.4")
    report.with_suffix(".out").write_text(
        f"[ \x1b[33m    SKIP\x1b[0m ] {number} {tc['display_name']} /{tc['hashcode']} @{sysenv} "
        f"[{reason}]\n")
    lines, status = _summary(report)
    assert f"SKIP 1 case(s): {reason.replace('ep.S.x', '*.x')}" in lines


LAUNCHES = sorted((Path(__file__).parent / "fixtures" / "aa-launches").glob("*.json"))


@pytest.mark.parametrize("sessions", [1, 4])
def test_verdict_counts_and_a_note_on_one_session_baselines(tmp_path, monkeypatch, sessions):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    froms = [a for p in LAUNCHES[:sessions] for a in ("--from", str(p))]
    assert cli.main(["baseline", "record", "--system", "generic", *froms]) == 0
    lines, _ = _summary(LAUNCHES[-1])
    verdict_line = lines[-1]
    assert "verdict:" in verdict_line and " undecided of " in verdict_line
    notes = [ln for ln in lines if ln.startswith("NOTE ")]
    if sessions == 1:
        assert len(notes) == 1 and "fewer than 3 baseline sessions" in notes[0]
    else:
        assert not notes


def test_the_previous_run_line_reads_each_value_its_own_way(tmp_path):
    """A percentage is no rate: ``cpu_wait`` falling from 53% to 8% is not "worse", and a
    value with no direction the verdict knows is not called worse either way."""
    csv = tmp_path / "compare.csv"
    csv.write_text("name,sysenv,pvar,punit,pval_A,pval_B,pdiff\n"
                   "Case %x=1,generic:default+gnu,cpu_wait,%,8,53,-84.9\n"
                   "Case %x=2,generic:default+gnu,cpu_wait,%,53,8,562.5\n"
                   "Case %x=3,generic:default+gnu,rate,GB/s,5,10,-50.0\n"
                   "Case %x=4,generic:default+gnu,time,ms,20,10,100.0\n")
    (info,) = acceptance.previous_run_info(acceptance.compare_rows(csv), 10.0)
    assert info.startswith("INFO 2 value(s) worse than the previous run"), info
    assert "Case %x=3 rate -50.0%" in info and "Case %x=4 time +100.0%" in info
    assert "cpu_wait" not in info


@pytest.mark.parametrize("confirm, why", [
    (FIRST, "not after the run's last session did"),
    (FIX / "generic-with-baseline.json", "it is one of the run's own sessions")])
def test_a_session_older_than_the_run_or_its_own_confirms_nothing(tmp_path, monkeypatch,
                                                                   capsys, confirm, why):
    """Given an earlier session (or the run's own) as its confirmation, the summary
    dismissed every failure of the run as unconfirmed and passed it."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    run = tmp_path / "run.json"
    run.write_bytes((FIX / "generic-with-baseline.json").read_bytes())
    (tmp_path / "generic.yaml").write_bytes((FIX / "generic-baseline.yaml").read_bytes())
    status = cli.main(["acceptance", "summary", str(run), "--system", "generic", "--mode",
                       "quick", "--confirm", str(confirm)])
    out = capsys.readouterr().out.splitlines()
    assert status == 1 and out[-1].startswith("ACCEPTANCE generic quick: FAIL ")
    assert f"not confirmed: {confirm} is no confirmation session of this run (" in out[-1]
    assert why in out[-1] and not any(ln.startswith("UNCONFIRMED") for ln in out)


def test_words_given_for_the_line_stay_on_it(tmp_path, capsys):
    """A --note with a line break split the ACCEPTANCE line in two: a scheduled run's mail
    (which greps the line) lost its end, and the second half could read as another line."""
    run = tmp_path / "run.json"
    run.write_bytes(FIRST.read_bytes())
    assert cli.main(["acceptance", "summary", str(run), "--system", "generic", "--mode",
                     "quick", "--note", "x\nFAIL forged", "--not-compared", "a\u2028b"]) == 4
    out = capsys.readouterr().out.splitlines()
    assert not any(ln.startswith("FAIL forged") for ln in out)
    assert out[-1].startswith("ACCEPTANCE generic quick: INCOMPLETE ")     # not compared
    assert "x\\nFAIL forged" in out[-1] and "a\\u2028b" in out[-1]


def test_the_system_judged_is_one_the_run_holds(tmp_path, capsys):
    """A generic run summed up as xeon16's printed `ACCEPTANCE xeon16 ...: PASS`, judged
    against xeon16's baseline; without --system it was `unknown`."""
    run = tmp_path / "run.json"
    run.write_bytes(FIRST.read_bytes())
    assert cli.main(["acceptance", "summary", str(run), "--system", "xeon16"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["placement: error: --system xeon16: no case of that system in "
                                "the run (it holds: generic); nothing was judged"]
    assert not list(tmp_path.glob("verdict-*"))
    # no --system, or acceptance.sh's `unknown` where ReFrame named none: the run's own
    for given in ([], ["--system", "unknown"]):
        assert cli.main(["acceptance", "summary", str(run), "--mode", "quick", *given]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[-1].startswith("ACCEPTANCE generic quick: PASS")


def test_a_comparison_file_missing_or_not_utf8_is_a_gap_said_as_such(tmp_path):
    """A comparison CSV with bytes that are no UTF-8 put a UnicodeDecodeError into the
    line; a missing one read as a comparison the results database had no sessions for."""
    bad = tmp_path / "compare.csv"
    bad.write_bytes(b"name,x\n\xff\xfe,1\n")
    lines, status = _summary(FIRST, compare=bad)
    assert "could not judge" not in lines[-1] and "UnicodeDecodeError" not in lines[-1]
    lines, status = _summary(FIRST, compare=tmp_path / "none.csv")
    assert status == 4 and f"not compared: no comparison file {tmp_path / 'none.csv'}" in lines[-1]


def test_a_part_with_a_bad_start_beside_a_confirmation_is_said_not_a_traceback(tmp_path,
                                                                              capsys):
    """The check of the confirmation's start read the parts' times unchecked: a part whose
    time_start is no time ended the summary in a traceback, and no line."""
    bad = json.loads(FIRST.read_text())
    bad["session_info"]["time_start"] = "garbage"
    part = tmp_path / "bad.json"
    part.write_text(json.dumps(bad))
    run = tmp_path / "run.json"
    run.write_bytes(FIRST.read_bytes())
    assert cli.main(["acceptance", "summary", str(run), str(part), "--system", "generic",
                     "--mode", "quick", "--confirm", str(run)]) == 4
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("ACCEPTANCE generic quick: INCOMPLETE ")
    assert "dropped part" in out[-1] and "one of the run's own sessions" in out[-1]


def _with_value(src: Path, tmp: Path, var: str, value) -> Path:
    """A copy of ``src`` whose first case holding ``var`` reports ``value`` for it."""
    data = json.loads(src.read_text())
    tc = next(tc for r in data["runs"] for tc in r["testcases"]
              if any(k.endswith(f":{var}") for k in tc.get("perfvalues") or {}))
    key = next(k for k in tc["perfvalues"] if k.endswith(f":{var}"))
    tc["perfvalues"][key][0] = value
    for field in ("perf_launches", "perf_samples"):
        (tc.get(field) or {}).pop(var, None)
    out = tmp / f"{var}.json"
    out.write_text(json.dumps(data))
    return out


@pytest.mark.parametrize("value", [float("nan"), float("inf"), None])
def test_a_value_reported_but_not_measured_makes_the_run_incomplete(tmp_path, value):
    """A passed case whose value is NaN, infinite or null measured less than it should:
    named, and the run INCOMPLETE (it read PASS, the value silently out of the count)."""
    var = next(k.rsplit(":", 1)[-1] for r in json.loads(FIRST.read_text())["runs"]
               for tc in r["testcases"] for k in tc.get("perfvalues") or {}
               if not k.endswith("cpu_wait"))
    lines, status = _summary(_with_value(FIRST, tmp_path, var, value))
    assert status == 4 and "INCOMPLETE" in lines[-1], lines
    note = next(ln for ln in lines if ln.startswith("NOTE 1 value(s) reported but not measured"))
    assert note.endswith(f" {var}") and "(1 value(s) not measured)" in lines[-1]


def test_a_cpu_wait_not_measured_is_no_gap(tmp_path):
    """``cpu_wait`` is NaN by design on a node without CPU pressure accounting."""
    src = tmp_path / "no-psi.json"
    src.write_text(json.dumps(with_load(json.loads(FIRST.read_text()), float("nan"))))
    lines, status = _summary(src)
    assert status == 0 and "not measured" not in "\n".join(lines), lines


def test_a_part_given_twice_is_one_part(tmp_path, capsys):
    """The same report twice (once by another path) is one part, not ``parts=2``."""
    part = tmp_path / "run.json"
    part.write_text(FIRST.read_text())
    assert cli.main(["acceptance", "summary", "--system", "generic", "--mode", "quick",
                     str(part), str(tmp_path / "." / "run.json")]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("ACCEPTANCE generic quick: PASS") and "parts=" not in last, last
    # the report reads its runs as the summary does (it judged the run with parts=2)
    (tmp_path / "verdict-run.json").unlink()
    assert cli.main(["report", "--run", str(part), "--run", str(tmp_path / "." / "run.json"),
                     "--no-compare", "--output", str(tmp_path / "o")]) == 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "parts=" not in last, last


def test_another_systems_cases_do_not_count_toward_this_ones_pass(tmp_path):
    """Judged as generic, a run whose generic cases were all skipped read PASS on three
    xeon16 cases that passed: they are left out of the count, and said to be."""
    data = json.loads(FIRST.read_text())
    for r in data["runs"]:
        for tc in r["testcases"]:
            if not tc.get("fixture"):
                tc.update(result="skip", fail_phase=None, perfvalues={})
    other = json.loads(COLLAPSE.read_text())["runs"][0]["testcases"][:3]
    for tc in other:
        tc.update(result="pass", fail_phase=None, fail_reason=None)
    data["runs"][0]["testcases"] += other
    part = tmp_path / "mixed.json"
    part.write_text(json.dumps(data))
    lines, status = _summary(part)
    assert status != 0 and " PASS " not in lines[-1], lines
    assert "3 case(s) of xeon16 not counted (judged as generic)" in lines[-1], lines[-1]


def test_parts_given_out_of_the_order_they_ran_are_never_a_pass(tmp_path):
    """Given the later session first, the earlier one's passes stood over its failures and
    the run read PASS. The order given is kept (a clock set back between parts must not
    reorder them), and a part given after one that started later is a gap."""
    later = FIX / "generic-with-baseline.json"
    lines, status = _summary(FIRST, later)
    assert status == 1 and "given after" not in lines[-1], lines[-1]
    lines, status = _summary(later, FIRST)
    assert status == 4 and " INCOMPLETE " in lines[-1], lines[-1]
    assert (f"part {FIRST.name} was given after {later.name} but its session started "
            "earlier: give the parts in the order they ran") in lines[-1], lines[-1]
    # a part that says no start is taken in the order given
    undated = json.loads(FIRST.read_text())
    undated["session_info"].pop("time_start", None)
    part = tmp_path / "undated.json"
    part.write_text(json.dumps(undated))
    lines, status = _summary(later, part)
    assert status == 0 and "given after" not in lines[-1], lines[-1]


def test_another_systems_values_not_measured_are_not_this_ones_gap(tmp_path):
    """A value of a case of another system, left out of the count, made the run INCOMPLETE
    all the same."""
    data = json.loads(FIRST.read_text())
    other = copy.deepcopy(next(tc for tc in json.loads(COLLAPSE.read_text())["runs"][0]
                               ["testcases"] if tc.get("perfvalues")))
    other.update(result="pass", fail_phase=None, fail_reason=None)
    for tup in other["perfvalues"].values():
        tup[0] = None
    data["runs"][0]["testcases"].append(other)
    part = tmp_path / "mixed.json"
    part.write_text(json.dumps(data))
    lines, status = _summary(part)
    assert status == 0 and "not measured" not in "\n".join(lines), lines
    assert "1 case(s) of xeon16 not counted" in lines[-1], lines[-1]
