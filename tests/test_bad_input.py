"""Bad input to `placement maps|topo`: one line, exit 2, bounded work, nothing misleading."""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from placement import cli
from placement.engine import cpulist, topology
from placement.util.errors import PlacementError

ROOT = Path(__file__).resolve().parents[1]
BULLDOZER = ROOT / "topologies" / "bulldozer.xml"
XEON = ROOT / "topologies" / "xeon-e5620.xml"


def _limit_memory():
    # a typo may not cost more than this (the bug took 10 GB)
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "placement", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, preexec_fn=_limit_memory)


def _one_line_exit_2(p: subprocess.CompletedProcess, *needles: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("placement: error:") and "Traceback" not in p.stderr, p.stderr
    for needle in needles:
        assert needle in last, last


@pytest.mark.parametrize("cpus,needles", [
    ("0-" + "1" * 30, ["not in the topology", "valid CPUs: 0-63"]),
    ("0-20000000", ["CPU 20000000 is not in the topology"]),
    ("²", ["bad CPU entry '²'", "non-negative number"]),
    ("-1,2", ["bad CPU entry '-1'"]),
    ("0,99", ["CPU 99 is not in the topology"]),
])
def test_cpu_lists(cpus, needles):
    _one_line_exit_2(run("maps", "--topology", str(BULLDOZER), "--threads", "2",
                         "--strategy", "explicit", f"--cpus={cpus}"), *needles)


def test_huge_oversubscription_is_refused_at_once():
    _one_line_exit_2(run("maps", "--topology", str(BULLDOZER), "--threads", "30000000",
                         "--oversubscribe"), "over 64 per PU", "at most 4096")
    p = run("maps", "--topology", str(BULLDOZER), "--threads", "128", "--oversubscribe")
    assert p.returncode == 0 and len(p.stdout.split()) == 128


def test_superscript_thread_count():
    _one_line_exit_2(run("maps", "--topology", str(BULLDOZER), "--threads", "²"),
                     "positive whole number")


def test_range_is_checked_before_it_is_expanded():
    with pytest.raises(PlacementError, match="stop below"):
        cpulist.parse_list("0-99999999999999999999")
    assert cpulist.parse_list("3,0-2") == [3, 0, 1, 2]


def test_topology_given_as_a_directory(tmp_path):
    _one_line_exit_2(run("topo", "--topology", str(tmp_path)), "is a directory")
    _one_line_exit_2(run("topo", "--topology", str(tmp_path / "none.xml")), "not found")


def test_png_given_as_topology(tmp_path):
    png = tmp_path / "node.png"
    subprocess.run(["python3", "-c", "import sys; sys.stdout.buffer.write("
                    "b'\\x89PNG\\r\\n\\x1a\\n' + bytes(range(256)))"], stdout=png.open("wb"),
                   check=True)
    _one_line_exit_2(run("topo", "--topology", str(png)), "not hwloc XML (not UTF-8 text)")


def _edited(tmp_path: Path, pattern: str, repl: str, count: int = 1) -> Path:
    text = XEON.read_text()
    new, n = re.subn(pattern, repl, text, count=count)
    assert n == count
    out = tmp_path / "edited.xml"
    out.write_text(new)
    return out


@pytest.mark.parametrize("pattern,repl,needle", [
    (r'(type="PU" os_index=)"\d+"', r'\1"x1"', "PU os_index='x1' is not a non-negative"),
    (r'cache_size="\d+"', 'cache_size="32K"', "cache_size='32K'"),
    (r'(type="NUMANode" os_index=)"\d+"', r'\1"n0"', "NUMANode os_index='n0'"),
    (r'(type="NUMANode" os_index="\d+" cpuset=)"[^"]*"', r'\1"0xzz"', "not an hwloc bitmap"),
])
def test_malformed_hwloc_attributes(tmp_path, pattern, repl, needle):
    _one_line_exit_2(run("topo", "--topology", str(_edited(tmp_path, pattern, repl))), needle)


def test_duplicate_pu_number_is_rejected(tmp_path):
    # the second PU takes the first one's number: a map could name one CPU twice
    text = XEON.read_text()
    first, second = re.findall(r'type="PU" os_index="(\d+)"', text)[:2]
    dup = _edited(tmp_path, rf'(type="PU" os_index=)"{second}"', rf'\1"{first}"')
    _one_line_exit_2(run("topo", "--topology", str(dup)), f"PU os_index {first} appears twice")


def test_valid_pus_of_a_non_contiguous_set(tmp_path):
    # PUs 0-3 and 8-11 only: the message lists them as they are, not as 0-11
    text = XEON.read_text()
    nums = [int(n) for n in re.findall(r'type="PU" os_index="(\d+)"', text)]
    moved = iter([n if n < 4 else n + 4 for n in nums])
    out = tmp_path / "gap.xml"
    text = re.sub(r'(type="PU" os_index=)"\d+"', lambda m: f'{m.group(1)}"{next(moved)}"', text)
    # the second NUMA node's cpuset follows its PUs, as lstopo would write it
    # (and its allowed_cpuset: hwloc, like the engine, allows only the PUs it lists)
    out.write_text(text.replace('cpuset="0x000000f0"', 'cpuset="0x00000f00"')
                   .replace('allowed_cpuset="0x000000ff"', 'allowed_cpuset="0x00000f0f"'))
    topo = topology.load(out)
    assert sorted(topo.cpus) == [n if n < 4 else n + 4 for n in sorted(nums)]
    _one_line_exit_2(run("maps", "--topology", str(out), "--threads", "1", "--strategy",
                         "explicit", "--cpus", "5"), "valid PUs: 0-3,8-11")


@pytest.mark.skipif(not shutil.which("taskset"), reason="taskset (util-linux) not installed")
def test_restricted_cpu_set_is_placed_within_and_said(tmp_path):
    live = topology.load(None)
    if len(live.pus) < 2 or live.restricted_from:
        pytest.skip("needs an unrestricted machine with 2 or more PUs")
    cpu = live.cpus[-1]
    base = ["taskset", "-c", str(cpu), sys.executable, "-m", "placement"]
    topo = subprocess.run(base + ["topo"], capture_output=True, text=True, cwd=ROOT)
    assert topo.returncode == 0, topo.stderr
    assert "restricted: live machine: placing on the 1 CPU(s) this process may use" in topo.stdout
    assert "1 PUs" in topo.stdout and f"logical order: {cpu}\n" in topo.stdout + "\n"
    maps = subprocess.run(base + ["maps", "--threads", "2", "--oversubscribe", "--strategy",
                                  "compact"], capture_output=True, text=True, cwd=ROOT)
    assert maps.returncode == 0 and maps.stdout.split() == [str(cpu), str(cpu)], maps.stderr


def test_probe_that_printed_nothing_is_not_called_zero_threads():
    # what a job's stdout holds when likwid-pin (or another binder) failed before the probe ran
    from placement.engine import maps
    from placement.checks import probe
    placement = maps.compute(topology.load(XEON), 2, "compact")
    (msg,) = probe.problems(probe.parse("likwid-pin: error\n"), placement)
    assert "printed no report" in msg and "launch command or binding tool failed" in msg
    assert "0 threads" not in msg


@pytest.mark.parametrize("edit, message", [
    # a PU deleted by hand: its core is left without one
    (lambda t: re.sub(r'<object type="PU" os_index="5"[^>]*/>', "", t, count=1),
     "Core L#5 (os_index 5) has no PU"),
    # a whole core deleted from package 1: its NUMA node still lists the PU
    (lambda t: re.sub(r'<object type="Core" os_index="5".*?</object>\s*</object>', "</object>",
                      t, count=1, flags=re.S),
     "NUMA node 1 lists PU(s) 5 that no core or package holds"),
])
def test_an_inconsistent_topology_is_refused_in_one_line(tmp_path, edit, message):
    out = tmp_path / "edited.xml"
    text = XEON.read_text()
    edited = edit(text)
    assert edited != text
    out.write_text(edited)
    _one_line_exit_2(run("topo", "--topology", str(out)), message)


@pytest.mark.parametrize("policy", ["bind:,", "interleave: ", "bind:, ,", "interleave:"])
def test_a_policy_naming_no_node_is_one_line(policy):
    """``bind:,`` printed ``numactl --membind= ...``, a command numactl refuses."""
    _one_line_exit_2(run("maps", "--topology", str(BULLDOZER), "--threads", "4",
                         "--policy", policy, "--format", "numactl"),
                     f"policy {policy!r} names no NUMA node")


@pytest.mark.parametrize("args,needle", [
    (["--threads", "4", "--strategy", "compact", "--cpus", "0,1"],
     "--cpus is the CPU list of --strategy explicit, not of compact"),
    (["--threads", "4", "--cpus", "0,1"], "not of scatter"),
    (["--ranks", "2", "--strategy", "compact"], "--strategy is only read without --ranks"),
    (["--ranks", "2", "--policy", "interleave"], "--policy is only read without --ranks"),
    (["--threads", "2", "--domain", "numa"], "--domain is only read with --ranks"),
    (["--threads", "2", "--unit", "threads"], "--unit is only read with --ranks"),
])
def test_an_option_the_mode_does_not_read_is_refused(args, needle):
    """An option the chosen mode ignores printed a map made without it (``--cpus`` with
    ``--strategy compact``: a compact map, the CPU list unread)."""
    _one_line_exit_2(run("maps", "--topology", str(XEON), *args), needle)


def test_topo_output_needs_a_synthetic_description(tmp_path):
    """``topo --output`` alone printed the live machine's summary and wrote nothing."""
    out = tmp_path / "t.xml"
    _one_line_exit_2(run("topo", "--output", str(out)), "--output writes the XML of --synthetic")
    _one_line_exit_2(run("topo", "--topology", str(XEON), "--synthetic", str(out)),
                     "give one")
    assert not out.exists()


@pytest.mark.parametrize("edit, needle", [
    (lambda tc: tc.update(num_threads="abc"), "its num_threads 'abc' is not a whole number"),
    (lambda tc: tc.update(num_threads=None), "its num_threads None is not a whole number"),
    (lambda tc: tc.update(num_threads=[1]), "its num_threads [1] is not a whole number"),
    (lambda tc: tc.pop("name"), "it has no name (ReFrame writes name, system"),
    (lambda tc: tc.pop("system"), "it has no system (ReFrame writes name, system"),
])
def test_a_malformed_test_case_is_one_line_and_writes_no_report(edit, needle, tmp_path, capsys):
    """A run report edited by hand: a thread count the tables count by that is no number
    stopped the report with a traceback after it had made its folder; a case without a
    name read ``malformed test case '?': 'name'``."""
    data = json.loads((Path(__file__).parent / "fixtures" / "runreports" /
                       "generic-first-run.json").read_text())
    edit(next(tc for tc in data["runs"][0]["testcases"] if "num_threads" in tc))
    (tmp_path / "r.json").write_text(json.dumps(data))
    out = tmp_path / "out"
    assert cli.main(["report", "--run", str(tmp_path / "r.json"), "--no-compare",
                     "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_a_folder_given_as_a_file_or_a_file_as_a_folder_is_named(tmp_path, capsys):
    """``topo --synthetic DIR`` said ``3: Is a directory`` (a file descriptor, not the
    path); ``report --output FILE`` said ``FILE: File exists``."""
    assert cli.main(["topo", "--synthetic", str(tmp_path)]) == 2
    assert f"{tmp_path}: a directory: give the synthetic description file itself" in \
        capsys.readouterr().err
    (tmp_path / "f").write_text("")
    assert cli.main(["report", "--run", str(ROOT / "tests/fixtures/runreports/"
                                                  "generic-first-run.json"),
                     "--no-compare", "--output", str(tmp_path / "f")]) == 2
    assert f"{tmp_path / 'f'}: not a folder; give --output" in capsys.readouterr().err
