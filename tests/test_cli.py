"""The `placement` command: renderings on stdout, errors as one line with exit code 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BULLDOZER = str(ROOT / "topologies" / "bulldozer.xml")


def run(*args):
    return subprocess.run([sys.executable, "-m", "placement", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_maps_gomp_with_policy():
    p = run("maps", "--topology", BULLDOZER, "--threads", "8", "--strategy", "scatter",
            "--policy", "interleave", "--format", "gomp")
    assert p.returncode == 0, p.stderr
    assert 'GOMP_CPU_AFFINITY="0 16 32 48 8 24 40 56"' in p.stdout
    assert "numactl --interleave=0-7 <program>" in p.stdout


@pytest.mark.parametrize("fmt,needle", [
    ("omp", 'OMP_PLACES="{0},{16}"'), ("kmp", "proclist=[0,16]"),
    ("likwid", "likwid-pin -q -c 0,16"), ("numactl", "numactl --physcpubind=0,16"),
    ("taskset", "taskset -c 0,16"), ("hwloc", "hwloc-bind -p pu:0 pu:16"),
])
def test_every_format(fmt, needle):
    p = run("maps", "--topology", BULLDOZER, "--threads", "2", "--format", fmt)
    assert p.returncode == 0 and needle in p.stdout, p.stdout + p.stderr


def test_json_format():
    p = run("maps", "--topology", BULLDOZER, "--threads", "4", "--format", "json")
    assert json.loads(p.stdout)["cpus"] == [0, 16, 32, 48]


def test_lint_warning_goes_to_stderr():
    p = run("maps", "--topology", BULLDOZER, "--threads", "2", "--strategy", "compact")
    assert p.returncode == 0 and "warning: module" in p.stderr


def test_topo_summary():
    p = run("topo", "--topology", BULLDOZER)
    assert "4 package(s), 8 dies, 8 NUMA node(s), 32 modules" in p.stdout


@pytest.mark.parametrize("args,message", [
    (["maps", "--threads", "0"], "positive whole number"),
    (["maps", "--threads", "2", "--strategy", "diagonal"], "invalid choice"),
    (["maps", "--topology", "missing.xml", "--threads", "2"], "not found"),
    (["maps", "--topology", BULLDOZER, "--threads", "65"], "--oversubscribe"),
    (["maps", "--topology", BULLDOZER, "--threads", "2", "--strategy", "explicit",
      "--cpus", "0,0"], "twice"),
    (["maps", "--topology", BULLDOZER, "--threads", "2", "--policy", "bind:8"], "lacks"),
    (["topo", "--synthetic", "nope.synthetic"], "not found"),
])
def test_errors_are_one_line_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr


def test_synthetic_output_written_atomically(tmp_path):
    desc = tmp_path / "tiny.synthetic"
    desc.write_text("pack:1 core:2 pu:1\n")
    out = tmp_path / "tiny.xml"
    assert run("topo", "--synthetic", str(desc), "--output", str(out)).returncode == 0
    assert "<topology" in out.read_text() and not list(tmp_path.glob("*.tmp"))


def test_ctrl_c_is_one_line_and_exit_130(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    # `placement topo` on the live machine while its lstopo has not answered yet: a stand-in
    # lstopo first on PATH marks that it started and waits (a FIFO topology is refused at once)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    started = tmp_path / "started"
    for tool in ("lstopo-no-graphics", "lstopo", "hwloc-ls"):
        (bin_dir / tool).write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 60\n")
        (bin_dir / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    # SIGINT back to its default in the child: a test run started in the background (cron,
    # `make test &`) inherits it ignored, and Python then never raises KeyboardInterrupt
    proc = subprocess.Popen([sys.executable, "-m", "placement", "topo"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # interrupt once it waits on lstopo (not while Python is still starting up)
    for _ in range(600):
        if started.exists():
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["placement: interrupted"]


@pytest.mark.parametrize("argv, says", [
    (["baseline"], "required: {record,diff,control} (see placement baseline --help)"),
    (["report", "--bogus"], "unrecognized arguments: --bogus (see placement report --help)"),
])
def test_a_usage_error_is_one_line_that_says_what_is_accepted(capsys, argv, says):
    """argparse's usage block came before the error line; the one line that replaced it
    named a subcommand's place by its internal name (baseline_command) and pointed an
    unknown option to the top help, which lists no subcommand's options."""
    from placement import cli
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("placement: error: ") and says in err[0]
