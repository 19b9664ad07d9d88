"""Scheduled runs under site faults: missing, partial or foreign evidence never reads as PASS,
and one run never damages another.

Each test stages one fault for real: a killed acceptance.sh, a truncated or replaced
results database, a moved results folder, a full disk (a small tmpfs), Ctrl-C in
``placement report``, a venv made for another path. The acceptance runs use the
throw-away checks of ``test_acceptance.py`` (a case that echoes a rate, one that
sleeps), so each ReFrame session takes seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from placement import acceptance
from placement import cli
from rate_checks import RATE_CASE
from test_acceptance import CHECKS

ROOT = Path(__file__).resolve().parents[1]
FIRST = ROOT / "tests" / "fixtures" / "runreports" / "generic-first-run.json"
LINE = re.compile(r"^ACCEPTANCE generic quick: (\w+) .*$", re.M)


def _acceptance(tmp: Path, results: Path, *opts: str, pattern: str = "case=pass$",
                wait: bool = True):
    """scripts/acceptance.sh on the throw-away checks; (process, ACCEPTANCE line) or a Popen."""
    checks = tmp / "acceptance_cases.py"
    checks.write_text(CHECKS)
    env = {**os.environ, "PLACEMENT_RESULTS": str(results),
           "PLACEMENT_REPORTS": str(tmp / "reports")}
    cmd = [str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick", "-s", "generic", *opts,
           "--", "-c", str(checks), "-n", pattern]
    if not wait:
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    m = LINE.search(proc.stdout)
    assert m, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, m.group(0)


# -- no PASS on missing evidence: the comparison with the previous run ------------------------

def _summary(compare: Path | None, not_compared=()):
    return acceptance.summary([FIRST], "generic", "quick", compare, 10.0, False, [],
                              list(not_compared))


@pytest.mark.parametrize("csv, gap", [
    ("\x1b[31mERROR: failed to generate performance comparison: database disk image is "
     "malformed\x1b[0m\n",
     "not compared: ReFrame could not compare with the previous run (database disk image is "
     "malformed)"),
    ("", "not compared: the comparison with the previous run is empty"),
    ("name,sysenv,pvar,punit,pval (mean) (lhs),pval (mean) (rhs),pdiff (%)\n"
     "C %x=1,generic:default+gnu,rate,MB/s,100.0,<no data>,\n"
     "C %x=2,generic:default+gnu,rate,MB/s,100.0,<no data>,\n",
     "not compared: 2 of 2 value(s) have no previous value (<no data>"),
])
def test_a_comparison_without_evidence_is_incomplete(tmp_path, csv, gap):
    path = tmp_path / "compare.csv"
    path.write_text(csv)
    lines, status = _summary(path)
    assert status == 4 and " INCOMPLETE " in lines[-1] and gap in lines[-1], lines[-1]
    # a first run (nothing compared) and a clean comparison still pass
    assert _summary(None)[1] == 0
    path.write_text("name,sysenv,pvar,punit,pval (mean) (lhs),pval (mean) (rhs),pdiff (%)\n"
                    "C %x=1,generic:default+gnu,rate,MB/s,100.0,100.0,0.0\n")
    lines, status = _summary(path)
    assert status == 0 and ": PASS " in lines[-1] and "not compared" not in lines[-1]
    lines, status = _summary(None, ["not compared: the previous run's reports cannot be read"])
    assert status == 4 and "the previous run's reports cannot be read" in lines[-1]


@pytest.mark.reframe
def test_a_corrupt_or_replaced_results_database_is_not_a_pass(tmp_path):
    results = tmp_path / "results"
    proc, line = _acceptance(tmp_path, results)
    assert proc.returncode == 0 and ": PASS " in line
    proc, line = _acceptance(tmp_path, results)       # compared with the first: a clean PASS
    assert proc.returncode == 0 and ": PASS " in line and "not compared" not in line
    # a corrupt database: neither stored nor compared, and both said
    (results / "results.db").write_bytes((results / "results.db").read_bytes()[:5000])
    proc, line = _acceptance(tmp_path, results)
    assert proc.returncode == 4 and ": INCOMPLETE " in line, proc.stdout[-3000:]
    assert "not compared: ReFrame could not compare with the previous run (database disk " \
           "image is malformed)" in line
    assert "not stored in the results database: database disk image is malformed" in line
    # a replaced (empty) database: the previous run's values are <no data>
    (results / "results.db").unlink()
    proc, line = _acceptance(tmp_path, results)
    assert proc.returncode == 4 and ": INCOMPLETE " in line, proc.stdout[-3000:]
    assert "not compared: 1 of 1 value(s) have no previous value (<no data>" in line


# -- one run at a time: a killed acceptance.sh takes ReFrame with it, and is resumed ---------

def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


@pytest.mark.reframe
def test_a_killed_acceptance_run_takes_reframe_with_it_and_is_resumed(tmp_path):
    results = tmp_path / "results"
    proc = _acceptance(tmp_path, results, pattern="case=(pass|slow)$", wait=False)
    try:
        reframe = None
        for _ in range(1500):            # ReFrame runs, the quick case has finished
            outs = list((results / "runs").glob("*.out"))
            if outs and re.search(r"\bOK\b.*case=pass", outs[0].read_text()):
                # ReFrame prints OK before it logs the case and retires it; killed in
                # between, the case is reported aborted. The slow case sleeps 12 s.
                time.sleep(3)
                reframe = [c for c in _children(proc.pid)
                           if "reframe" in Path(f"/proc/{c}/cmdline").read_text()]
                break
            time.sleep(0.2)
        assert reframe, "ReFrame did not start"
        proc.send_signal(signal.SIGKILL)       # no trap can run: the children must follow
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.stdout.close()
    for _ in range(300):
        if not Path(f"/proc/{reframe[0]}").exists():
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{reframe[0]}").exists(), "ReFrame ran on as an orphan"
    # the killed run is resumable: its finished case is kept, only the slow one runs again
    proc, line = _acceptance(tmp_path, results, "--resume", pattern="case=(pass|slow)$")
    assert "== resuming: 1 earlier part(s), 1 check(s) already finished" in proc.stdout
    assert proc.returncode == 0 and ": PASS 2 passed, 0 failed" in line and "parts=2" in line


# -- a moved checkout or results folder ------------------------------------------------------

@pytest.mark.reframe
def test_run_lists_follow_a_moved_results_folder(tmp_path):
    first = tmp_path / "results"
    proc, line = _acceptance(tmp_path, first)
    assert proc.returncode == 0
    (runlist,) = (first / "runs").glob("acceptance-*.run")
    assert "/" not in runlist.read_text()             # names relative to the runs folder
    moved = tmp_path / "moved"
    first.rename(moved)
    proc, line = _acceptance(tmp_path, moved)
    assert proc.returncode == 0 and ": PASS " in line and "not compared" not in line, line
    assert "AcceptanceCase %case=pass,generic:default+gnu,rate_seen,MB/s,100.0,100.0" \
        in proc.stdout
    # a list written with absolute paths before the move: found by name in the runs folder
    lists = sorted((moved / "runs").glob("acceptance-*.run"))
    lists[-1].write_text("".join(f"{first}/runs/{n}" for n in lists[-1].read_text().splitlines(True)))
    proc, line = _acceptance(tmp_path, moved)
    assert proc.returncode == 0 and ": PASS " in line and "not compared" not in line, line
    # reports that are gone: the comparison is named, never a plain PASS
    lists = sorted((moved / "runs").glob("acceptance-*.run"))
    lists[-1].write_text("/nowhere/run-report-gone.json\n")
    proc, line = _acceptance(tmp_path, moved)
    assert proc.returncode == 4 and ": INCOMPLETE " in line
    assert "not compared: the previous run's reports" in line and "cannot be read" in line


def test_a_venv_made_for_another_path_is_made_afresh(tmp_path):
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy(ROOT / "Makefile", moved)
    shutil.copy(ROOT / "pyproject.toml", moved)
    bin_ = moved / ".venv" / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "reframe").write_text("#!/old/place/.venv/bin/python\nimport reframe\n")
    (moved / ".venv" / ".installed").touch()           # up to date, but for the old path
    # PYTHON=false: the rebuild is attempted (and fails here, without a network or time)
    p = subprocess.run(["make", "-C", str(moved), "venv", "PYTHON=false"], capture_output=True,
                       text=True, timeout=120)
    assert ".venv was made for another path (/old/place/.venv/bin/python): making it afresh" \
        in p.stdout, p.stdout + p.stderr
    assert not (bin_ / "reframe").exists()
    # one made for this path is kept
    bin_.mkdir(parents=True)
    (bin_ / "reframe").write_text(f"#!{moved}/.venv/bin/python\nimport reframe\n")
    (moved / ".venv" / ".installed").touch()
    p = subprocess.run(["make", "-C", str(moved), "venv", "PYTHON=false"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and "afresh" not in p.stdout and (bin_ / "reframe").exists()


def test_lock_files_are_ignored_by_git():
    if not shutil.which("git") or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for path in ("config/baselines/.xeon16.yaml.lock", "elsewhere/.generic.yaml.lock"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0, path


# -- a full disk -----------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs (root only), nearly filled by ``fill(left)``; unmounted at the end."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    d = tmp_path / "disk"
    d.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(d)]).returncode:
        pytest.skip("cannot mount a tmpfs here")

    def fill(left: int) -> None:
        st = os.statvfs(d)
        (d / "filler").write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - left))
    fill.path = d
    yield fill
    subprocess.run(["umount", "-l", str(d)])


def test_a_full_disk_in_placement_report_is_one_line_and_leaves_no_folder(small_disk, capsys):
    out = small_disk.path / "reports"
    small_disk(40 * 1024)
    assert cli.main(["report", "--run", str(FIRST), "--output", str(out), "--no-compare"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"placement: error: cannot write the report in "
                                               f"{out}/generic-")
    assert err[0].endswith("No space left on device; the folder was removed, nothing was kept")
    assert not any(out.iterdir())                      # no half-written report folder or PNG


@pytest.mark.reframe
def test_a_full_disk_in_an_acceptance_run_is_one_line(small_disk, tmp_path):
    results = small_disk.path
    proc, line = _acceptance(tmp_path, results)        # a first run fits
    assert proc.returncode == 0
    small_disk(12 * 1024)
    proc, line = _acceptance(tmp_path, results)
    assert proc.returncode == 1
    assert re.fullmatch(r"ACCEPTANCE generic quick: FAIL no space left on device: reframe could "
                        rf"not write its report {results}/runs/\S+\.json in {results}/runs \(free "
                        r"space there, then run again with --resume\) report=\S+", line), line
    # one line for all of ReFrame's failed log records, not a traceback each
    assert "--- Logging error ---" not in proc.stderr and "Traceback" not in proc.stderr
    assert re.search(r"^reframe: \d+ log record\(s\) could not be written: no space left on "
                     r"device$", proc.stderr, re.M), proc.stderr[-2000:]
    # nothing half-written: no empty run report; the next command works without cleaning
    assert not [p for p in (results / "runs").iterdir() if p.stat().st_size == 0]
    (results / "filler").unlink()
    env = {**os.environ, "PLACEMENT_RESULTS": str(results),
           "PLACEMENT_BASELINES": str(tmp_path / "baselines")}
    p = subprocess.run([sys.executable, "-m", "placement", "baseline", "diff", "--system",
                        "generic", "--from", "latest"], capture_output=True, text=True, env=env,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr


# -- Ctrl-C ----------------------------------------------------------------------------------

def test_ctrl_c_in_placement_report_leaves_no_folder(tmp_path, monkeypatch, capsys):
    from placement.report import files

    def interrupted(*_):
        raise KeyboardInterrupt                    # as Ctrl-C while the files are written
    monkeypatch.setattr(files, "write", interrupted)
    out = tmp_path / "reports"
    assert cli.main(["report", "--run", str(FIRST), "--output", str(out), "--no-compare"]) == 130
    assert capsys.readouterr().err.strip().splitlines() == ["placement: interrupted"]
    assert not any(out.iterdir())


def test_a_few_new_values_without_a_previous_one_still_compare(tmp_path):
    # cases added since the previous run have no previous value: the others were compared
    path = tmp_path / "compare.csv"
    path.write_text("name,sysenv,pvar,punit,pval (mean) (lhs),pval (mean) (rhs),pdiff (%)\n"
                    "C %x=1,generic:default+gnu,rate,MB/s,100.0,<no data>,\n"
                    "C %x=2,generic:default+gnu,rate,MB/s,100.0,100.0,0.0\n")
    lines, status = _summary(path)
    assert status == 0 and " PASS " in lines[-1], lines[-1]


# -- a damaged reference file: no case passes against it ---------------------------------------

REF_CHECKS = RATE_CASE + '''

from placement.testlib.references import BaselineReferencesMixin


@rfm.simple_test
class RefCase(RateCase, BaselineReferencesMixin):
    """A rate of 100 MB/s against the system's reference file."""
    executable = 'echo'
    executable_opts = ['rate=100']
