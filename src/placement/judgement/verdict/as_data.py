"""A value's verdict as plain data and back: what the verdict record keeps of each value.

Why: the acceptance summary judges a run once (its confirmation session included); a report
of that run reads each value's verdict from the run's record rather than judging the first
session again, so that its tables say what the summary said. Plain data is what JSON holds
and what a site's script reads: lists for tuples, ``"inf"`` for an infinity (JSON has none),
Python's numbers for NumPy's.
"""

from __future__ import annotations

import math
from dataclasses import asdict, fields
from typing import Any

import numpy as np

from .over_sessions import Modes, Verdict

#: the words a number that JSON cannot hold is kept as
_NOT_FINITE = ("inf", "-inf", "nan")


def _plain(x: Any) -> Any:
    """``x`` in the types JSON holds, an infinity or a nan as its word."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else str(float(x))
    if isinstance(x, (tuple, list)):
        return [_plain(y) for y in x]
    if isinstance(x, dict):
        return {str(k): _plain(y) for k, y in x.items()}
    return x


def _number(x: Any) -> Any:
    """A number :func:`_plain` wrote as a word, back."""
    return float(x) if isinstance(x, str) and x in _NOT_FINITE else x


def to_data(v: Verdict) -> dict[str, Any]:
    """The verdict's every field as plain data (:func:`from_data` gives it back)."""
    return _plain(asdict(v))


def from_data(data: dict[str, Any]) -> Verdict:
    """The verdict :func:`to_data` wrote; a :class:`TypeError` or :class:`ValueError` for
    data that is not one."""
    known = {f.name for f in fields(Verdict)}
    d = {k: _number(v) for k, v in data.items() if k in known}
    d["ci"] = tuple(float(_number(x)) for x in d["ci"])
    if d.get("spread") is not None:
        d["spread"] = tuple(float(_number(x)) for x in d["spread"])
    if d.get("modes") is not None:
        d["modes"] = Modes(**{k: float(_number(x)) for k, x in d["modes"].items()})
    return Verdict(**d)
