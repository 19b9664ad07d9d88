"""What a reference file says it holds, and whether it still holds it.

A file cut at a line boundary (a full disk, a copy stopped half-way, an
editor's crash) can still be valid YAML: cut before ``_samples`` it reads as
a file of intervals only, and every value it judged becomes "interval only";
cut inside, a value keeps fewer sessions. ReFrame and the verdict would take
either for the whole file, and ``record --add`` would then write the loss
back for good. So every write counts what it writes under
``_provenance.contents``, the file's first lines (a cut takes the end), and a
file holding fewer than its counts is refused.
"""

from __future__ import annotations

import os

from typing import Any

from ...util import PlacementError
from . import samples
from .shape import short
from ..verdict.intervals import entries

#: the key under ``_provenance`` holding the counts
RECORD_KEY = "contents"
#: reference values, values with stored runs, their sessions, their runs
FIELDS = ("values", "sampled", "sessions", "runs")


def count(data: dict[str, Any], where: str = "reference file",
          stored: dict[Any, samples.Samples] | None = None) -> dict[str, int]:
    """The counts of :data:`FIELDS` in ``data`` (``stored``: its runs, already read)."""
    stored = (samples.entries(data, where) if stored is None else stored).values()
    return {"values": len(entries(data)), "sampled": len(stored),
            "sessions": sum(len(s.sessions) for s in stored),
            "runs": sum(len(s.runs) for s in stored)}


def recorded(data: dict[str, Any]) -> Any:
    """The counts the file says it holds (None when it says nothing)."""
    prov = data.get("_provenance")
    return prov.get(RECORD_KEY) if isinstance(prov, dict) else None


def check(data: dict[str, Any], where: str,
          stored: dict[Any, samples.Samples] | None = None) -> None:
    """One line when ``data`` holds fewer values, sessions or runs than its record says
    (``stored``: its runs, when the caller has read them)."""
    prov = data.get("_provenance", {})
    if not isinstance(prov, dict):       # cut right after its first key
        raise PlacementError(f"{where}: _provenance {short(prov)} is not a mapping: "
                             f"{_damaged(where)}")
    if RECORD_KEY not in prov:
        return
    said = prov[RECORD_KEY]
    if not isinstance(said, dict) or not all(
            isinstance(said.get(f), int) and not isinstance(said.get(f), bool)
            and said[f] >= 0 for f in FIELDS):
        raise PlacementError(f"{where}: _provenance.{RECORD_KEY} {short(said)} is not the counts "
                             f"{{{', '.join(f'{f}: N' for f in FIELDS)}}} that `placement "
                             f"baseline record` writes: {_damaged(where)}")
    has = count(data, where, stored)
    fewer = [f"{f} {has[f]} of {said[f]}" for f in FIELDS if has[f] < said[f]]
    if fewer:
        raise PlacementError(f"{where}: holds less than its _provenance.{RECORD_KEY} records "
                             f"({', '.join(fewer)}): {_damaged(where)}")


def _damaged(where: str) -> str:
    return (f"cut short or edited; {restore_hint(where, 'move it away and record again')}; "
            "nothing was written")


def restore_hint(where: str, otherwise: str) -> str:
    """What to do with a damaged reference file: its previous version where one is kept
    (``baseline record`` keeps ``<file>.prev``), else ``otherwise``."""
    prev = f"{where}.prev"
    if os.path.isfile(prev) and not os.path.islink(prev):
        return f"restore its previous version ({prev}) or {otherwise}"
    return f"{otherwise} (no previous version {prev} is kept)"


def stamped(data: dict[str, Any], where: str = "reference file") -> dict[str, Any]:
    """``data`` with its counts first in ``_provenance`` (when it has one), as written."""
    prov = data.get("_provenance")
    if not isinstance(prov, dict):
        return data
    rest = {k: v for k, v in prov.items() if k != RECORD_KEY}
    return {**data, "_provenance": {RECORD_KEY: count(data, where), **rest}}


def unrecorded(data: dict[str, Any], where: str, written: bool = False) -> str:
    """A note when a file with values keeps no counts (written before they were kept, or by
    hand): a cut then cannot be told from a whole file. ``written``: the note of the write
    that adds them. ``""`` when the file has counts or no values."""
    if recorded(data) is not None or not entries(data):
        return ""
    return (f"{where} kept no counts of its values and sessions (written before they were "
            "kept, or by hand): whether it was whole could not be checked; "
            + ("it keeps them from now on" if written else
               "the next `placement baseline record` writes them"))
