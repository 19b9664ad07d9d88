"""The command line and an acceptance run work with exactly what the Spack recipes declare.

No Spack needed: a venv is built from PyPI with the run dependencies of the default specs
of the project's ``py-placement`` and ``reframe`` recipes alone (read from their
package.py; no variants, so no matplotlib and no polars, no test dependencies), the
package installed with ``--no-deps`` the way the recipe installs it, and ReFrame 4.10.4's
sdist/wheel with ``--no-deps``. That is the Python of a Spack view. In it, with nothing
of .venv on PATH: ``placement --help``, ``placement maps``, and two acceptance runs of
one throw-away check, the second compared with the first through ReFrame's results
storage (which ReFrame without polars refuses unless
:mod:`placement.util.storage_without_polars` lets it). A dependency the package
imports and the recipe lacks fails here on any machine. pip's cache is reused.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rate_checks import RATE_CASE
from recipe_deps import ROOT, default_python_deps

pytestmark = pytest.mark.reframe

REFRAME_VERSION = "4.10.4"
CHECK = RATE_CASE + '''

@rfm.simple_test
class RecipeVenvCheck(RateCase):
    executable = 'echo'
    executable_opts = ['rate=100']
'''
SUMMARY = re.compile(r"^ACCEPTANCE generic quick: .*$", re.M)


def _requirements() -> list[str]:
    """pip requirements of both recipes' default specs (run dependencies; py-placement's
    build backend too, as Spack builds it without isolation)."""
    reqs = [d.pypi() for d in default_python_deps("py_placement", ("run", "build"))]
    reqs += [d.pypi() for d in default_python_deps("reframe", ("run",))]
    return sorted(set(reqs))


def _pip(venv: Path, *args: str) -> None:
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--no-compile", *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"pip install {' '.join(args)}:\n{r.stderr[-3000:]}"


def _package_copy(where: Path) -> Path:
    """pyproject.toml, README.md and src/placement, as the recipe copies them to its stage."""
    where.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, where / name)
    shutil.copytree(ROOT / "src" / "placement", where / "src" / "placement",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "build-*"))
    return where


@pytest.fixture(scope="module")
def recipe_venv(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("recipe-venv")
    venv = base / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)],
                   check=True, timeout=300)
    _pip(venv, *_requirements())
    _pip(venv, "--no-deps", "--no-build-isolation", str(_package_copy(base / "pkg")),
         f"reframe-hpc=={REFRAME_VERSION}")
    return venv


def _env(venv: Path, tmp: Path) -> dict:
    """The view's situation: the venv's bin/ first, nothing of the checkout's .venv."""
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not p.startswith(str(ROOT / ".venv"))]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH=os.pathsep.join([str(venv / "bin"), *keep]), REFRAME=str(venv / "bin" / "reframe"),
               PLACEMENT_RESULTS=str(tmp / "results"), PLACEMENT_REPORTS=str(tmp / "reports"))
    return env


def _run(cmd: list[str], env: dict, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_venv_has_only_the_recipes(recipe_venv):
    r = _run([str(recipe_venv / "bin" / "python"), "-c",
              "import importlib.util as u; print([m for m in ('polars', 'matplotlib', 'pytest') "
              "if u.find_spec(m)])"], os.environ)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_the_command_line_runs(recipe_venv, tmp_path):
    env = _env(recipe_venv, tmp_path)
    placement = str(recipe_venv / "bin" / "placement")
    for args in (["--help"], ["maps", "--topology", "topologies/xeon-e5620.xml", "--threads", "4",
                               "--strategy", "scatter"], ["report", "--help"]):
        r = _run([placement, *args], env)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr[-2000:])
    assert "report" in _run([placement, "--help"], env).stdout


def test_site_new_finds_the_checkout(recipe_venv, tmp_path):
    """Installed apart from the checkout (as in a Spack view), ``placement site new`` finds
    config/ and reframe_tests/ from where it runs, and the node is READY."""
    env = {**_env(recipe_venv, tmp_path), "PLACEMENT_SYSTEMS": str(tmp_path / "systems")}
    (tmp_path / "systems").mkdir()
    r = _run([str(recipe_venv / "bin" / "placement"), "site", "new", "recipesite",
              "--scheduler", "local"], env, timeout=600)
    assert r.returncode == 0 and "NODE READY recipesite" in r.stdout, \
        (r.stdout + r.stderr)[-3000:]
    assert (tmp_path / "systems" / "recipesite.py").is_file()


def test_two_acceptance_runs_compare(recipe_venv, tmp_path):
    """The second run is compared with the first (no ``not compared``) and reported."""
    env = _env(recipe_venv, tmp_path)
    check = tmp_path / "recipe_venv_check.py"
    check.write_text(CHECK)
    lines = []
    for _ in range(2):
        r = _run([str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick", "-s", "generic", "--",
                  "-c", str(check), "--prefix", str(tmp_path / "rfm")], env, timeout=600)
        m = SUMMARY.search(r.stdout)
        assert m, r.stdout[-3000:] + r.stderr[-3000:]
        lines.append(m.group(0))
        assert "Traceback" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]
    assert "first run of generic/quick" in lines[0], lines[0]
    assert lines[1].startswith("ACCEPTANCE generic quick: PASS 1 passed, 0 failed"), lines[1]
    assert "not compared" not in lines[1] and "report failed" not in lines[1], lines[1]
    compare = sorted((tmp_path / "results" / "runs").glob("compare-acceptance-*.csv"))
    assert compare and "RecipeVenvCheck" in compare[-1].read_text(), compare
