"""The committed spack.lock matches spack.yaml, and scripts/spack-mirror.py's offline parts.

No Spack needed: the lock is JSON and spack.yaml is YAML. A lock left behind by
an edit of spack.yaml (a root added, as py-placement once was) or concretized
in some machine's checkout (an absolute dev_path) fails here; regenerate it
with scripts/spack-lock.sh.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SPACK_VERSION = "1.1.0"  # the version spack.yaml's header names


def _default_roots(manifest: dict) -> list[str]:
    """The user specs of the default environment (no PLACEMENT_* variable set).

    Spack concatenates the definitions of one name whose `when:` holds; `when`
    is evaluated with `env` the process environment, empty here.
    """
    defs: dict[str, list[str]] = {}
    for entry in manifest["definitions"]:
        when = entry.get("when", "True")
        items = {k: v for k, v in entry.items() if k != "when"}
        if eval(when, {"__builtins__": {}}, {"env": {}}):  # noqa: S307 (our own file)
            for name, specs in items.items():
                defs.setdefault(name, []).extend(specs)
    roots: list[str] = []
    for spec in manifest["specs"]:
        roots.extend(defs[spec[1:]] if spec.startswith("$") else [spec])
    return roots


def _norm(spec: str) -> tuple:
    """A spec string up to the order Spack writes variants and their values in."""
    name, *rest = spec.split()
    tokens = []
    for tok in rest:
        key, sep, values = tok.partition("=")
        tokens.append(key + sep + ",".join(sorted(values.split(","))) if sep else tok)
    return (name, tuple(sorted(tokens)))


@pytest.fixture(scope="module")
def manifest() -> dict:
    return yaml.safe_load((ROOT / "spack.yaml").read_text())["spack"]


@pytest.fixture(scope="module")
def lock() -> dict:
    return json.loads((ROOT / "spack.lock").read_text())


def test_the_lock_roots_are_the_default_definitions(manifest, lock):
    want = sorted(_norm(s) for s in _default_roots(manifest))
    got = sorted(_norm(r["spec"]) for r in lock["roots"])
    assert got == want, "spack.lock is stale: regenerate it with scripts/spack-lock.sh"
    assert "py-placement@main" in [r["spec"] for r in lock["roots"]]


def test_the_lock_is_whole_and_of_the_spack_named(lock):
    assert lock["_meta"]["file-type"] == "spack-lockfile"
    assert lock["spack"]["version"] == SPACK_VERSION
    specs = lock["concrete_specs"]
    for root in lock["roots"]:
        assert root["hash"] in specs
    for spec in specs.values():
        for dep in spec.get("dependencies", []):
            assert dep["hash"] in specs, f"{spec['name']} -> {dep['name']} not in the lock"


def test_develop_paths_are_the_checkout_relative_ones(manifest, lock):
    want = {name: d["path"] for name, d in manifest["develop"].items()}
    got = {s["name"]: s["parameters"]["dev_path"] for s in lock["concrete_specs"].values()
           if "dev_path" in s.get("parameters", {})}
    assert got == want
    text = (ROOT / "spack.lock").read_text()
    assert not re.search(r'"dev_path":"/', text), "an absolute dev_path: a machine's checkout"


def test_python_is_the_sites_not_built(lock):
    py = [s for s in lock["concrete_specs"].values() if s["name"] == "python"]
    assert py and all("external" in s for s in py)


@pytest.mark.parametrize("name,package", [("py-clustershell", "py_clustershell"),
                                          ("py-pybind11", "py_pybind11"), ("meson", "meson")])
def test_the_pypi_sdist_recipes_are_the_locked_ones(lock, name, package):
    """The builtin recipes of these fetch GitHub archives: the lock must hold the project's
    recipe (namespace `placement`) at the version it gives a PyPI sdist, built, not external."""
    recipe = (ROOT / "config/spack-repo/spack_repo/placement/packages" / package / "package.py")
    preferred = re.findall(r'version\(\s*"([0-9.]+)",[^)]*preferred=True', recipe.read_text())
    assert len(preferred) == 1, f"{package}: one preferred version expected, got {preferred}"
    locked = [s for s in lock["concrete_specs"].values() if s["name"] == name]
    assert locked, f"{name} is not in spack.lock"
    for spec in locked:
        assert (spec["namespace"], spec["version"]) == ("placement", preferred[0]), \
            "spack.lock is stale: regenerate it with scripts/spack-lock.sh"
        assert "external" not in spec


def _setuptools_minimum(text: str, pattern: str) -> tuple[int, ...]:
    found = re.search(pattern, text)
    assert found, f"no setuptools minimum matching {pattern!r}"
    return tuple(int(x) for x in found.group(1).split("."))


def test_setuptools_minimum_is_one_and_the_lock_meets_it(lock):
    """pyproject's `license` string needs setuptools 77 (PEP 639): pip's build and
    Spack's must both ask for it. The recipe's directive is not in Spack's package
    hash, so raising it leaves the lock valid only while the locked version meets it."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    recipe = (ROOT / "config/spack-repo/spack_repo/placement/packages/py_placement/package.py").read_text()
    assert re.search(r'^license = "BSD-3-Clause"$', pyproject, re.M)
    pip_min = _setuptools_minimum(pyproject, r'requires = \["setuptools>=([0-9.]+)"\]')
    spack_min = _setuptools_minimum(recipe, r'depends_on\("py-setuptools@([0-9.]+):"')
    assert pip_min == spack_min >= (77,)
    locked = [tuple(int(x) for x in s["version"].split(".")[:3])
              for s in lock["concrete_specs"].values() if s["name"] == "py-setuptools"]
    assert locked and all(v >= spack_min for v in locked)


