"""scripts/spack-mirror.py and the start of scripts/spack-npb.sh / spack-site.sh on bad input.

No Spack needed: the mirror script reads `--sources` (what Spack would say), and the two
shell scripts check their mirror path and NPB's source before they look for Spack. Each
refusal is one line and exit 2; a stored source is readable by a site's other users.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NPB_SHA = "f3a43467da6e84a829ea869156d3ea86c17932136bb413a4b6dab23018a28881"
RECIPES = ROOT / "config" / "spack-repo" / "spack_repo" / "placement" / "packages"


def _mirror(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "spack-mirror.py"), *args],
                          capture_output=True, text=True, timeout=30)


def _one_line_exit_2(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


def _npb_row(path: str | None = None) -> dict:
    return {"name": "npb", "version": "3.4.1", "kind": "url",
            "url": "https://www.nas.nasa.gov/assets/npb/NPB3.4.1.tar.gz", "sha256": NPB_SHA,
            "path": path or f"_source-cache/archive/f3/{NPB_SHA}.tar.gz"}


def _sources(tmp: Path, *rows: dict) -> Path:
    src = tmp / "sources.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return src


def test_stored_sources_are_readable_by_all(tmp_path):
    tarball = tmp_path / "NPB3.4.1.tar.gz"
    tarball.write_bytes(b"another pack of NPB 3.4.1")
    old = os.umask(0o077)  # even under a strict umask: the mirror is shared
    try:
        res = _mirror(str(tmp_path / "m"), "--sources", str(_sources(tmp_path, _npb_row())),
                      "--file", f"npb={tarball}")
    finally:
        os.umask(old)
    assert res.returncode == 0, res.stdout + res.stderr
    stored = tmp_path / "m" / _npb_row()["path"]
    assert stat.S_IMODE(stored.stat().st_mode) == 0o644
    assert "install with --no-checksum" in res.stdout  # not NASA's tarball, and said


def test_a_tarball_that_is_not_the_recipes_is_unchecked_alone(tmp_path):
    """The mirror names the one spec to install with --no-checksum, and the make targets'
    install (scripts/spack-env-copy.sh) reads that spec, and only it, from its output."""
    tarball = tmp_path / "NPB3.4.1.tar.gz"
    tarball.write_bytes(b"another pack of NPB 3.4.1")
    sha = hashlib.sha256(b"pyyaml").hexdigest()
    pyyaml = {"name": "py-pyyaml", "version": "6.0.3", "kind": "url",
              "url": "https://www.nas.nasa.gov/pyyaml.tar.gz", "sha256": sha,
              "path": f"_source-cache/archive/{sha[:2]}/{sha}.tar.gz"}
    (tmp_path / "m" / pyyaml["path"]).parent.mkdir(parents=True)
    (tmp_path / "m" / pyyaml["path"]).write_bytes(b"pyyaml")  # the recipe's file: checked
    res = _mirror(str(tmp_path / "m"), "--sources", str(_sources(tmp_path, _npb_row(), pyyaml)),
                  "--file", f"npb={tarball}")
    assert "that spec alone: spack -e " in res.stdout
    assert res.stdout.count("install --no-checksum npb") == 1
    log = tmp_path / "mirror.log"
    log.write_text(res.stdout)
    names = subprocess.run(["bash", "-c", '. "$1" && unchecked_specs "$2"', "-",
                            str(ROOT / "scripts" / "spack-env-copy.sh"), str(log)],
                           capture_output=True, text=True, timeout=30)
    assert names.stdout.split() == ["npb"], (res.stdout, names.stderr)


def test_a_source_in_the_mirror_that_is_not_the_recipes_file_is_said(tmp_path):
    stored = tmp_path / "m" / _npb_row()["path"]
    stored.parent.mkdir(parents=True)
    stored.write_bytes(b"another pack of NPB 3.4.1")
    res = _mirror(str(tmp_path / "m"), "--sources", str(_sources(tmp_path, _npb_row())))
    assert res.returncode == 0
    assert "npb@3.4.1: " in res.stdout and "is another file" in res.stdout
    assert res.stdout.strip().splitlines()[-1].endswith(
        "1 not the recipe's file (install with --no-checksum)")


@pytest.mark.parametrize("path", ["../../outside.tar.gz", f"/tmp/{NPB_SHA}.tar.gz",
                                  f"_source-cache/archive/f3/../../../{NPB_SHA}.tar.gz",
                                  f"_source-cache/archive/00/{NPB_SHA}.tar.gz"])
def test_a_sources_path_outside_the_layout_is_refused(tmp_path, path):
    line = _one_line_exit_2(_mirror(str(tmp_path / "m"), "--sources",
                                    str(_sources(tmp_path, _npb_row(path)))))
    assert "sources line 1: path" in line
    assert not (tmp_path / "outside.tar.gz").exists()
    assert not (tmp_path / "m").exists() or not any((tmp_path / "m").rglob("*.tar.gz"))


def test_sources_must_be_a_regular_file_of_bounded_size(tmp_path):
    assert "not a regular file" in _one_line_exit_2(
        _mirror(str(tmp_path / "m"), "--sources", "/dev/zero"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a regular file" in _one_line_exit_2(  # no hang: the FIFO is never opened
        _mirror(str(tmp_path / "m"), "--sources", str(fifo)))
    big = tmp_path / "big.jsonl"
    with big.open("wb") as f:
        f.truncate(9 << 20)
    assert "bytes, more than" in _one_line_exit_2(
        _mirror(str(tmp_path / "m"), "--sources", str(big)))
    assert "not a source record" in _one_line_exit_2(
        _mirror(str(tmp_path / "m"), "--sources", str(_sources(tmp_path, [1]))))


def test_a_mirror_path_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "m").write_text("")
    assert "not a folder" in _one_line_exit_2(
        _mirror(str(tmp_path / "m"), "--sources", str(_sources(tmp_path, _npb_row()))))


def _script(name: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "scripts" / name), *args], capture_output=True,
                          text=True, timeout=30, env={**os.environ, **env})


@pytest.mark.parametrize("name", ["spack-npb.sh", "spack-site.sh"])
def test_script_with_a_mirror_path_that_is_a_file_is_exit_2(tmp_path, name):
    (tmp_path / "mirror").write_text("")
    line = _one_line_exit_2(_script(name, str(tmp_path / "mirror")))
    assert "mirror" in line and "is not a folder" in line
    assert list(tmp_path.iterdir()) == [tmp_path / "mirror"]


@pytest.mark.parametrize("name", ["spack-npb.sh", "spack-site.sh"])
def test_script_takes_npb_from_the_mirror_when_no_tarball_is_given(tmp_path, name):
    absent = str(tmp_path / "absent.tar.gz")
    line = _one_line_exit_2(_script(name, str(tmp_path / "mirror"), NPB_TARBALL=absent))
    assert "no NPB tarball" in line and "no NPB source in" in line
    npb = tmp_path / "mirror" / "_source-cache" / "archive" / "f3" / f"{NPB_SHA}.tar.gz"
    npb.parent.mkdir(parents=True)
    npb.write_bytes(b"NPB")
    res = _script(name, str(tmp_path / "mirror"), NPB_TARBALL=absent,
                  PATH=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                       if not (Path(p) / "spack").exists()))
    line = _one_line_exit_2(res)  # past NPB, on to the next check
    assert "no NPB tarball" not in line and "spack is not on PATH" in line


def test_the_scripts_know_the_npb_checksum_the_doc_names():
    text = (ROOT / "scripts" / "spack-env-copy.sh").read_text()
    assert f"NPB_SHA256={NPB_SHA}" in text
    assert NPB_SHA in (ROOT / "docs" / "howto" / "spack.md").read_text()


@pytest.mark.parametrize("package,project", [("py_clustershell", "ClusterShell"),
                                             ("py_pybind11", "pybind11"), ("meson", "meson")])
def test_recipes_for_github_sources_give_the_pypi_sdist(package, project):
    """The builtin recipes of these fetch GitHub archives; the project's name the PyPI sdist
    with its own sha256, so the mirror script fetches them and Spack checks them."""
    text = (RECIPES / package / "package.py").read_text()
    found = re.findall(r'version\(\s*"([0-9.]+)",\s*sha256="([0-9a-f]{64})",\s*url="([^"]+)"',
                       text)
    assert found, f"{package}: no version with sha256 and url"
    for ver, _sha, url in found:
        assert url == (f"https://files.pythonhosted.org/packages/source/{project[0]}/"
                       f"{project}/{project}-{ver}.tar.gz")
