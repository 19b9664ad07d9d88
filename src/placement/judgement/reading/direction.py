"""A value's direction: whether more of it is better, read from its name and unit.

A rate (unit ``.../s``) is better higher, a time better lower; the extremes of a run's
iterations (``max_time``, ``min_time``) follow one outlier and are never judged. The
verdict over sessions, the baselines and the peer verdict all ask it of a case's values.
"""

from __future__ import annotations

import functools
import re

#: time units: lower is better
_TIME_UNITS = {"s", "ms", "us", "ns", "µs", "cycles"}
#: extremes of a run's iterations: never judged
_EXTREME = re.compile(r"(^|_)(max|min|maximum|minimum)($|_)")


@functools.lru_cache(maxsize=4096)
def is_extreme(var: str) -> bool:
    """The maximum or minimum of a run's iterations: one outlier moves it, never referenced."""
    return bool(_EXTREME.search(var))


@functools.lru_cache(maxsize=4096)
def higher_is_better(var: str, unit: str | None) -> bool | None:
    """True for a rate, False for a time, None for what is not worth judging (kept per
    name and unit: asked of every value of thousands of stored sessions)."""
    if is_extreme(var):
        return None
    u = (unit or "").strip()
    if u.endswith("/s"):
        return True
    if u in _TIME_UNITS:
        return False
    return None
