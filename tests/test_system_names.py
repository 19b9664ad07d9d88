"""Names that become file names or command-line words: refused whole, or used whole.

A system name ends up in a file name (``config/baselines/NAME.yaml``, a report
folder, ``config/systems/NAME.py``), an ssh host on ssh's command line and in the
system file. Each must match as a whole (a trailing newline is no name), never lead
out of its folder, and never be read as an option; a refusal is one line, exit 2,
with nothing run or written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIRST = ROOT / "tests" / "fixtures" / "runreports" / "generic-first-run.json"


def placement(*args: str, env: dict | None = None, cwd: Path = ROOT,
              path: str | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, **(env or {})}
    if path is not None:
        full["PATH"] = path
    return subprocess.run([sys.executable, "-m", "placement", *args], capture_output=True,
                          text=True, env=full, cwd=cwd, timeout=300)


def one_line_exit_2(proc: subprocess.CompletedProcess, words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert words in line and "Traceback" not in proc.stderr, line


def test_a_system_name_with_a_trailing_newline_is_refused(tmp_path):
    proc = placement("baseline", "record", "--system", "generic\n", "--from", str(FIRST),
                     env={"PLACEMENT_BASELINES": str(tmp_path)})
    one_line_exit_2(proc, "invalid system name 'generic\\n'")
    assert list(tmp_path.iterdir()) == []
    proc = placement("site", "new", "mine\n", "--scheduler", "local", "--no-check",
                     env={"PLACEMENT_SYSTEMS": str(tmp_path / "systems")})
    one_line_exit_2(proc, "system name 'mine\\n'")
    assert not (tmp_path / "systems").exists()


@pytest.mark.parametrize("system, words", [
    ("../../x", "invalid --system '../../x'"),
    ("generic\n", "invalid --system 'generic\\n'"),
    ("other", "--system other: no case of that system in the run(s) (they hold: generic)"),
])
def test_report_system_stays_in_output_and_must_be_in_the_runs(tmp_path, system, words):
    out = tmp_path / "a" / "b" / "reports"
    proc = placement("report", "--run", str(FIRST), "--no-compare", "--system", system,
                     "--output", str(out), cwd=tmp_path)
    one_line_exit_2(proc, words)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == []


def test_a_system_name_from_a_run_report_never_names_a_folder_outside_output(tmp_path):
    data = json.loads(FIRST.read_text())
    for run in data["runs"]:
        for tc in run["testcases"]:
            tc["system"] = "../../escaped"
    crafted = tmp_path / "run.json"
    crafted.write_text(json.dumps(data))
    out = tmp_path / "a" / "b" / "reports"
    proc = placement("report", "--run", str(crafted), "--no-compare", "--output", str(out),
                     cwd=tmp_path)
    one_line_exit_2(proc, "invalid system name in the run report '../../escaped'")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["run.json"]


@pytest.mark.parametrize("host", [
    "-oProxyCommand=touch {marker}",
    "node1 -oProxyCommand=touch {marker}",
    "node1;touch {marker}",
    "user@-oProxyCommand=touch {marker}",
    "node1\n",
])
def test_an_ssh_host_that_is_no_host_name_is_refused_and_nothing_runs(tmp_path, host):
    marker = tmp_path / "ran"
    systems = tmp_path / "systems"
    proc = placement("site", "new", "mine", "--scheduler", "ssh",
                     f"--host={host.format(marker=marker)}", "--no-check",
                     env={"PLACEMENT_SYSTEMS": str(systems),
                          "PLACEMENT_RESULTS": str(tmp_path / "results")})
    one_line_exit_2(proc, "is not a host name: expected [user@]host")
    assert not marker.exists() and not systems.exists()


def test_a_host_name_is_accepted_as_written():
    from placement.site.scheduler import check_host
    for host in ("node1", "n-01.cluster.example", "root@node1", "10.1.2.3", "a"):
        assert check_host(host) == host


def test_a_system_name_too_long_for_its_files_is_one_line(capsys):
    """A 300-character --system passed the name check, then failed on its lock file's
    name ("File name too long")."""
    from placement import cli
    assert cli.main(["baseline", "control", "--system", "a" * 300]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "use up to 100 letters" in err