'''


def test_an_alias_bomb_baseline_fails_the_run_in_one_line(acceptance_sh, tmp_path):
    from test_baseline_safety import _alias_bomb
    checks = tmp_path / "ref_cases.py"
    checks.write_text(REF_CHECKS)
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "generic.yaml").write_text(_alias_bomb())
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results"),
           "PLACEMENT_REPORTS": str(tmp_path / "reports"), "PLACEMENT_BASELINES": str(baselines)}
    proc = acceptance_sh(env, checks, timeout=600)
    lines = proc.stdout.rstrip().splitlines()
    refused = (f"{baselines / 'generic.yaml'}: YAML anchor &x0 at line 1: anchors and aliases "
               "are not accepted in a reference file")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert lines[-1].startswith("ACCEPTANCE generic quick: FAIL 0 passed, 1 failed "), lines[-1]
    assert "baseline refused: nothing judged against it" in lines[-1]
    (fail,) = [ln for ln in lines if ln.startswith("FAIL RefCase ")]
    assert f"[setup: reference parse error: {refused}" in fail
    assert any(ln.startswith(f"NOTE baseline refused: {refused}") for ln in lines)


@pytest.mark.parametrize("opts, env, said", [
    (("-t", "9223372036854775808"), {}, "bad time box '9223372036854775808': a whole number "
                                        "of seconds from 1 to 604800 (a week)"),
    (("-t", "604801"), {}, "bad time box '604801'"),
    (("-t", "007"), {}, "bad time box '007'"),
    ((), {"ACCEPTANCE_TIME_BOX": "1" * 400}, "bad time box '" + "1" * 40 + "'"),
    ((), {"ACCEPTANCE_MAX_SLOWDOWN": "99999999999999999999"},
     "bad ACCEPTANCE_MAX_SLOWDOWN '99999999999999999999': a percentage from 0 to 1000"),
    ((), {"ACCEPTANCE_MAX_SLOWDOWN": "1001"}, "bad ACCEPTANCE_MAX_SLOWDOWN '1001'"),
    ((), {"ACCEPTANCE_CONFIRM": "yes"}, "bad ACCEPTANCE_CONFIRM 'yes': 1 (confirm failures, "
                                        "the default) or 0"),
], ids=["2^63", "over-a-week", "leading-zero", "400-digits", "slowdown-2^66", "slowdown-1001",
        "confirm-yes"])
def test_a_number_out_of_range_is_one_line_before_any_arithmetic(tmp_path, opts, env, said):
    """Bash arithmetic wraps past 2^63 (-t 9223372036854775808 was a negative time box):
    every number is bounded by its digits first, one line, exit 2, nothing run."""
    proc = subprocess.run([str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick", *opts],
                          cwd=ROOT, env={**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "r"),
                                         **env}, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and said in proc.stderr, proc.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.reframe
def test_a_link_planted_at_the_comparison_s_name_is_not_written_through(tmp_path):
    """The comparison CSV's name follows from the run's start: links planted at the names of
    the next minutes had ReFrame's comparison written into their target."""
    import datetime
    results = tmp_path / "results"
    proc, line = _acceptance(tmp_path, results)
    assert proc.returncode == 0 and ": PASS " in line
    victim = tmp_path / "victim"
    victim.write_text("kept\n")
    now = datetime.datetime.now(datetime.timezone.utc)
    for s in range(600):
        stamp = (now + datetime.timedelta(seconds=s)).strftime("%Y%m%dT%H%M%SZ")
        (results / "runs" / f"compare-acceptance-generic-quick-{stamp}.csv").symlink_to(victim)
    proc, line = _acceptance(tmp_path, results)
    assert proc.returncode == 0 and ": PASS " in line and "not compared" not in line, line
    assert victim.read_text() == "kept\n"
    written = [p for p in (results / "runs").glob("compare-*.csv") if not p.is_symlink()]
    assert len(written) == 1 and "mean" in written[0].read_text()


def test_a_value_with_a_line_break_is_still_one_line(tmp_path):
    """A usage error quotes the value it refuses; a line break in it split the line in two."""
    proc = subprocess.run([str(ROOT / "scripts" / "acceptance.sh"), "-s", "x\ny"], cwd=ROOT,
                          env={**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "r"),
                               "ACCEPTANCE_MAX_SLOWDOWN": "1\n2"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "'1\\n2'" in proc.stderr


def test_an_empty_acceptance_variable_means_its_default(tmp_path):
    """A schedule's `ACCEPTANCE_CONFIRM=` line (empty) is the default, as unset is: the run
    gets past every variable and stops only at the unknown system it was given."""
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "r"), "ACCEPTANCE_CONFIRM": "",
           "ACCEPTANCE_MAX_SLOWDOWN": "", "ACCEPTANCE_TIME_BOX": "", "REFRAME": ""}
    proc = subprocess.run([str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick", "-s",
                           "nosuch"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "unknown system 'nosuch'" in proc.stderr, proc.stderr


def test_a_reframe_given_that_does_not_exist_is_refused_not_replaced(tmp_path):
    """A mistyped REFRAME ran whatever reframe was first on PATH, without a word."""
    proc = subprocess.run([str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick"], cwd=ROOT,
                          env={**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "r"),
                               "REFRAME": str(tmp_path / "no-such-reframe")},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "is no executable file" in proc.stderr, proc.stderr


def test_a_system_file_that_does_not_load_is_named_not_called_an_unknown_system(tmp_path):
    """A site's system file with a syntax error made every run say "unknown system"."""
    systems = tmp_path / "systems"
    systems.mkdir()
    (systems / "broken.py").write_text("site_configuration = (\n")
    proc = subprocess.run([str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick", "-s",
                           "generic"], cwd=ROOT,
                          env={**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "r"),
                               "PLACEMENT_SYSTEMS": str(systems)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stdout + proc.stderr
    assert f"the configuration does not load ({systems / 'broken.py'} line " in proc.stderr
    assert "SyntaxError" in proc.stderr and "unknown system" not in proc.stderr


def test_an_empty_comparison_with_a_run_of_other_checks_is_nothing_to_compare_with(tmp_path):
    """A partition run after a plain run of the same mode (no check in common): ReFrame's
    comparison is empty because there is nothing to compare, not because evidence is lost;
    the run is judged as a first run of those checks, never INCOMPLETE for it."""
    partition = next((ROOT / "tests" / "fixtures" / "peers" / "pu1of2-20261202T0642").glob(
        "run-*.json"))
    path = tmp_path / "compare.csv"
    path.write_text("")
    lines, status = acceptance.summary([FIRST], "generic", "quick", path, 10.0, False, [],
                                       previous=[partition])
    assert status == 0 and ": PASS " in lines[-1], lines[-1]
    assert "not compared" not in lines[-1]
    assert "first run of generic/quick with these checks: nothing to compare with" in lines[-1]
    # the same checks before: an empty comparison stays a gap
    lines, status = acceptance.summary([FIRST], "generic", "quick", path, 10.0, False, [],
                                       previous=[FIRST])
    assert status == 4 and "the comparison with the previous run is empty" in lines[-1]


def test_the_comparisons_checks_are_named_without_their_per_node_copy():
    from placement.acceptance import comparison_health
    value = {"perfvalues": {"generic:default:gflops": [1.0, None, None, None, "GFLOP/s",
                                                       "pass"]}}
    cases = [{"display_name": "NodeMatmulCheck %.part=c:batch %.nid=n3", "result": "pass",
              **value},
             {"display_name": "MatmulCheck %affinity=compact", "result": "fail", **value},
             {"display_name": "B", "fixture": True, "result": "pass", **value},
             {"display_name": "NodeMemWriteCheck", "result": "skip"},
             # no performance variable: no row in ReFrame's comparison to miss
             {"display_name": "SanityOnly", "result": "pass", "perfvalues": {}}]
    assert comparison_health.checks_of(cases) == {"NodeMatmulCheck",
                                                  "MatmulCheck %affinity=compact"}
