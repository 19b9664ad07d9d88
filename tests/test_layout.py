"""The package's layout: groups by pipeline stage, each entered through one front door.

``src/placement`` is split into groups (``util``, ``engine``, ``checks``,
``judgement``, ``npb``, ``report``, ``acceptance``, ``testlib``, ``cli``). The rules,
read from the source with :mod:`ast` (every import counts, also one inside a function,
because a lazy import still ties the two modules together):

* no import circle between modules, and none between groups;
* a module imports another group only through its front door: ``from placement.G
  import name`` (or ``from ..G import name``) where ``name`` is in ``G.__all__`` (a
  public submodule or a name the ``__init__`` re-exports); never ``placement.G.mod``;
* no name starting with ``_`` crosses a group's border.

The package root (``placement``: ``__version__``, ``__main__``) belongs to no group.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "placement"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py")}
GROUPS = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").is_file())


def group(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in GROUPS else None


def exported(grp: str) -> set[str]:
    """The names in a group's ``__all__`` (its front door)."""
    tree = ast.parse((PKG / grp / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def imports(mod: str) -> list[tuple[str, str | None, int]]:
    """``(module imported from, name or None, line)`` for every import in ``mod``."""
    path = MODULES[mod]
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names
                     if a.name.split(".")[0] == "placement"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            if src.split(".")[0] == "placement":
                out += [(src, a.name, node.lineno) for a in node.names]
    return out


def edges() -> dict[str, set[str]]:
    """Module -> modules it imports (a submodule named in ``from pkg import sub`` is the
    submodule itself, so a package's ``__init__`` is not a false hop in a circle)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for mod in MODULES:
        for src, name, _ in imports(mod):
            target = f"{src}.{name}" if name and f"{src}.{name}" in MODULES else src
            if target in MODULES and target != mod:
                graph[mod].add(target)
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle in ``graph``, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_the_groups_are_the_ones_the_architecture_page_draws():
    text = (SRC.parent / "docs" / "architecture.md").read_text()
    for g in GROUPS:
        assert f"placement.{g}" in text, g
    assert not [p.name for p in PKG.glob("*.py")
                if p.name not in ("__init__.py", "__main__.py")], "a module outside any group"


def test_no_import_circle_between_modules():
    assert cycle(edges()) is None


def test_no_import_circle_between_groups():
    graph: dict[str, set[str]] = {g: set() for g in GROUPS}
    for mod, targets in edges().items():
        for t in targets:
            if group(mod) and group(t) and group(mod) != group(t):
                graph[group(mod)].add(group(t))
    assert cycle(graph) is None


def crossings():
    for mod in sorted(MODULES):
        for src, name, line in imports(mod):
            g, h = group(mod), group(src)
            if h and g != h and not (src == "placement" or group(mod) is None and h is None):
                yield mod, src, name, line


@pytest.mark.parametrize("mod,src,name,line", list(crossings()))
def test_other_groups_come_in_through_the_front_door(mod, src, name, line):
    where = f"{mod}:{line}"
    h = group(src)
    assert src == f"placement.{h}", f"{where} reaches past placement.{h}'s front door: {src}"
    assert name and name in exported(h), f"{where}: {name} is not in placement.{h}.__all__"
    assert not name.startswith("_"), f"{where} imports a private name {name} from {h}"


def test_front_doors_export_only_what_they_have():
    for g in GROUPS:
        init = PKG / g / "__init__.py"
        defined = {a.asname or a.name for n in ast.walk(ast.parse(init.read_text()))
                   if isinstance(n, ast.ImportFrom) for a in n.names}
        for name in exported(g):
            assert name in defined or f"placement.{g}.{name}" in MODULES, (g, name)
            assert not name.startswith("_"), (g, name)


# The rooms of placement.judgement: one package per concept, stacked. A room imports only
# the rooms below it (and rules, the settings every room reads); no name starting with ``_``
# crosses a room's border; other groups come in through placement.judgement's front door
# (the rules above), which exports the rooms.
JUDGEMENT = PKG / "judgement"
ROOM_ORDER = ("reading", "verdict", "peers", "baselines", "repeats")
ROOMS = sorted(p.name for p in JUDGEMENT.iterdir() if (p / "__init__.py").is_file())


def room(mod: str) -> str | None:
    parts = mod.split(".")
    if len(parts) > 2 and parts[1] == "judgement":
        return parts[2]         # a room, or a flat module such as rules
    return None


def test_the_rooms_are_the_declared_ones_and_the_front_door_names_them():
    assert tuple(sorted(ROOM_ORDER)) == tuple(ROOMS)
    flat = sorted(p.stem for p in JUDGEMENT.glob("*.py") if p.name != "__init__.py")
    assert flat == ["rules"], f"a module of placement.judgement outside any room: {flat}"
    assert set(ROOMS) | {"rules"} <= exported("judgement")


def room_imports():
    for mod in sorted(MODULES):
        here = room(mod)
        if here not in ROOMS:
            continue
        for src, name, line in imports(mod):
            target = f"{src}.{name}" if name and f"{src}.{name}" in MODULES else src
            there = room(target)
            if there in ROOMS and there != here:
                yield mod, here, there, name, line


@pytest.mark.parametrize("mod,here,there,name,line", list(room_imports()))
def test_a_room_imports_only_the_rooms_below_it(mod, here, there, name, line):
    assert ROOM_ORDER.index(there) < ROOM_ORDER.index(here), (
        f"{mod}:{line}: room {here} imports room {there}, which stands above it "
        f"(rooms, lowest first: {', '.join(ROOM_ORDER)})")
    assert not (name or "").startswith("_"), f"{mod}:{line} imports a private name {name}"


def test_each_rooms_front_door_exports_only_what_it_has():
    for r in ROOMS:
        tree = ast.parse((JUDGEMENT / r / "__init__.py").read_text())
        names = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                     and any(getattr(t, "id", None) == "__all__" for t in n.targets))
        for name in names:
            assert f"placement.judgement.{r}.{name}" in MODULES, (r, name)
        modules = {p.stem for p in (JUDGEMENT / r).glob("*.py") if p.name != "__init__.py"}
        assert modules == set(names), f"room {r}: every module is named at its front door"
