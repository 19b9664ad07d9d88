"""The checked copy of a large reference file (placement.judgement.baselines.cache): written by
the file's writer, never by a reader; used only for the very text it was read from, as private
as the file, checked as the file is, and ignored when it is damaged."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from placement import cli
from placement.judgement import baselines
from placement.util import PlacementError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import baseline_load  # noqa: E402

FIRST = Path(__file__).parent / "fixtures" / "runreports" / "generic-first-run.json"


@pytest.fixture
def large(monkeypatch):
    """Every reference file taken for a large one (a copy is kept of it)."""
    monkeypatch.setattr(baselines.cache, "MIN_BYTES", 0)


@pytest.fixture
def written(tmp_path, large):
    """A 50-entry reference file of mode 0600, as its writer leaves it."""
    path = tmp_path / "bench.yaml"
    path.write_text("{}\n")
    path.chmod(0o600)
    baselines.store.write_atomic(path, baseline_load.baseline(50))
    return path


def test_the_writer_leaves_a_copy_that_a_load_reads_with_its_key_types(written):
    copy = baselines.cache.copy_path(written)
    assert copy.is_file() and copy.stat().st_mode & 0o777 == 0o600
    first = baselines.store.load(written)
    assert first == yaml.safe_load(written.read_text())
    text = copy.read_text()
    copy.write_text(text.replace('"srate"', '"sRATE"', 1))    # the copy is what is read
    again = baselines.store.load(written)
    assert "RATE" in str(again) and again != first
    copy.write_text(text)
    assert baselines.store.load(written) == first
    assert isinstance(first["_provenance"], dict) and all(
        isinstance(k, str) for k in first["PartitionCase"])


def test_record_writes_the_copy_of_the_text_it_wrote(tmp_path, large, capsys):
    target = tmp_path / "generic.yaml"
    for _ in range(2):      # a new file, then one replaced (its old copy is of the old text)
        assert cli.main(["baseline", "record", "--system", "generic", "--from", str(FIRST),
                         "--add", "--baselines", str(target)]) == 0
        copy = baselines.cache.copy_path(target)
        assert baselines.cache.read(target, target.read_text()) == \
            yaml.safe_load(target.read_text())
        assert copy.read_text().split("\n", 1)[0] == baselines.cache._head(target.read_text())


def test_a_load_writes_nothing(tmp_path, large):
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(baseline_load.baseline(50), sort_keys=False))
    before = sorted(os.listdir(tmp_path))
    for _ in range(2):
        baselines.store.load(path)
    assert sorted(os.listdir(tmp_path)) == before == ["bench.yaml"]


def _read_only_load(folder: Path) -> subprocess.CompletedProcess:
    """``baselines.load`` of ``folder/bench.yaml`` in a process that cannot write ``folder``
    (root: a read-only bind mount of it, in a mount namespace of its own)."""
    code = ("import sys; from pathlib import Path; from placement.judgement.baselines "
            "import cache as c, store as b; c.MIN_BYTES = 0; "
            "print(len(b.load(Path(sys.argv[1]) / 'bench.yaml')['PartitionCase']))")
    cmd = [sys.executable, "-c", code, str(folder)]
    if os.getuid() != 0:
        folder.chmod(0o555)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare(1): no folder this process cannot write")
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && '
              'touch "$1/probe" 2>/dev/null && exit 9; exec "$@"')
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                        "sh", str(folder), *cmd], capture_output=True, text=True, timeout=120)
    if p.returncode == 9 or "mount:" in p.stderr or "unshare:" in p.stderr:
        pytest.skip(f"no read-only bind mount here: {p.stderr.strip()[:200]}")
    return p


def test_a_large_file_in_a_folder_the_reader_cannot_write_loads():
    folder = Path(tempfile.mkdtemp(prefix="ro-baseline-"))
    try:
        (folder / "bench.yaml").write_text(
            yaml.safe_dump(baseline_load.baseline(50), sort_keys=False))
        p = _read_only_load(folder)
        assert p.returncode == 0 and p.stdout.split() == ["2"], p.stderr[-2000:]
        assert os.listdir(folder) == ["bench.yaml"]
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


@pytest.mark.parametrize("damage", [
    lambda t: t.replace("sha256:", "sha256:0", 1),      # another text's copy
    lambda t: t[:len(t) // 2],                          # cut short
    lambda t: t.replace('"s', '"x', 1),                 # a key in no known type
])
def test_a_copy_not_of_this_text_or_damaged_is_ignored(written, damage):
    first = baselines.store.load(written)
    copy = baselines.cache.copy_path(written)
    copy.write_text(damage(copy.read_text()))
    assert baselines.cache.read(written, written.read_text()) is None
    assert baselines.store.load(written) == first


@pytest.mark.parametrize("edit, says", [
    (lambda d: d["sPartitionCase"]["snid00000"]["sc00"]["srate"].__setitem__(0, -1.0),
     "is not a positive number"),
    (lambda d: d["sPartitionCase"].__setitem__("s$index", 7), "not a list of attribute names"),
    (lambda d: d["s_samples"]["sPartitionCase"].pop("snid00000"), "holds less than"),
])
def test_a_copy_is_checked_as_the_file_is(written, edit, says):
    """A copy planted with the file's digest (or left by an older writer whose checks were
    fewer) is refused in one line, as the same content in the YAML would be."""
    copy = baselines.cache.copy_path(written)
    head, body = copy.read_text().split("\n", 1)
    data = json.loads(body)
    edit(data)
    copy.write_text(head + "\n" + json.dumps(data))
    with pytest.raises(PlacementError, match=says):
        baselines.store.load(written)


def test_an_edited_file_is_read_and_checked_again(written):
    baselines.store.load(written)
    written.write_text(written.read_text() + "PartitionCase: {}\n")
    with pytest.raises(PlacementError, match="a key given twice"):
        baselines.store.load(written)


def test_the_cyclic_collector_runs_again_after_a_load_read_or_refused(written):
    import gc
    baselines.store.load(written)
    assert gc.isenabled()
    written.write_text("a: &x 1\n")
    with pytest.raises(PlacementError, match="anchors and aliases"):
        baselines.store.load(written)
    assert gc.isenabled()
