"""Python's cyclic garbage collector paused around work that builds many objects and no cycles.

The collector walks every tracked object each time enough new ones were made; a reference
file's tree (100k entries) or a history of thousands of judged sessions makes millions of
small dicts, lists and floats that reference counting alone frees, so the walks cost a
third of a large baseline's load and a tenth of a history page's, and find nothing.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def without_cyclic_gc(fn: _F) -> _F:
    """``fn`` with the cyclic collector paused while it runs (nested calls leave it to the
    outermost to resume it); what ``fn`` frees is still freed at once by its count."""
    @functools.wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was:
                gc.enable()
    return paused  # type: ignore[return-value]
