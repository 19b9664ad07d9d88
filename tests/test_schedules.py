"""The schedule examples in ``config/schedules/``, the tutorial, the partition how-to and the
README, as a site copies them: every one runs the same two runs (the quick mode nightly, the
node-health family in acceptance mode on every node of the partition weekly) through
``scripts/scheduled.sh``, with no pipe that hides the exit status; each run names a mode
``scripts/acceptance.sh`` accepts, finds NPB though cron and systemd start with a bare
environment, and no two runs of one checkout are due on the same day (the second would be
refused by the run lock, with no ACCEPTANCE line). The crontab's own lines run here, as cron
runs them, on a tiny check set: the exit status and every line the mail needs survive."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCHEDULES = ROOT / "config/schedules"
#: a cron entry (minute hour day month weekday command), as cron and scrontab read it
CRON = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*scripts/\S+\.sh.*)$")
SCRIPT = "scripts/scheduled.sh"
#: the two runs, as their arguments to scripts/scheduled.sh (the system's name normalized)
NIGHTLY = ("-m", "quick", "-s", "SYSTEM:PART")
WEEKLY = ("-m", "acceptance", "-s", "SYSTEM:PART", "--", "--distribute=all", "-t", "nodes")


def _entries(text: str) -> list[tuple[str, str, str]]:
    """(hour, weekday, command) of each acceptance entry of a crontab's text."""
    return [(m[2], m[5], m[6]) for m in map(CRON.match, text.splitlines())
            if m and not m[0].startswith("#")]


def _block_after(path: str, heading: str) -> str:
    """The first ```text block after ``heading`` in a page."""
    text = (ROOT / path).read_text()
    return text.split(heading, 1)[1].split("```text", 1)[1].split("```", 1)[0]


def _weekdays(field: str) -> set[int]:
    """The days of the week a cron weekday field names (``*``, ``1-6``, ``0``, ``1,3``)."""
    if field == "*":
        return set(range(7))
    days: set[int] = set()
    for part in field.split(","):
        lo, _, hi = part.partition("-")
        days |= {d % 7 for d in range(int(lo), int(hi or lo) + 1)}     # 7 is Sunday too
    return days


CRONTABS = {"crontab": lambda: (SCHEDULES / "crontab").read_text(),
            "scrontab": lambda: (SCHEDULES / "scrontab").read_text(),
            "tutorial": lambda: _block_after("docs/tutorial.md", "## The weekly schedule"),
            "how-to": lambda: _block_after("docs/howto/accepting-a-partition.md",
                                           "## 5. Schedule it")}


def _commands() -> dict[str, list[str]]:
    """Every example's command lines that run a schedule, by where they are."""
    out = {name: [c for _, _, c in _entries(read())] for name, read in CRONTABS.items()}
    out["systemd"] = [c for service in sorted(SCHEDULES.glob("*.service"))
                      for c in re.findall(r"^ExecStart=(.*)$", service.read_text(), re.M)]
    ci = yaml.safe_load((SCHEDULES / "gitlab-ci.yml").read_text())
    out["gitlab-ci.yml"] = [line for job in ci.values() for line in job.get("script", [])
                            if "scripts/" in line]
    for page in ("config/schedules/README.md", "README.md"):
        text = (ROOT / page).read_text()
        found = [" ".join(c.split()) for c in re.findall(r"`(scripts/scheduled\.sh[^`]*)`", text)]
        found += re.findall(r"^(scripts/scheduled\.sh.*?)(?:\s+#.*)?$", text, re.M)
        out[page] = [c for c in found if " -m " in c]      # not its synopsis
    return out


