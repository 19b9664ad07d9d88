"""The Spack spec of a program, from Spack's own metadata (a real spec.json).

tests/fixtures/spack/placement-kernels.spec.json is the spec.json Spack 1.1
wrote when it installed this project's kernels from config/spack-repo.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from placement.util import spack_spec

SPEC = Path(__file__).parent / "fixtures" / "spack" / "placement-kernels.spec.json"
LINE = "placement-kernels@main %gcc@12.2.0 arch=linux-debian12-x86_64_v2 /usterrk"


def _prefix(tmp: Path) -> Path:
    prefix = tmp / "opt" / "placement-kernels-main-usterrk"
    (prefix / "bin").mkdir(parents=True)
    (prefix / ".spack").mkdir()
    shutil.copy(SPEC, prefix / ".spack" / "spec.json")
    (prefix / "bin" / "matmul").write_text("")
    return prefix


def test_program_in_an_install_prefix(tmp_path):
    prefix = _prefix(tmp_path)
    assert spack_spec.of_program(prefix / "bin" / "matmul", "placement-kernels") == LINE


def test_program_in_a_view_symlinked_or_copied(tmp_path):
    prefix = _prefix(tmp_path)
    view = tmp_path / "view"
    (view / "bin").mkdir(parents=True)
    (view / "bin" / "matmul").symlink_to(prefix / "bin" / "matmul")
    assert spack_spec.of_program(view / "bin" / "matmul", "placement-kernels") == LINE
    copied = tmp_path / "copy-view"
    (copied / "bin").mkdir(parents=True)
    (copied / ".spack" / "placement-kernels").mkdir(parents=True)
    shutil.copy(SPEC, copied / ".spack" / "placement-kernels" / "spec.json")
    (copied / "bin" / "matmul").write_text("")
    assert spack_spec.of_program(copied / "bin" / "matmul", "placement-kernels") == LINE


def test_not_from_spack_or_unreadable(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "bt.S.x").write_text("")
    assert spack_spec.of_program(tmp_path / "bin" / "bt.S.x", "npb") == ""
    (tmp_path / ".spack").mkdir()
    (tmp_path / ".spack" / "spec.json").write_text("{ not json")
    assert spack_spec.of_program(tmp_path / "bin" / "bt.S.x", "npb") == ""
