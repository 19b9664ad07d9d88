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