def _args(command: str) -> tuple[str, ...]:
    """The arguments a command line gives scripts/scheduled.sh, its system normalized."""
    words = shlex.split(command)
    at = next(i for i, w in enumerate(words) if w.endswith(SCRIPT))
    args = words[at + 1:]
    if "-s" in args:
        args[args.index("-s") + 1] = "SYSTEM:PART"
    return tuple(args)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_example_runs_the_nightly_and_the_weekly_run(name):
    commands = _commands()[name]
    assert commands, f"{name}: no schedule line found"
    for command in commands:
        assert SCRIPT in command, f"{name}: {command}: not through {SCRIPT}"
        assert "|" not in command, f"{name}: {command}: a pipe's status is its last command's"
    want = {WEEKLY} if name == "how-to" else {NIGHTLY, WEEKLY}
    assert {_args(c) for c in commands} == want, name


def test_each_systemd_timer_starts_its_run_on_its_days():
    calendar = {t.stem: re.search(r"^OnCalendar=(\S+)", t.read_text(), re.M)[1]
                for t in SCHEDULES.glob("*.timer")}
    assert calendar == {"placement-nightly": "Mon..Sat", "placement-weekly": "Sun"}
    for service in calendar:
        text = (SCHEDULES / f"{service}.service").read_text()
        assert re.search(r"^Environment=NPB_DIR=\S+", text, re.M), service


@pytest.mark.parametrize("name", CRONTABS)
def test_each_entry_names_a_mode_and_finds_npb(name):
    text = CRONTABS[name]()
    entries = _entries(text)
    assert entries, name
    for _, _, command in entries:
        words = shlex.split(command)
        assert words[words.index("-m") + 1] in ("quick", "acceptance", "full"), command
        assert "NPB_DIR=" in command or re.search(r"^NPB_DIR=\S+", text, re.M), \
            f"{name}: {command}: NPB_DIR unset in a bare environment"


@pytest.mark.parametrize("name", CRONTABS)
def test_no_two_runs_of_one_checkout_are_due_on_the_same_day(name):
    """Two runs due the same night overlap when the first is still in its time box (an
    hour for the quick mode) as the second starts: the second is refused."""
    entries = _entries(CRONTABS[name]())
    for i, (h1, d1, c1) in enumerate(entries):
        for h2, d2, c2 in entries[i + 1:]:
            same_day = _weekdays(d1) & _weekdays(d2)
            assert not same_day or abs(int(h1) - int(h2)) >= 2, (c1, c2, same_day)


def test_the_wrapper_parses():
    assert subprocess.run(["bash", "-n", str(ROOT / SCRIPT)]).returncode == 0


