"""Nothing written where it should not be, nothing read through a planted path.

Each test plants for real what a careless site or an attacker would: a baseline that is a
link to a private file, a FIFO or a device; a private baseline; ``--output .``; a link at the
report folder a run's start time names; ``site new`` over an existing system or with a
node whose topology does not parse; a gzip run report that expands without bound. Each ends
in its one line, exit 2, with nothing read through the plant and nothing lost.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from placement import cli
from placement.judgement import reading

ROOT = Path(__file__).resolve().parents[1]
FIRST = ROOT / "tests" / "fixtures" / "runreports" / "generic-first-run.json"
BASELINE = ROOT / "tests" / "fixtures" / "runreports" / "generic-baseline.yaml"
SECRET = "root:$6$secrethash:19000:0:99999:7:::\n"


def _placement(*args: str, env: dict | None = None, timeout: int = 60
               ) -> subprocess.CompletedProcess:
    """``placement ARGS`` in its own process: a read that blocks fails the test by the timeout
    instead of hanging the suite."""
    return subprocess.run([sys.executable, "-m", "placement", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT,
                          env={k: v for k, v in {**os.environ, **(env or {})}.items()
                               if v is not None})


def _one_line(proc_or_err, *words: str) -> str:
    err = proc_or_err if isinstance(proc_or_err, str) else proc_or_err.stderr
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# -- baselines: never read through a link, a FIFO or a device ---------------------------------

def _plant(kind: str, target: Path, tmp: Path) -> None:
    if kind == "link":
        secret = tmp / "shadow"
        secret.write_text(SECRET)
        secret.chmod(0o600)
        target.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(target, 0o600 | stat.S_IFCHR, os.makedev(1, 5))      # /dev/zero


def _in_process(args: list[str], capsys) -> tuple[int, str]:
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


def _own_process(args: list[str], env: dict) -> tuple[int, str]:
    """A FIFO is read in a process of its own: before the fix a read blocked for ever."""
    proc = _placement(*args, env=env)
    return proc.returncode, proc.stdout + proc.stderr


_SUMMARY = ("from pathlib import Path; from placement import acceptance as a; "
            f"lines, status = a.summary([Path({str(FIRST)!r})], 'generic', 'quick', None, "
            "10.0, False, []); print('\\n'.join(lines)); print(status)")


@pytest.mark.parametrize("kind, is_", [("link", "a symbolic link"),
                                       ("fifo", "a FIFO (named pipe)"),
                                       ("device", "a character device")])
def test_a_baseline_that_is_a_link_fifo_or_device_is_refused_unread(tmp_path, monkeypatch,
                                                                     capsys, kind, is_):
    target = tmp_path / "generic.yaml"
    _plant(kind, target, tmp_path)
    env = {"PLACEMENT_BASELINES": str(tmp_path)}
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    for args in (("record", "--from", str(FIRST)), ("diff", "--from", str(FIRST)),
                 ("control", "ReportNumaCopy[gnu].copy_0_0")):
        args = ["baseline", *args, "--system", "generic"]
        code, err = _own_process(args, env) if kind == "fifo" else _in_process(args, capsys)
        assert code == 2, err
        _one_line(err, f"{target}: {is_}, not a regular file", "nothing was read or written")
        assert "secrethash" not in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("generic")) == \
        ["generic.yaml"]     # no .prev copied from the link's target
    # the acceptance run's verdict refuses it the same way, never blocks on it
    if kind != "fifo":
        from placement import acceptance
        lines, status = acceptance.summary([FIRST], "generic", "quick", None, 10.0, False, [])
    else:
        proc = subprocess.run([sys.executable, "-c", _SUMMARY], capture_output=True,
                              text=True, timeout=120, cwd=ROOT, env={**os.environ, **env})
        *lines, status = proc.stdout.strip().splitlines()
    assert int(status) == 4 and " INCOMPLETE " in lines[-1]
    assert f"baseline refused: {target}: {is_}" in "\n".join(lines), lines


def test_a_private_baseline_and_its_previous_version_stay_private(tmp_path):
    target = tmp_path / "generic.yaml"
    target.write_text(BASELINE.read_text())
    target.chmod(0o600)
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST),
                     "--baselines", str(target)]) == 0
    prev = tmp_path / "generic.yaml.prev"
    assert prev.read_text() == BASELINE.read_text()
    assert stat.S_IMODE(prev.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_read_only_baseline_is_kept_as_it_is(tmp_path, capsys, monkeypatch):
    """A reference file a site made read-only was replaced by the rename all the same."""
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    # a control value set: --clear changes the file (clearing none writes nothing at all)
    target.write_text(BASELINE.read_text() + "_control: ReportNumaCopy[gnu].copy_0_0\n")
    before = target.read_text()
    target.chmod(0o444)
    for args in (["record", "--system", "generic", "--from", str(FIRST), "--add"],
                 ["control", "--system", "generic", "--clear"]):
        assert cli.main(["baseline", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("is read-only (mode 0444): make it writable (chmod u+w) to change "
                            "it; nothing was written") and "\n" not in err, err
    assert target.read_text() == before
    assert not (tmp_path / "generic.yaml.prev").exists()


def test_a_planted_lock_link_is_never_created_through(tmp_path, capsys):
    target = tmp_path / "generic.yaml"
    victim = tmp_path / "victim"
    (tmp_path / ".generic.yaml.lock").symlink_to(victim)
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST),
                     "--baselines", str(target)]) == 2
    _one_line(capsys.readouterr().err, ".generic.yaml.lock: a symbolic link")
    assert not victim.exists() and not target.exists()


# -- baselines: malformed shapes and values are one line, never quoted ------------------------

def _edited(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


_INDEX = "$index: [$environ, benchmark, npb_class, affinity, num_threads]"
_LEAF = "time: [0.00157045, -1.0, 3.424, s]"
BIG = "9" * 400


@pytest.mark.parametrize("old, new, says", [
    (_INDEX, "$index: 7", "ReportNpbShaped.$index: not a list of attribute names"),
    (_INDEX, "$index: [[$environ, benchmark]]", "ReportNpbShaped.$index: not a list of"),
    (_INDEX, "$index: [$environ, $environ, npb_class, affinity, num_threads]",
     "names an attribute twice"),
    (_LEAF, f"time: [{BIG}, -1.0, 3.424, s]", "is not a value a measurement can be"),
    (_LEAF, f"time: [0.00157045, -{BIG}, 3.424, s]", "are not numbers"),
    (_LEAF, "time: [[0.00157045], -1.0, 3.424, s]", "is not a positive number"),
    (_LEAF, "time: {value: 0.00157045}", "not a reference [value, lower, upper, unit]"),
    (_LEAF, f"time: [{'9' * 5000}, -1.0, 3.424, s]", "a number with more digits than"),
    ("ReportNpbShaped:\n", f"{BIG}: 1\nReportNpbShaped:\n", "top-level key of type int"),
    ("        none:\n", "        none: [[1, [2]]]\n        nonex:\n", "ReportNpbShaped.gnu.MM160"),
    ("ReportNpbShaped:\n", "ReportNpbShaped: 7\nReportNpbShaped:\n",
     "a key given twice in one mapping (line 16, first at line 15)"),
    ("          2:\n            time: [0.000500128", "          1:\n            time: [0.000500128",
     "a key given twice in one mapping (line 23, first at line 21)"),
    ("          2:\n            time: [0.000500128",
     "          1.0:\n            time: [0.000500128",
     "a key given twice in one mapping"),
])
def test_a_baseline_of_the_wrong_shape_is_one_line_quoting_none_of_it(tmp_path, capsys, old,
                                                                       new, says):
    target = tmp_path / "generic.yaml"
    text = _edited(BASELINE.read_text(), old, new)
    target.write_text(text)
    for cmd in ("diff", "record"):
        assert cli.main(["baseline", cmd, "--system", "generic", "--from", str(FIRST),
                         "--baselines", str(target)]) == 2
        line = _one_line(capsys.readouterr().err, says)
        assert BIG not in line and len(line) < 600
    assert target.read_text() == text and not (tmp_path / "generic.yaml.prev").exists()


def test_the_same_runs_key_twice_in_the_samples_is_refused(tmp_path, capsys):
    target = tmp_path / "generic.yaml"
    assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST),
                     "--baselines", str(target)]) == 0
    data = yaml.safe_load(target.read_text())
    assert "_samples" in data
    text = target.read_text().replace("_samples:\n", "_samples:\n  ReportNumaCopy: {}\n", 1)
    target.write_text(text)
    assert cli.main(["baseline", "diff", "--system", "generic", "--from", str(FIRST),
                     "--baselines", str(target)]) == 2
    _one_line(capsys.readouterr().err, "a key given twice in one mapping")


# -- run reports: bounded by what they expand to; never read from a FIFO ----------------------

def test_a_gzip_run_report_that_expands_without_bound_is_refused_as_it_expands(
        tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    bomb = runs / "run-report-bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as fp:
        block = b"0" * 2**20
        for _ in range(64):     # 64 MiB of zeros in some 100 kB
            fp.write(block)
    monkeypatch.setattr(reading.run_report, "MAX_REPORT_BYTES", 16 * 2**20)
    with pytest.raises(reading.run_report.PlacementError, match="expands to more than 16 MiB, more "
                       "than any run report a run writes"):
        reading.run_report.read(bomb)
    monkeypatch.setenv("PLACEMENT_RESULTS", str(tmp_path))
    assert cli.main(["report", "--latest", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "skipped the run report" in err and "expands to more than 16 MiB" in err
    assert "Traceback" not in err and "MemoryError" not in err


@pytest.mark.parametrize("piece", [7, 2**24], ids=["many-pieces", "one-piece"])
def test_a_gzip_run_report_reads_as_the_plain_one(tmp_path, monkeypatch, piece):
    """Expanded a piece at a time, the text is the whole file's, at any piece size; a cut
    gzip file is refused, not read short."""
    from placement.util import regular_file
    monkeypatch.setattr(regular_file, "_GUNZIP_PIECE", piece)
    plain = Path(__file__).parent / "fixtures" / "runreports" / "generic-first-run.json"
    packed = tmp_path / "run-report-x.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert reading.run_report.read(packed) == reading.run_report.read(plain)
    cut = tmp_path / "run-report-cut.json.gz"
    cut.write_bytes(packed.read_bytes()[:-40])
    with pytest.raises(reading.run_report.PlacementError, match="not a whole gzip file"):
        reading.run_report.read(cut)


def test_a_run_report_or_run_list_that_is_a_fifo_is_refused_unread(tmp_path):
    fifo = tmp_path / "run-report-x.json"
    os.mkfifo(fifo)
    proc = _placement("report", "--run", str(fifo), "--output", str(tmp_path / "o"))
    assert proc.returncode == 2
    _one_line(proc, f"{fifo}: a FIFO (named pipe), not a regular file: a run report is never")
    lst = tmp_path / "x.run"
    os.mkfifo(lst)
    proc = _placement("baseline", "diff", "--system", "generic", "--from", str(lst),
                      "--baselines", str(tmp_path / "g.yaml"))
    assert proc.returncode == 2
    _one_line(proc, f"{lst}: a FIFO (named pipe), not a regular file: a run list is never")


def test_a_folder_given_as_a_run_report_or_baseline_is_named_in_its_line(tmp_path):
    """A folder where a file belongs was "placement: error: 3: Is a directory" (its fd)."""
    (tmp_path / "d").mkdir()
    (tmp_path / "b" / "generic.yaml").mkdir(parents=True)
    for args in (["report", "--run", str(tmp_path / "d"), "--output", str(tmp_path / "o")],
                 ["baseline", "diff", "--system", "generic", "--from", str(tmp_path / "d"),
                  "--baselines", str(tmp_path / "g.yaml")],
                 ["baseline", "control", "--system", "generic", "--baselines",
                  str(tmp_path / "b" / "generic.yaml")]):
        proc = _placement(*args)
        assert proc.returncode == 2, proc.stderr
        _one_line(proc, f"{tmp_path}/", "a directory, not a regular file")


def test_latest_passes_over_a_dangling_link_fifo_or_device_link_in_runs(tmp_path):
    """One bad name in runs/ made every --latest fail (a dangling link: "No such file or
    directory"), or was called an empty report (a link to a FIFO or /dev/zero)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "run-report-1.json").write_bytes(FIRST.read_bytes())
    (runs / "run-report-dangling.json").symlink_to(tmp_path / "gone")
    os.mkfifo(tmp_path / "fifo")
    (runs / "run-report-fifo.json").symlink_to(tmp_path / "fifo")
    (runs / "run-report-zero.json").symlink_to("/dev/zero")
    proc = _placement("report", "--latest", "--no-compare", "--output", str(tmp_path / "o"),
                      env={"PLACEMENT_RESULTS": str(tmp_path)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    skipped = [line for line in proc.stderr.splitlines() if line.startswith("placement: skipped")]
    assert len(skipped) == 3 and all("a symbolic link" in line for line in skipped), skipped


# -- report folders: made fresh, or the report's own; nobody else's files deleted -------------

def test_output_dot_never_replaces_a_checkout_s_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("the project's own\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    assert cli.main(["report", "--reference", "--baseline", str(BASELINE), "--output", "."]) == 2
    assert _one_line(capsys.readouterr().err) == (
        "placement: error: .: holds files no report wrote (no .placement-report marker of "
        "one); give --output a new or empty folder, or one a report wrote; nothing was "
        "written or removed")
    assert (tmp_path / "README.md").read_text() == "the project's own\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "logo.png"]


def test_a_link_planted_at_the_report_folder_is_never_followed(tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "notes.md").write_text("mine\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "generic-20261122T231250").symlink_to(victim)    # the fixture's start time
    assert cli.main(["report", "--run", str(FIRST), "--no-compare", "--output",
                     str(reports)]) == 2
    _one_line(capsys.readouterr().err, "generic-20261122T231250: a symbolic link, never "
                                       "followed", "nothing was written or removed")
    assert sorted(p.name for p in victim.iterdir()) == ["notes.md"]


def test_a_report_folder_is_replaced_by_its_marker_alone(tmp_path, capsys):
    out = tmp_path / "ref"
    args = ["report", "--reference", "--baseline", str(BASELINE), "--output", str(out)]
    assert cli.main(args) == 0
    marker = (out / ".placement-report").read_text().splitlines()
    assert "README.md" in marker and "index.html" in marker and "numbers.csv" in marker
    (out / "notes.md").write_text("a person's\n")
    (out / "old-figure.png").write_bytes(b"")
    (out / ".placement-report").write_text("\n".join(marker + ["old-figure.png", "../x"]))
    (tmp_path / "x").write_text("outside\n")
    assert cli.main(args) == 0
    assert (out / "notes.md").read_text() == "a person's\n"
    assert not (out / "old-figure.png").exists() and (tmp_path / "x").exists()
    assert "notes.md" not in (out / ".placement-report").read_text()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_report_that_fails_as_it_is_written_again_puts_the_earlier_one_back(
        tmp_path, capsys, monkeypatch):
    """A disk that fills while a report is written over an earlier one of the same run
    leaves the earlier report whole, not a folder of half the new one's files."""
    from placement.report import assembly
    args = ["report", "--run", str(FIRST), "--no-compare", "--output", str(tmp_path)]
    assert cli.main(args) == 0
    out = tmp_path / "generic-20261122T231250"        # the fixture's start time
    (out / "notes.md").write_text("a person's\n")
    before = _files(out)
    capsys.readouterr()

    def full_disk(rep, folder):
        (folder / "index.html").write_text("<html>half")
        raise OSError(28, "No space left on device", str(folder / "README.md"))
    monkeypatch.setattr(assembly.files, "write", full_disk)
    assert cli.main(args) == 2
    _one_line(capsys.readouterr().err, "No space left on device",
              "the report written there before was put back")
    assert _files(out) == before
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == []


def test_a_report_a_killed_write_left_hidden_is_the_one_put_back(tmp_path, capsys,
                                                                  monkeypatch):
    """A write killed outright (no handler ran) leaves the earlier report in its hidden
    folder and half of its own files in the report's: the next write's failure put back
    the killed one's half, not the earlier report."""
    from placement.report import assembly, folder
    args = ["report", "--run", str(FIRST), "--no-compare", "--output", str(tmp_path)]
    assert cli.main(args) == 0
    out = tmp_path / "generic-20261122T231250"
    before = _files(out)
    stash = out / (folder.STASH_PREFIX + "killed")      # as the killed write left it
    stash.mkdir()
    for name in folder.written_before(out):
        (out / name).rename(stash / name)
    (out / "index.html").write_text("<html>half of the killed one")
    capsys.readouterr()

    def full_disk(rep, target):
        raise OSError(28, "No space left on device", str(target / "README.md"))
    monkeypatch.setattr(assembly.files, "write", full_disk)
    assert cli.main(args) == 2
    _one_line(capsys.readouterr().err, "the report written there before was put back")
    assert _files(out) == before and not list(out.glob(folder.STASH_PREFIX + "*"))


def test_an_infinite_value_in_a_run_report_is_shown_as_not_measured(tmp_path, capsys):
    """JSON's Infinity (a time of 0 makes a rate infinite) is a value not measured, as a
    NaN is: the report is written, no traceback."""
    data = reading.run_report.read(FIRST)
    tc = next(tc for r in data["runs"] for tc in r["testcases"] if tc.get("perfvalues"))
    for tup in tc["perfvalues"].values():
        tup[0] = float("inf")
    run = tmp_path / "run-inf.json"
    run.write_text(json.dumps(data))
    assert cli.main(["report", "--run", str(run), "--no-compare", "--output",
                     str(tmp_path / "out")]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("args, what", [
    (["acceptance", "resume", "{f}"], "a run list is UTF-8"),
    (["acceptance", "resume", "{pv}"], "a JSON file, not a run list"),
    (["report", "--reference", "--output", "{out}", "--seed-csv", "{f}"], "a seed table is UTF-8"),
    (["report", "--run", "{pv}", "--no-compare", "--output", "{out}"],
     "its perfvalues are not an object"),
    (["baseline", "record", "--system", "generic", "--from", "{pv}"],
     "its perfvalues are not an object"),
])
def test_a_run_list_seed_table_or_case_of_the_wrong_kind_is_one_line(tmp_path, capsys,
                                                                     monkeypatch, args, what):
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path / "baselines"))
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xff\xfe,")
    data = reading.run_report.read(FIRST)
    tc = next(tc for r in data["runs"] for tc in r["testcases"] if tc.get("perfvalues"))
    tc["perfvalues"] = list(tc["perfvalues"].values())
    pv = tmp_path / "run-list-perfvalues.json"
    pv.write_text(json.dumps(data))
    given = [a.format(f=bad, out=tmp_path / "out", pv=pv) for a in args]
    assert cli.main(given) == 2
    _one_line(capsys.readouterr().err, what)
    assert not (tmp_path / "out").exists()
    assert not list((tmp_path / "baselines").glob("*.yaml"))


# -- site new: never over an existing system without --force; put back on every failure -------

def test_site_new_never_replaces_an_existing_system_without_force(tmp_path):
    proc = _placement("site", "new", "generic", "--scheduler", "local", "--no-check",
                      env={"PLACEMENT_SYSTEMS": None})
    assert proc.returncode == 2 and proc.stdout == ""
    _one_line(proc, "system 'generic' exists", "only with --force", "nothing was written")
    proc = _placement("site", "new", "bulldozer", "--scheduler", "local", "--no-check",
                      env={"PLACEMENT_SYSTEMS": None})
    _one_line(proc, "system 'bulldozer' exists", "topologies/bulldozer.xml")
    assert subprocess.run(["git", "status", "--porcelain", "config/systems/generic.py",
                           "config/systems/bulldozer.py", "topologies/bulldozer.xml"],
                          cwd=ROOT, capture_output=True, text=True).stdout == ""


@pytest.mark.parametrize("answer", ["garbage, not XML", "<topology>" * 3000,
                                    b"\xff\xfe<topology>", None])
def test_site_new_puts_both_files_back_when_the_capture_does_not_parse(tmp_path, answer):
    """Garbage, deep XML, bytes that are no UTF-8 text, or output without end (None: a
    MemoryError traceback, or the memory filled, before lstopo's output was bounded)."""
    systems = tmp_path / "systems"
    systems.mkdir()
    (systems / "mine.py").write_text("# the site edited this\n")
    (systems / "mine.xml").write_text("<topology/>  <!-- the stored one -->\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    if answer is not None:
        (tmp_path / "answer").write_bytes(answer if isinstance(answer, bytes) else answer.encode())
    say = f"cat {tmp_path / 'answer'}" if answer is not None else "exec yes '<topology>'"
    for tool in ("lstopo-no-graphics", "lstopo"):      # the node answers with this
        (bindir / tool).write_text(f"#!/bin/sh\n{say}\n")
        (bindir / tool).chmod(0o755)
    env = {**os.environ, "PLACEMENT_SYSTEMS": str(systems), "PATH": f"{bindir}:/usr/bin:/bin"}
    # bounded memory: the unbounded reader reached a MemoryError here, not the machine's limit
    proc = subprocess.run([sys.executable, "-m", "placement", "site", "new", "mine",
                           "--scheduler", "local", "--force", "--no-check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=150,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (3 << 30, 3 << 30)))
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert (systems / "mine.py").read_text() == "# the site edited this\n"
    assert (systems / "mine.xml").read_text() == "<topology/>  <!-- the stored one -->\n"
    assert sorted(p.name for p in systems.iterdir()) == ["mine.py", "mine.xml"]


@pytest.mark.parametrize("text, says", [
    ("site_configuration = {\n", "broken.py, line 1: SyntaxError: '{' was never closed"),
    ("# a system file left half-edited\n", "a system file defines only site_configuration"),
    ("import nosuchmodule\n", "No module named 'nosuchmodule'"),
])
def test_site_new_beside_a_system_file_that_does_not_load_is_one_line(tmp_path, text, says):
    """Another system's file in the folder that does not load (a syntax error, a file that
    defines no systems, a missing import) ended `site new` in a traceback."""
    systems = tmp_path / "systems"
    systems.mkdir()
    (systems / "broken.py").write_text(text)
    proc = _placement("site", "new", "other", "--scheduler", "local", "--no-check",
                      env={"PLACEMENT_SYSTEMS": str(systems)})
    assert proc.returncode == 2, proc.stderr[-2000:]
    _one_line(proc, "the system files do not load (", says, "nothing was written")
    assert sorted(p.name for p in systems.iterdir()) == ["broken.py"]


@pytest.mark.parametrize("name", ["generic", "bulldozer", "xeon-e5620"])
def test_site_new_in_a_site_folder_never_takes_a_name_the_checkout_defines(tmp_path, name):
    """With PLACEMENT_SYSTEMS, `site new bulldozer` captured through the checkout's
    bulldozer system (its Grid Engine queue) and `site new generic` wrote a second catch-all
    that ReFrame never selects; with --force as without, one line and nothing written."""
    systems = tmp_path / "systems"
    systems.mkdir()
    for force in ((), ("--force",)):
        proc = _placement("site", "new", name, "--scheduler", "local", "--no-check", *force,
                          env={"PLACEMENT_SYSTEMS": str(systems)})
        assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr[-2000:]
        _one_line(proc, f"system {name!r} is the checkout's own (", "another name",
                  "nothing was written")
    assert list(systems.iterdir()) == []


# -- temporary files: made exclusively beside their target, never at a name one can plant -----

def test_a_figure_is_never_written_through_a_planted_temporary_name(tmp_path):
    from placement.report import plots
    if not plots.available():
        pytest.skip("matplotlib is not installed (make setup-test)")
    import matplotlib.pyplot as plt
    victim = tmp_path / "victim"
    victim.write_text("kept\n")
    (tmp_path / ".f.png.tmp").symlink_to(victim)    # the name the figure's writer once used
    plots._save(plt.figure(), tmp_path, "f.png", tight=False)
    assert victim.read_text() == "kept\n"
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert stat.S_IMODE((tmp_path / "f.png").stat().st_mode) == 0o644


#: a temporary file at a name anyone can know before it is made (a fixed suffix, the pid):
#: a link planted there is written through
PREDICTABLE = [r'\.tmp\.\$\$', r'with_suffix\([\'"]\.(json\.)?tmp[\'"]\)', r'\+ "\.tmp"',
               r'f"\.\{name\}\.tmp"', r'/ "[\w.]+\.tmp"']


def test_no_temporary_file_at_a_predictable_name():
    import re
    pattern = re.compile("|".join(PREDICTABLE))
    hits = []
    for folder in ("src/placement", "scripts", "benchmarks", "config"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".sh") and path.is_file():
                for n, line in enumerate(path.read_text().splitlines(), 1):
                    if pattern.search(line):
                        hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert hits == []


# -- environment variables naming folders: empty, blank or a line break is one line -----------

@pytest.mark.parametrize("value, says", [("", "is empty"), ("  ", "is blank"),
                                         ("/tmp/a\nb", "a line break")])
@pytest.mark.parametrize("var, args", [
    ("PLACEMENT_RESULTS", ("report", "--latest")),
    ("PLACEMENT_BASELINES", ("baseline", "diff", "--system", "generic", "--from", str(FIRST))),
    ("PLACEMENT_ROOT", ("baseline", "diff", "--system", "generic", "--from", str(FIRST))),
])
def test_a_folder_variable_empty_blank_or_with_a_line_break_is_one_line(
        monkeypatch, capsys, var, args, value, says):
    monkeypatch.delenv("PLACEMENT_BASELINES", raising=False)
    monkeypatch.setenv(var, value)
    assert cli.main(list(args)) == 2
    _one_line(capsys.readouterr().err, f"{var} ", says, "expected the path of a folder")


@pytest.mark.parametrize("value, says", [("", "is empty"), ("  ", "is blank"),
                                         ("/tmp/a\nb", "holds a line break"),
                                         ("a b", "contains a blank"),
                                         (str(Path(__file__)), "is not a folder")])
@pytest.mark.parametrize("script", ["acceptance.sh", "scheduled.sh"])
def test_acceptance_refuses_such_a_results_folder_before_it_starts(tmp_path, value, says,
                                                                   script):
    """scheduled.sh wrote its log into the checkout's results/ for an empty
    PLACEMENT_RESULTS, and into a folder named by the blank or the line break for the
    others, before acceptance.sh refused the value; a file (PLACEMENT_BASELINES one, a
    run passed with no baseline read) is refused by both."""
    runs = ROOT / "results" / "runs"
    before = set(runs.iterdir()) if runs.is_dir() else set()
    proc = subprocess.run([str(ROOT / "scripts" / script), "-m", "quick", "-s", "generic"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PLACEMENT_RESULTS": value})
    assert proc.returncode == 2 and "ACCEPTANCE" not in proc.stdout
    _one_line(proc, f"{script}: PLACEMENT_RESULTS ", says)
    assert list(tmp_path.iterdir()) == []
    assert (set(runs.iterdir()) if runs.is_dir() else set()) == before


# -- NPB tarballs: every member checked, the folder bounded, before anything is unpacked -------

def _tarball(path: Path, *extra) -> Path:
    import io
    import tarfile
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name, data in (("NPB3.4.1/NPB3.4-OMP/config/make.def.template", b"FC = f77\n"),):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info, data in extra:
            tar.addfile(info, data)
    return path


def _member(name: str, kind: bytes = b"0", link: str = "", size: int = 0):
    import io
    import tarfile

    class Zeros(io.RawIOBase):
        def __init__(self, n: int) -> None:
            self.n = n

        def readinto(self, b) -> int:
            k = min(len(b), self.n)
            b[:k] = bytes(k)
            self.n -= k
            return k
    info = tarfile.TarInfo(f"NPB3.4.1/NPB3.4-OMP/{name}")
    info.type, info.linkname, info.size = kind, link, size
    return info, Zeros(size) if size else None


@pytest.mark.parametrize("member, says", [
    (("evil", b"2", "/etc/passwd"), "is a link that leads out of the folder"),
    (("evil", b"2", "../../../etc"), "is a link that leads out of the folder"),
    (("evil", b"1", "/etc/passwd"), "is a link that leads out of the folder"),
    (("../../x",), "leads out of the folder (an absolute path or '..')"),
    (("zero", b"3"), "is a device or FIFO"),
    (("zeros", b"0", "", 300 * 2**20), "its NPB folder expands to more than 256 MiB"),
])
def test_a_crafted_npb_tarball_is_one_line_and_unpacks_nothing(tmp_path, capsys, member, says):
    tarball = _tarball(tmp_path / "npb.tgz", _member(*member))
    prefix = tmp_path / "prefix"
    assert cli.main(["npb", "build", "--tarball", str(tarball), "--prefix", str(prefix),
                     "--benchmarks", "EP", "--classes", "S"]) == 2
    _one_line(capsys.readouterr().err, f"{tarball}: ", says, "nothing was unpacked")
    assert not prefix.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        ".prefix.lock", "npb.tgz"]      # the lock alone: no build folder is left


def test_an_npb_template_not_in_utf8_is_one_line(tmp_path, capsys):
    import io
    import tarfile
    tarball = tmp_path / "npb.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        data = "FC = f77 \u00e9\n".encode("latin-1")
        info = tarfile.TarInfo("NPB3.4.1/NPB3.4-OMP/config/make.def.template")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert cli.main(["npb", "build", "--tarball", str(tarball), "--prefix",
                     str(tmp_path / "prefix"), "--benchmarks", "EP", "--classes", "S"]) == 2
    _one_line(capsys.readouterr().err, "make.def.template: not UTF-8 text (byte 9)")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".prefix.lock", "npb.tgz"]


# -- one baseline version per run --------------------------------------------------------------

def test_a_baseline_changed_during_the_run_is_named_and_not_a_pass(tmp_path, monkeypatch):
    import json
    from placement import acceptance
    from placement.judgement import baselines
    monkeypatch.setenv("PLACEMENT_BASELINES", str(tmp_path))
    target = tmp_path / "generic.yaml"
    target.write_text(BASELINE.read_text())
    seen = baselines.store.version(target)
    data = json.loads(FIRST.read_text())
    for tc in data["runs"][0]["testcases"]:
        tc["baseline_version"] = seen      # what each case's bounds came from
    part = tmp_path / "run.json"
    part.write_text(json.dumps(data))
    lines, status = acceptance.summary([part], "generic", "quick", None, 10.0, False, [])
    assert f"NOTE judged against {target} {seen}: ReFrame's bounds and the verdict read " \
        "this version" in lines
    target.write_text(BASELINE.read_text() + "# a record --add during the run\n")
    lines, status = acceptance.summary([part], "generic", "quick", None, 10.0, False, [])
    assert status == 4 and " INCOMPLETE " in lines[-1], lines[-1]
    assert "baseline changed during the run" in lines[-1]
    assert any(ln.startswith(f"NOTE baseline changed during the run: ReFrame's bounds came "
                             f"from {target} {seen}, the verdict from "
                             f"{baselines.store.version(target)}") for ln in lines), lines


def test_a_report_folder_written_before_markers_is_taken_as_a_report_s(tmp_path):
    out = tmp_path / "ref"
    out.mkdir()
    for name in ("index.html", "numbers.csv", "README.md", "old.png", "discussion.md"):
        (out / name).write_text("earlier\n")
    assert cli.main(["report", "--reference", "--baseline", str(BASELINE), "--output",
                     str(out)]) == 0
    assert not (out / "old.png").exists() and (out / "discussion.md").read_text() == "earlier\n"
    assert (out / "index.html").read_text() != "earlier\n"


# -- node history pages: their folder's name is known before a run; never followed ------------

def _node_history_inputs(tmp_path: Path, monkeypatch):
    """A distributed run recorded per node, as test_peer_acceptance records it."""
    from test_peer_acceptance import recorded_per_node
    return recorded_per_node(tmp_path, monkeypatch)


@pytest.mark.parametrize("plant", ["history", "history/generic-n2"])
def test_a_link_planted_at_a_node_history_folder_is_never_followed(tmp_path, monkeypatch,
                                                                   plant):
    """reports/history/<system>-<node> follows from names anyone knows: a link planted there
    (or at history/) had the node's page replace the index.html of the link's target."""
    from placement.report import node_history
    rep = _node_history_inputs(tmp_path, monkeypatch)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "index.html").write_text("the victim's own\n")
    reports = tmp_path / "reports"
    (reports / plant).parent.mkdir(parents=True, exist_ok=True)
    (reports / plant).symlink_to(victim)
    with pytest.raises(reading.run_report.PlacementError, match="a symbolic link, never followed") as err:
        node_history.write("generic", [rep], [], reports)
    assert f"{reports / plant}: a symbolic link" in str(err.value)
    assert sorted(p.name for p in victim.iterdir()) == ["index.html"]
    assert (victim / "index.html").read_text() == "the victim's own\n"


def test_a_node_history_folder_written_before_markers_is_replaced(tmp_path, monkeypatch):
    """A node's page written before node pages left a marker (with its kept points) is
    taken as a report's, and sealed with a marker once written again."""
    from placement.report import folder, node_history
    rep = _node_history_inputs(tmp_path, monkeypatch)
    pages = node_history.write("generic", [rep], [], tmp_path / "reports")
    n2 = pages["n2"]
    (n2 / folder.MARKER).unlink()      # as the pages were left before
    pages = node_history.write("generic", [rep], [], tmp_path / "reports")
    assert ".history-points.json" in (n2 / folder.MARKER).read_text()
    assert "History: generic node n2" in (n2 / "index.html").read_text()


@pytest.mark.parametrize("case", ["fifo", "itself", "empty"])
def test_topo_output_never_replaces_a_fifo_or_its_input_and_an_empty_description_is_refused(
        tmp_path, capsys, case):
    """`topo --output` replaced a FIFO (or, as root, /dev/full) with a regular file and
    overwrote its own input; an empty description printed the live machine's topology."""
    desc = tmp_path / "node.synthetic"
    desc.write_text("" if case == "empty" else "pack:1 core:2 pu:1\n")
    out = {"fifo": tmp_path / "f", "itself": desc, "empty": tmp_path / "o.xml"}[case]
    if case == "fifo":
        os.mkfifo(out)
    before = desc.read_bytes()
    assert cli.main(["topo", "--synthetic", str(desc), "--output", str(out)]) == 2
    _one_line(capsys.readouterr().err, {"fifo": "a FIFO", "itself": "the synthetic "
                                        "description itself", "empty": "is empty"}[case])
    assert desc.read_bytes() == before
    assert case != "fifo" or stat.S_ISFIFO(os.lstat(out).st_mode)
    assert case != "empty" or not out.exists()
