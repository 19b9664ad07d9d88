"""The Spack npb recipe's build phase on NPB's real Makefiles, without Spack.

Spack is not here, so the recipe's ``install`` cannot run; what it hands to make,
``Npb.suite_make_args`` (read from the recipe's source), runs on NPB's own source
tree instead. BT's Makefile uses ``${ver:3}``: where /bin/sh is dash (Debian,
Ubuntu), the builtin recipe's plain ``make suite`` stops with "Bad substitution"
and builds no BT, and the recipe's arguments build it.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

from placement import npb

from test_npb_build import TARBALL, needs_tarball

ROOT = Path(__file__).resolve().parents[1]
RECIPE = (ROOT / 'config' / 'spack-repo' / 'spack_repo' / 'placement' / 'packages' / 'npb'
          / 'package.py')


def recipe_make_args() -> tuple[str, ...]:
    """``Npb.suite_make_args`` as the recipe's source has it."""
    tree = ast.parse(RECIPE.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == 'Npb')
    for node in cls.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, 'targets', [])
        if any(getattr(t, 'id', None) == 'suite_make_args' for t in targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError('the npb recipe sets no suite_make_args')


def test_the_recipe_installs_with_its_make_args():
    source = RECIPE.read_text()
    assert 'make(*self.suite_make_args)' in source
    assert recipe_make_args() == ('suite', 'SHELL=/bin/bash')


@needs_tarball
def test_make_suite_builds_bt_only_under_bash_where_sh_is_dash(tmp_path):
    folder = npb.build.omp_folder(TARBALL)
    src = npb.build.unpack(TARBALL, folder, tmp_path)
    npb.build.configure(src, npb.build.find_compilers(), [('bt', 'S')])
    if os.path.realpath('/bin/sh').endswith('dash'):
        plain = subprocess.run(['make', 'suite'], cwd=src, capture_output=True, text=True,
                               timeout=1800)
        assert 'Bad substitution' in plain.stdout + plain.stderr
        assert not (src / 'bin' / 'bt.S.x').exists()
    proc = subprocess.run(['make', *recipe_make_args()], cwd=src, capture_output=True, text=True,
                          timeout=1800)
    assert (src / 'bin' / 'bt.S.x').is_file(), (proc.stdout + proc.stderr)[-3000:]
    assert 'Bad substitution' not in proc.stdout + proc.stderr
    shutil.rmtree(src)