def test_every_nodes_line_and_the_exit_status_reach_the_mail(tmp_path):
    """A partition of 60 nodes, ten of them odd, cannot run here: a stand-in acceptance.sh
    (beside a copy of scheduled.sh) prints what such a run prints, among 200 lines of
    ReFrame's output, and fails. Every NODES line, the status and the ACCEPTANCE line are
    printed; ReFrame's lines are not."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / SCRIPT, tmp_path / SCRIPT)
    nodes = [f"NODES mycluster:batch: n{i} slower than its 59 peers on 14 of 16 values"
             for i in range(10)] + ["NODES mycluster:batch: n10 topology differs"]
    verdict = "ACCEPTANCE mycluster acceptance: FAIL 900 passed, 0 failed (0 perf regressions)"
    stand_in = tmp_path / "scripts/acceptance.sh"
    stand_in.write_text("#!/bin/sh\nfor i in $(seq 200); do echo \"[ OK ] case $i\"; done\n"
                        + "".join(f"echo '{line}'\n" for line in nodes)
                        + "echo 'NOTE 2 nodes were down' >&2\n"
                        + f"echo '{verdict}'\nexit 1\n")
    stand_in.chmod(0o755)
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results")}
    proc = subprocess.run([str(tmp_path / SCRIPT), *WEEKLY], env=env, capture_output=True,
                          text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1
    assert lines[:-2] == nodes and lines[-1] == verdict
    assert lines[-2].startswith("acceptance.sh exit status 1; its whole output: ")
    log = Path(lines[-2].rsplit(" ", 1)[1])
    assert "[ OK ] case 200" in log.read_text() and "NOTE 2 nodes" in log.read_text()


CHECKS = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, sanity_function


@rfm.simple_test
class ScheduleCase(rfm.RunOnlyRegressionTest):
    case = parameter(['pass', 'fail'])
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    tags = {'quick', 'acceptance', 'nodes'}
    executable = 'echo'

    @sanity_function
    def validate(self):
        return sn.assert_eq(self.case, 'pass')
'''


@pytest.mark.reframe
@pytest.mark.parametrize("run,only_pass", [(NIGHTLY, False), (WEEKLY, False), (WEEKLY, True)],
                         ids=["nightly-failing", "weekly-failing", "weekly-passing"])
def test_the_crontabs_lines_run_and_keep_the_exit_status(run, only_pass, tmp_path):
    """The crontab's line itself, run by ``sh -c`` with its variables as cron does, the
    checkout at ``$HOME/placement``; only the system (``generic``, this host) and a tiny check
    set (``-c``, a case that passes and one that fails) are this test's. ``--distribute=all``
    takes this host as the partition's one node."""
    text = (SCHEDULES / "crontab").read_text()
    (command,) = [c for _, _, c in _entries(text) if _args(c) == run]
    checks = tmp_path / "schedule_cases.py"
    checks.write_text(CHECKS)
    extra = f"-c {checks}" + (" -n %case=pass" if only_pass else "")
    command = re.sub(r"-s \S+", "-s generic", command) + ("" if "--" in run else " --") + " " + extra
    (tmp_path / "home").mkdir()
    (tmp_path / "home/placement").symlink_to(ROOT)
    env = {**os.environ, **dict(re.findall(r"^(\w+)=(\S*)$", text, re.M)),
           "HOME": str(tmp_path / "home"), "PLACEMENT_RESULTS": str(tmp_path / "results"),
           "PLACEMENT_REPORTS": str(tmp_path / "reports"), "ACCEPTANCE_CONFIRM": "0"}
    proc = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True,
                          timeout=900)
    mail = proc.stdout.splitlines()
    want = 0 if only_pass else 1
    assert proc.returncode == want, proc.stdout + proc.stderr
    assert mail[-1].startswith(f"ACCEPTANCE generic {run[1]}: {'PASS' if only_pass else 'FAIL'} ")
    assert mail[-2].startswith(f"acceptance.sh exit status {want}; its whole output: ")
    fails = [ln for ln in mail if ln.startswith("FAIL ScheduleCase %case=fail")]
    assert len(fails) == (0 if only_pass else 1), mail
    assert len(mail) == 2 + len(fails), mail         # the mail is these lines, not ReFrame's
    if run == WEEKLY:       # one copy per node, pinned there
        log = Path(mail[-2].rsplit(" ", 1)[1]).read_text()
        assert "%.nid=" in log, log[-2000:]


def test_a_run_refused_says_why_and_keeps_its_status(tmp_path):
    """No ACCEPTANCE line (here a mode acceptance.sh does not know): the log's last lines,
    acceptance.sh's own line among them, and its exit status 2 reach the mail."""
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results")}
    proc = subprocess.run([str(ROOT / SCRIPT), "-m", "nightly"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout.splitlines()[0].startswith("acceptance.sh: unknown mode 'nightly'")
    assert proc.stdout.splitlines()[-1].startswith("acceptance.sh exit status 2; ")


@pytest.mark.parametrize("where", ["first", "after-the-mode"])
def test_help_anywhere_runs_nothing_and_reads_as_no_run(where, tmp_path):
    """``--help`` in a schedule's line prints the help and runs nothing: no log, and no
    "exit status 0" line that a monitor would read as a passed run."""
    args = ["--help"] if where == "first" else ["-m", "quick", "--help"]
    env = {**os.environ, "PLACEMENT_RESULTS": str(tmp_path / "results")}
    proc = subprocess.run([str(ROOT / SCRIPT), *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("A scheduled acceptance run")
    assert "exit status" not in proc.stdout.splitlines()[-1]
    assert not (tmp_path / "results").exists()
