"""py-placement's Spack recipe declares what pyproject.toml requires, read from both files.

No Spack needed. A dependency added to pyproject.toml and not to the recipe (as
markdown-it-py once was) leaves a Spack view whose ``placement`` stops with
``ModuleNotFoundError``; this fails first. Optional extras that a site installs
(``reports``) are variants of the same name, their dependencies under ``when="+NAME"``;
the developers' extras (``test``, ``docs``) are no part of the recipe.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from recipe_deps import ROOT, default_python_deps, dependencies, normalise, variants

#: pyproject.toml extras for developing the project, not for a site's installation
DEVELOPER_EXTRAS = {"test", "docs"}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:>=\s*([0-9][0-9.]*))?")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _requirements(reqs: list[str]) -> dict[str, str]:
    """``numpy>=1.22`` -> {"py-numpy": "1.22:"} (Spack's name and range)."""
    out = {}
    for req in reqs:
        m = _REQUIREMENT.match(req)
        assert m, f"pyproject.toml: cannot read requirement {req!r}"
        out["py-" + normalise(m.group(1))] = f"{m.group(2)}:" if m.group(2) else ""
    return out


def _recipe(when: str | None) -> dict[str, str]:
    return {d.name: d.versions for d in dependencies("py_placement")
            if d.name.startswith("py-") and "run" in d.types and d.when == when}


def test_every_dependency_is_in_the_recipe():
    wanted = _requirements(_pyproject()["dependencies"])
    have = _recipe(None)
    missing = sorted(set(wanted) - set(have))
    assert not missing, f"py-placement's package.py lacks run dependencies {missing} of pyproject.toml"
    extra = sorted(set(have) - set(wanted))
    assert not extra, f"py-placement's package.py has run dependencies {extra} pyproject.toml lacks"
    bounds = {n: (wanted[n], have[n]) for n in wanted if wanted[n] != have[n]}
    assert not bounds, f"lower bounds differ (pyproject.toml, package.py): {bounds}"


@pytest.mark.parametrize("extra", sorted(set(_pyproject()["optional-dependencies"])
                                          - DEVELOPER_EXTRAS))
def test_every_site_extra_is_a_variant(extra):
    assert extra in variants("py_placement"), f"no variant '{extra}' in py-placement's recipe"
    wanted = _requirements(_pyproject()["optional-dependencies"][extra])
    have = _recipe(f"+{extra}")
    assert wanted == have, f"+{extra}: pyproject.toml {wanted}, package.py {have}"


def test_the_default_spec_is_the_dependencies_alone():
    """What tests/test_recipe_venv.py installs: the default spec's run dependencies."""
    names = {d.name for d in default_python_deps("py_placement")}
    assert names == set(_requirements(_pyproject()["dependencies"]))
