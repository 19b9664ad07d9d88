"""A run report's session identity and times, parsed and checked before anything uses them.

A run report is a file anyone can drop into ``results/runs/``, and its
``session_info`` values end up in ReFrame's stored-session queries, whose filter
ReFrame evaluates as Python. So nothing of it is passed on as written: the UUID must
be a UUID, and times are parsed here into datetimes that the queries format anew
(:func:`query_time`). The same parsed times pick the "latest" run and the
"previous" one, which file modification times cannot (a copied file, a clock set
back).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from ...util import PlacementError

#: ReFrame's session UUIDs (``uuid.uuid4()`` as text)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
#: How ReFrame writes ``time_start``/``time_end`` (``20261122T231250+0000``)
_REFRAME_TIME = "%Y%m%dT%H%M%S%z"
TIME_KEYS = ("time_start", "time_end")


#: ReFrame's own form of a time, read without ``strptime`` (a tenth of its cost: a history
#: reads three times of each of ten thousand sessions); ASCII digits only, as anything else
#: is left to ``strptime``
_REFRAME_FORM = re.compile(r"([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})"
                           r"([+-])([0-9]{2})([0-5][0-9])")


def parse_time(value: Any) -> _dt.datetime:
    """A session time as ReFrame writes it (or ISO 8601 with a zone), as an aware datetime.

    Anything else is a :class:`ValueError` that says what is accepted.
    """
    m = _REFRAME_FORM.fullmatch(value) if type(value) is str else None
    if m is not None:
        try:
            return _reframe_time(m)
        except ValueError:
            pass            # no such date or zone: strptime says so below
    if isinstance(value, str) and len(value) <= 40:
        try:
            when = _dt.datetime.strptime(value, _REFRAME_TIME)
        except ValueError:
            try:
                when = _dt.datetime.fromisoformat(value)
            except ValueError:
                when = None
        if when is not None and when.tzinfo is not None:
            return when
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise ValueError(f"{shown} is not a session time (expected ReFrame's "
                     "YYYYMMDDTHHMMSS+HHMM, e.g. 20261122T231250+0000)")


def check(session: dict[str, Any], where: str) -> None:
    """Refuse a session whose UUID is no UUID or whose times are no times, in one line."""
    uuid = session.get("uuid")
    if uuid is not None and not (isinstance(uuid, str) and _UUID.fullmatch(uuid)):
        shown = repr(uuid) if len(repr(uuid)) <= 60 else repr(uuid)[:57] + "..."
        raise PlacementError(f"{where}: session uuid {shown} is not a UUID (expected "
                             "ReFrame's 8-4-4-4-12 lower-case hex digits)")
    for key in TIME_KEYS:
        if session.get(key) is not None:
            try:
                parse_time(session[key])
            except ValueError as exc:
                raise PlacementError(f"{where}: {key} {exc}") from None


def _reframe_time(m: re.Match) -> _dt.datetime:
    """The datetime ``strptime`` reads from ReFrame's form (each field its two or four
    digits, the zone ``+HHMM``); a ValueError where it has none."""
    year, month, day, hour, minute, second, sign, zh, zm = m.groups()
    offset = _dt.timedelta(hours=int(zh), minutes=int(zm))
    return _dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                        tzinfo=_dt.timezone(-offset if sign == "-" else offset))


def started(session: dict[str, Any]) -> _dt.datetime | None:
    """When the session started (None when the report does not say)."""
    value = session.get("time_start")
    return None if value is None else parse_time(value)


def ended(session: dict[str, Any]) -> _dt.datetime | None:
    """When the session ended, else when it started (None when the report says neither)."""
    value = session.get("time_end")
    return started(session) if value is None else parse_time(value)


def order(session: dict[str, Any]) -> _dt.datetime:
    """A key ordering sessions by start; one that says none sorts first."""
    return started(session) or _dt.datetime.min.replace(tzinfo=_dt.timezone.utc)


def query_time(when: _dt.datetime) -> str:
    """``when`` as a timestamp of ReFrame's stored-session queries, in UTC.

    Written from the parsed datetime, never copied from a file: a query's text is
    ours alone.
    """
    return when.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S+0000")


def is_uuid(value: Any) -> bool:
    return isinstance(value, str) and _UUID.fullmatch(value) is not None
