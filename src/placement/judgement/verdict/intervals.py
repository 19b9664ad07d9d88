"""The intervals ReFrame reads from a reference file, flattened.

Both the file's writer (:mod:`.baselines`) and the samples' judge
(:mod:`placement.judgement.baselines.samples`) read them; they live here so neither of the two
has to import the other for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

#: one value of one test case: (test class, index values, performance variable)
Entry = tuple[str, tuple, str]

#: the parameters in which a value's siblings differ from it: the compiler and the placement
#: (affinity map, memory policy). Siblings run the same kernel with the same threads on the
#: same node, so a state of the node one of them shows is one the others can fall into
SIBLING_PARAMS = frozenset({"$environ", "affinity", "policy"})

#: what a measured value can be: beyond it a number is a typo or a crafted file, and ReFrame's
#: bounds and the verdict's ratios of it overflow or vanish (5e-324, 1e308); no unit this
#: project measures in comes near either end
MEASURABLE = (1e-100, 1e100)
#: the widest upper bound a reference may give, as a fraction of its value (x1001); wider is
#: no bound at all, which the file says with ``null``
MAX_UPPER = 1000.0

_ENTRY = re.compile(r"^(?P<test>[A-Za-z_]\w*)\[(?P<keys>[^\]]*)\]\.(?P<var>\w+)$")


def entry_name(e: Entry) -> str:
    """``Test[k1,k2].var``: how the tools print an entry and read one back."""
    test, keys, var = e
    return f"{test}[{','.join(map(str, keys))}].{var}"


def parse_entry(text: str) -> Entry | None:
    """The entry :func:`entry_name` printed (index values as strings), or None."""
    m = _ENTRY.match(text)
    if not m:
        return None
    return m.group("test"), tuple(k for k in m.group("keys").split(",") if k != ""), m.group("var")


def read_entry(text: str, data: dict[str, Any]) -> Entry | None:
    """The entry ``text`` names in the reference file ``data``, or None (not an entry).

    Both forms the tools print are read: ``Test[gnu,MM160].var`` (:func:`entry_name`) and
    ``Test[$environ=gnu,benchmark=MM160].var`` (``placement baseline diff``, each value
    after its ``$index`` name). Why: a name copied from the diff must find the value, not
    read as one with no stored runs. A ``name=`` prefix is dropped only where it is the
    test's own ``$index`` name at that place, so an index value holding ``=`` (a Spack
    variant) still reads as itself.
    """
    e = parse_entry(text)
    if e is None:
        return None
    test, keys, var = e
    names = index_of(data, test)
    return test, tuple(_unnamed(k, names[i] if i < len(names) else None)
                       for i, k in enumerate(keys)), var


def _unnamed(key: str, name: str | None) -> str:
    """``key`` without its ``name=`` prefix, when it has it."""
    return key[len(name) + 1:] if name is not None and key.startswith(f"{name}=") else key


def same_entry(a: Entry, b: Entry) -> bool:
    """Whether two entries name one value (a file's index values may be numbers)."""
    return entry_name(a) == entry_name(b)


def entries(data: dict[str, Any]) -> dict[Entry, list]:
    """Flatten a reference mapping to ``{(test, index values, perfvar): [v, lo, hi, unit]}``."""
    flat: dict[Entry, list] = {}
    for test, node in data.items():
        if str(test).startswith("_") or not isinstance(node, dict):
            continue  # _provenance, _samples: never a test ReFrame looks up
        depth = len(node.get("$index") or []) or 1  # no $index: 'system:partition' level
        _walk(flat, test, depth, node, (), 0)
    return flat


def _walk(flat: dict[Entry, list], test: str, depth: int, n: Any, keys: tuple,
          level: int) -> None:
    """:func:`entries`' walk down one test's tree (a function of its own: a nested one that
    calls itself is a reference cycle, which keeps each run's entries until a collection)."""
    if not isinstance(n, dict):
        return
    for k, v in n.items():
        if k == "$index" and level == 0:
            continue
        if level == depth:
            if isinstance(v, list):
                flat[(test, keys, str(k))] = v
        else:
            _walk(flat, test, depth, v, keys + (k,), level + 1)


def index_of(data: dict[str, Any], test: str) -> list[str]:
    """The names of a test's index values in a reference file (its ``$index``)."""
    node = data.get(test) or {}
    return list(node.get("$index") or []) if isinstance(node, dict) else []


def family(test: str, params: Iterable[tuple[str, Any]], var: str) -> tuple:
    """What a value shares with its siblings: its test, variable and parameter values but
    those of :data:`SIBLING_PARAMS` (``params``: its parameters as (name, value) pairs)."""
    return test, var, tuple(v for n, v in params if n not in SIBLING_PARAMS)


def sibling_family(data: dict[str, Any], e: Entry) -> tuple:
    """What a value shares with its siblings: its test, variable and index values but those
    of :data:`SIBLING_PARAMS` (compiler, map, memory policy)."""
    test, keys, var = e
    names = index_of(data, test)
    if not names:       # no $index: the keys name a system and partition, another node each
        return test, var, tuple(keys)
    return family(test, zip(names, keys), var)


def measurable(x: Any) -> bool:
    """A number a measurement can be (:data:`MEASURABLE`): not a bool, NaN, infinite,
    negative, subnormal or too large for a float."""
    # compared before any float(): a 400-digit integer overflows one
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and MEASURABLE[0] <= x <= MEASURABLE[1])


def unit_mismatches(old: dict[str, Any], new: dict[str, Any],
                    have: dict[Entry, list] | None = None) -> dict[Entry, tuple[str, str]]:
    """``{entry: (the reference's unit, the check's unit)}`` where ``old`` (a reference
    file) and ``new`` (a run's entries) name a value in two units: a number in ``s`` compared
    with one in ``GB/s`` means nothing. ``have``: ``old``'s :func:`entries`, when the caller
    judges many runs against it."""
    have = entries(old) if have is None else have
    out = {}
    for e, leaf in entries(new).items():
        ref = have.get(e)
        unit, was = (leaf[3] if len(leaf) > 3 else None), (ref[3] if ref and len(ref) > 3 else None)
        if ref is not None and unit and was and unit != was:
            out[e] = (str(was), str(unit))
    return out
