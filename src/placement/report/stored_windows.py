"""ReFrame's stored sessions read a period at a time, each session parsed on its own.

``reframe --describe-stored-sessions`` of ten thousand sessions is some 450 MB of JSON,
and ReFrame holds it twice over to print it (1.9 GB); parsed here whole it is more again.
ReFrame's storage selects a query's period by the sessions' recorded start
(``FROM <= start < TO``, to the second), so periods that meet end to end describe each
session once. They are taken backwards from the end: the first :data:`FIRST_S` long,
each next one sized from how many sessions the one after it held, so that a call
describes about :data:`PER_CALL` sessions; a period that held none is followed by one
:data:`GROWTH` times as long, so a stretch without sessions is crossed in a few calls and
the periods reach 1970 (no call is open-ended, however many sessions there are). Each
call's array is parsed one session at a time (:func:`items`), so at most one period's
text and one session's objects are held.

A small store is described in one call, as before there were periods: each call starts a
ReFrame (some 0.7 s of CPU), and a report of a store of a few sessions would otherwise make
about seven calls to reach 1970. Small is told from the size of ReFrame's database file
(:func:`at_once`), which grows with what a description of its sessions prints (about
60 KB a stored session, 45 KB of it described): nothing need be asked of ReFrame.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from ..judgement import reading

#: sessions a call describes, about (one period's text is some 45 KB a session)
PER_CALL = 1000
#: the newest period's length, seconds
FIRST_S = 7 * 24 * 3600
#: at most this many times longer than the period after it
GROWTH = 4
#: a results database at most this large is described in one call: about two periods'
#: sessions (a period may hold up to some three times :data:`PER_CALL`), so ReFrame's
#: and the report's share of one call stay what a period's are
AT_ONCE_BYTES = 2 * PER_CALL * 60_000

_SPACE = re.compile(r"\s*")


def items(text: str) -> Iterator[object]:
    """The elements of the JSON array ``text``, parsed one at a time (nothing for text that
    is no array, as ``json.loads`` of it gives no list; "" is an empty array). A malformed
    array raises ``ValueError`` as ``json.loads`` would."""
    i = _SPACE.match(text).end()
    if not text[i:i + 1] == "[":
        json.loads(text or "[]")        # no array: refused as before, or nothing
        return
    decoder = json.JSONDecoder()
    i = _SPACE.match(text, i + 1).end()
    if text[i:i + 1] == "]":
        return _end(text, i + 1)
    while True:
        item, i = decoder.raw_decode(text, i)
        yield item
        i = _SPACE.match(text, i).end()
        if text[i:i + 1] == "]":
            return _end(text, i + 1)
        if text[i:i + 1] != ",":
            raise ValueError(f"expected ',' or ']' at character {i} of ReFrame's output")
        i = _SPACE.match(text, i + 1).end()


def _end(text: str, i: int) -> None:
    if _SPACE.match(text, i).end() != len(text):
        raise ValueError(f"extra data at character {i} of ReFrame's output")


def next_length(length: int, held: int) -> int:
    """The next (earlier) period's length in seconds, after one of ``length`` seconds that
    held ``held`` sessions: about :data:`PER_CALL` sessions at the same density, at most
    :data:`GROWTH` times as long, at least a second."""
    if held <= 0:
        return length * GROWTH
    return max(1, min(length * GROWTH, length * PER_CALL // held))


def at_once(database: Path) -> bool:
    """Whether the sessions stored in the SQLite file ``database`` (and its write-ahead
    log, if any) are few enough to be described in one call; a store not yet written is."""
    size = 0
    for f in (database, database.with_name(database.name + "-wal")):
        try:
            size += f.stat().st_size
        except OSError:
            pass
    return size <= AT_ONCE_BYTES


def stamp(seconds: int) -> str:
    """A whole second since 1970 as a timestamp of ReFrame's queries (UTC)."""
    return reading.session_info.query_time(_dt.datetime.fromtimestamp(seconds, _dt.timezone.utc))


class Period:
    """One call's sessions, parsed as they are iterated; ``held`` counts them."""

    def __init__(self, query: str, describe: Callable[[str], str]) -> None:
        self.query, self._describe, self.held = query, describe, 0

    def __iter__(self) -> Iterator[object]:
        for item in items(self._describe(self.query)):
            self.held += 1
            yield item


def periods(end: int, describe: Callable[[str], str], sess_filter: str = "",
            whole: bool = False) -> Iterator[Period]:
    """The periods before ``end`` (whole seconds since 1970, exclusive), newest first, each
    to be iterated before the next is asked for (its count sizes the next);
    ``describe(query)``: ReFrame's output for a query; ``sess_filter``: the filter each
    query carries after ``?`` (none: every session); ``whole``: one period from 1970
    (a small store: :func:`at_once`)."""
    hi, length = end, (end if whole else FIRST_S)
    while hi > 0:
        lo = max(0, hi - length)
        period = Period(f"{stamp(lo)}:{stamp(hi)}" + (f"?{sess_filter}" if sess_filter else ""),
                        describe)
        yield period
        hi, length = lo, next_length(hi - lo, period.held)