def test_the_stale_lock_fails(manifest):
    stale = ["likwid", "reframe@4.10.4", "mpi", "placement-kernels@main", "numactl",
             "npb@3.4.1 classes=A,B,C,S,W implementation=openmp names=bt,cg,ep,ft,is,lu,mg,sp",
             "hwloc"]
    assert sorted(map(_norm, stale)) != sorted(map(_norm, _default_roots(manifest)))


def _mirror():
    spec = importlib.util.spec_from_file_location("spack_mirror", ROOT / "scripts" / "spack-mirror.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["spack_mirror"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_mirror_layout_and_pypi_projects():
    m = _mirror()
    sha = "d76623373421df22fb4cf8817020cbb7ef15c725b9d5e45f17e189bfc384190f"
    assert m.archive_path(sha, "tar.gz") == f"_source-cache/archive/d7/{sha}.tar.gz"
    assert m.pypi_project("https://files.pythonhosted.org/packages/source/P/PyYAML/pyyaml-6.0.3.tar.gz") == "pyyaml"
    assert m.pypi_project("https://files.pythonhosted.org/packages/py3/w/wheel/wheel-0.45.1-py3-none-any.whl") == "wheel"
    assert m.pypi_project("https://github.com/pybind/pybind11/archive/refs/tags/v3.0.1.tar.gz") == ""


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "spack-mirror.py"), *args],
                          capture_output=True, text=True, timeout=30)


def test_mirror_bad_input_is_one_line_and_exit_2(tmp_path):
    for args in (["--file", "npb"], ["--file", f"npb={tmp_path}/absent.tar.gz"],
                 ["--sources", str(tmp_path / "absent.jsonl")]):
        res = _run(str(tmp_path / "m"), *args)
        assert res.returncode == 2, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    res = _run(str(tmp_path / "m"), "--sources", str(bad))
    assert res.returncode == 2 and "line 1" in res.stderr


def test_mirror_local_tarball_goes_under_the_recipes_checksum(tmp_path):
    tarball = tmp_path / "NPB3.4.1.tar.gz"
    tarball.write_bytes(b"not NASA's tarball")
    sha = "f3a43467da6e84a829ea869156d3ea86c17932136bb413a4b6dab23018a28881"
    rows = [{"name": "npb", "version": "3.4.1", "kind": "url",
             "url": "https://www.nas.nasa.gov/assets/npb/NPB3.4.1.tar.gz", "sha256": sha,
             "path": f"_source-cache/archive/f3/{sha}.tar.gz"},
            {"name": "py-clustershell", "version": "1.8.4", "kind": "url",
             "url": "https://github.com/cea-hpc/clustershell/archive/v1.8.4.tar.gz",
             "sha256": "7" * 64, "path": f"_source-cache/archive/77/{'7' * 64}.tar.gz"}]
    src = tmp_path / "sources.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = _run(str(tmp_path / "m"), "--sources", str(src), "--file", f"npb={tarball}")
    assert res.returncode == 1
    assert (tmp_path / "m" / rows[0]["path"]).read_bytes() == b"not NASA's tarball"
    assert "--no-checksum" in res.stdout
    assert "MISSING py-clustershell@1.8.4: a GitHub tarball" in res.stdout
    assert res.stdout.strip().splitlines()[-1].startswith("spack-mirror: 1 stored, 0 already there, 1 missing of 2")
