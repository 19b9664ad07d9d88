"""The shape of a reference file, checked before any value in it is read.

ReFrame looks a case's reference up through the test's ``$index``: a list of attribute
names, one mapping level per name, then ``{perfvar: [value, lower, upper, unit]}``. A
hand edit that breaks the shape (``$index: 7``, a list of lists, a mapping where a
reference belongs) used to end in a traceback, or worse, in entries that no walk over
the tree finds and that vanish on the next ``baseline record``. Each is one line naming
where in the file the shape breaks; what the file holds there is never quoted (a
crafted value can be megabytes long).
"""

from __future__ import annotations

from typing import Any

from ...util import PlacementError

#: the key under which a reference file keeps its sessions' launches
SAMPLES_KEY = "_samples"

#: what a key below a test can be: an index value (ReFrame looks entries up with the
#: attribute's own value, so numbers stay numbers)
_KEY_TYPES = (str, int, float, bool)
#: the most index attributes a test names; no test of this project has more than eight
MAX_INDEX = 32


def _fail(where: str, at: str, why: str) -> PlacementError:
    return PlacementError(f"{where}: {at}: {why}; fix it or record again (`placement baseline "
                          "record --replace`), nothing was written")


def check(data: dict[str, Any], where: str) -> None:
    """One line when a test's entry is not the tree its ``$index`` describes; ``_``-keys
    (provenance, runs, control value) are checked by their own readers."""
    for test, node in data.items():
        if not isinstance(test, str):
            raise _fail(where, f"top-level key of type {type(test).__name__}",
                        "a top-level key is a test class name")
        if test.startswith("_"):
            continue
        at = test_name(test)
        if not isinstance(node, dict):
            raise _fail(where, at, f"a {type(node).__name__}, not a mapping of index "
                                   "values to references")
        depth = index_depth(node.get("$index", []), where, at)
        _walk(node, where, at, depth)


def index_depth(index: Any, where: str, at: str) -> int:
    """The levels below a test (or its runs) that its ``$index`` names (1 without one:
    ReFrame's ``system:partition`` level); a malformed ``$index`` is one line."""
    if index is None:
        index = []
    if (not isinstance(index, list) or len(index) > MAX_INDEX
            or not all(isinstance(a, str) and a for a in index)):
        raise _fail(where, f"{at}.$index", "not a list of attribute names (expected "
                                           f"[name, ...], at most {MAX_INDEX} names)")
    if len(set(index)) != len(index):
        raise _fail(where, f"{at}.$index", "names an attribute twice")
    return len(index) or 1


def _walk(node: dict, where: str, at: str, depth: int) -> None:
    """Every path ``depth`` mappings deep ends in a reference list, and nowhere sooner."""
    stack: list[tuple[dict, str, int]] = [(node, at, 0)]
    while stack:
        n, path, level = stack.pop()
        for k, v in n.items():
            if k == "$index" and level == 0:
                continue
            here = f"{path}.{_short(k)}"
            if not isinstance(k, _KEY_TYPES):
                raise _fail(where, here, "a key is an index value (text or a number)")
            if level == depth:
                if not isinstance(v, list) or len(v) > 4:
                    raise _fail(where, here, "not a reference [value, lower, upper, unit] "
                                             f"at this depth (the $index names {depth} levels)")
            elif isinstance(v, dict):
                stack.append((v, here, level + 1))
            else:
                raise _fail(where, here, f"a {type(v).__name__} where the $index (of {depth} "
                                         "levels) needs a mapping of index values")


def _short(key: Any) -> str:
    """A key as the error names it, cut short: a crafted key can be a 400-digit number."""
    if isinstance(key, int) and not isinstance(key, bool) and not -10**30 < key < 10**30:
        return "<a number of over 30 digits>"
    text = str(key) if isinstance(key, _KEY_TYPES) else f"<a {type(key).__name__}>"
    return text if len(text) <= 40 else text[:37] + "..."


def test_name(key: Any) -> str:
    """A top-level key as an error names it. A test class name is a Python name; any other
    key is not quoted: a file copied or linked from elsewhere (a password file reads as keys
    of null values) would have a line of it printed."""
    if isinstance(key, str) and key.isidentifier() and len(key) <= 80:
        return key
    return "<a key that is not a test class name>"


def cut(name: str, limit: int = 160) -> str:
    """An entry's name as an error prints it, cut to ``limit`` characters: its index values
    are the file's keys, and a crafted one can be megabytes long."""
    return name if len(name) <= limit else name[:limit - 3] + "..."


def short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error names a value, never quotes a
    crafted one whole (a 400-digit number, a megabyte of text)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
