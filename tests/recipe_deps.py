"""What the project's Spack recipes declare, read from their package.py without Spack.

A recipe's ``depends_on`` calls are read with :mod:`ast` (the file imports Spack, so it is
never executed here): each dependency's name, version range, ``type`` (from the call or
from the ``with default_args(type=...)`` block around it) and ``when`` condition.
``tests/test_spack_recipe.py`` holds them against pyproject.toml and
``tests/test_recipe_venv.py`` installs them from PyPI into a venv of their own.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ROOT / "config" / "spack-repo" / "spack_repo" / "placement" / "packages"


@dataclass(frozen=True)
class Dependency:
    """One ``depends_on("name@versions", type=..., when=...)`` of a recipe."""

    name: str
    versions: str          # Spack's range without '@' ("6:", "1.8:", "" for any)
    types: tuple[str, ...]
    when: str | None

    def pypi(self) -> str:
        """The PyPI requirement for a ``py-`` dependency: ``py-numpy@1.22:`` -> ``numpy>=1.22``."""
        if not self.name.startswith("py-"):
            raise ValueError(f"{self.name} is not a Python package")
        return self.name[3:] + pip_range(self.versions)


def pip_range(versions: str) -> str:
    """Spack's ``a:``, ``a:b``, ``:b`` or ``=a`` as pip's specifier ("" for any version)."""
    if not versions:
        return ""
    if versions.startswith("="):
        return f"=={versions[1:]}"
    if ":" not in versions:
        return f"=={versions}.*"
    low, high = versions.split(":", 1)
    parts = ([f">={low}"] if low else []) + ([f"<={high}.99999"] if high else [])
    return ",".join(parts)


def _literal(node: ast.AST | None):
    return ast.literal_eval(node) if node is not None else None


def _types(value) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value or ("build", "link"))


class _Reader(ast.NodeVisitor):
    """Collects depends_on calls, with the type of an enclosing default_args block."""

    def __init__(self) -> None:
        self.deps: list[Dependency] = []
        self._default_type: list = []

    def visit_With(self, node: ast.With) -> None:
        types = [kw.value for item in node.items if isinstance(item.context_expr, ast.Call)
                 and getattr(item.context_expr.func, "id", "") == "default_args"
                 for kw in item.context_expr.keywords if kw.arg == "type"]
        self._default_type.append(_literal(types[0]) if types else None)
        self.generic_visit(node)
        self._default_type.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if getattr(node.func, "id", "") == "depends_on":
            kw = {k.arg: k.value for k in node.keywords}
            spec = _literal(node.args[0])
            name, _, versions = spec.partition("@")
            default = next((t for t in reversed(self._default_type) if t), None)
            self.deps.append(Dependency(name, versions,
                                        _types(_literal(kw.get("type")) or default),
                                        _literal(kw.get("when"))))
        self.generic_visit(node)


def dependencies(package: str) -> list[Dependency]:
    """Every depends_on of config/spack-repo's PACKAGE (e.g. "py_placement")."""
    reader = _Reader()
    reader.visit(ast.parse((PACKAGES / package / "package.py").read_text()))
    return reader.deps


def variants(package: str) -> set[str]:
    """The names of PACKAGE's variant() directives."""
    tree = ast.parse((PACKAGES / package / "package.py").read_text())
    return {_literal(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call)
            and getattr(n.func, "id", "") == "variant"}


def default_python_deps(package: str, kinds: tuple[str, ...] = ("run",)) -> list[Dependency]:
    """The ``py-`` dependencies of PACKAGE's default spec (no ``when``) of any type in KINDS."""
    return [d for d in dependencies(package) if d.name.startswith("py-") and d.when is None
            and set(d.types) & set(kinds)]


def normalise(name: str) -> str:
    """PEP 503's normal form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()
