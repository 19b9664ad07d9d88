"""A module imported at its first use, not where it is named.

Why: ``scipy.stats`` takes about a second to import (more on a busy node), and the judgement
package names SciPy in modules that every ReFrame run loads (its check files import the
package) and that every ``placement`` command imports, most of which judge nothing: an
acceptance run starts several of each. Named through :class:`LazyModule`, SciPy is imported
by the first call that computes with it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for the module ``name``: the first attribute read imports it (an import error
    shows there, at the first use)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r}, {state}>"
