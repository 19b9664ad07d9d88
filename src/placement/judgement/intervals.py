"""The intervals ReFrame reads from a reference file, flattened.

Both the file's writer (:mod:`.baselines`) and the samples' judge
(:mod:`.baseline_samples`) read them; they live here so neither of the two
has to import the other for it.
"""

from __future__ import annotations

import re
from typing import Any

#: one value of one test case: (test class, index values, performance variable)
Entry = tuple[str, tuple, str]

#: the parameters in which a value's siblings differ from it: the compiler and the placement
#: (affinity map, memory policy). Siblings run the same kernel with the same threads on the
#: same node, so a state of the node one of them shows is one the others can fall into
SIBLING_PARAMS = frozenset({"$environ", "affinity", "policy"})

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

        def walk(n: Any, keys: tuple, level: int) -> None:
            if not isinstance(n, dict):
                return
            for k, v in n.items():
                if k == "$index" and level == 0:
                    continue
                if level == depth:
                    if isinstance(v, list):
                        flat[(test, keys, str(k))] = v
                else:
                    walk(v, keys + (k,), level + 1)
        walk(node, (), 0)
    return flat


def index_of(data: dict[str, Any], test: str) -> list[str]:
    """The names of a test's index values in a reference file (its ``$index``)."""
    node = data.get(test) or {}
    return list(node.get("$index") or []) if isinstance(node, dict) else []


def sibling_family(data: dict[str, Any], e: Entry) -> tuple:
    """What a value shares with its siblings: its test, variable and index values but those
    of :data:`SIBLING_PARAMS` (compiler, map, memory policy)."""
    test, keys, var = e
    names = index_of(data, test)
    if not names:       # no $index: the keys name a system and partition, another node each
        return test, var, tuple(keys)
    return test, var, tuple(k for n, k in zip(names, keys) if n not in SIBLING_PARAMS)
