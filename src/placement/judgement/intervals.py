"""The intervals ReFrame reads from a reference file, flattened.

Both the file's writer (:mod:`.baselines`) and the samples' judge
(:mod:`.baseline_samples`) read them; they live here so neither of the two
has to import the other for it.
"""

from __future__ import annotations

from typing import Any

#: one value of one test case: (test class, index values, performance variable)
Entry = tuple[str, tuple, str]


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
