"""A checked copy of a large reference file, so that it loads in seconds.

PyYAML builds every value of a file in Python: a partition's baseline of 100k entries
(about 30 MB) takes seconds to parse, where JSON takes a fraction of that. So the file's
writer (:func:`placement.judgement.baselines.store.write_atomic`: ``placement baseline record``
and ``control``), once the text it wrote has read back and passed every check, keeps what
it read as JSON beside it (``.<name>.checked.json``), under the SHA-256 of the file's text:
a load of the same text reads the JSON instead of the YAML, and checks it again as it would
the YAML (its checks are a fraction of the parse). Readers never write: a file in a folder
they cannot write loads as any other, and a file edited by hand (its digest changed) is
parsed at each load until the next record writes it and its copy again.

JSON keeps no YAML key types (``16:`` is an integer key), so each key is written with
its type first (``i16``, ``srate``) and read back by json's own hook for each object. A copy
that cannot be read, is not the file's, or holds anything else is ignored (the file is
parsed as before); one that cannot be written is not written. Small files (under
:data:`MIN_BYTES`) get no copy: they load fast, and a checkout's own baselines stay alone
in their folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ...util import atomic, regular_file

#: files smaller than this are parsed each time (a few hundred entries)
MIN_BYTES = 1 << 20
FORMAT = 1


def copy_path(path: Path) -> Path:
    """Where the checked copy of ``path`` lives: beside it, hidden."""
    return path.with_name(f".{path.name}.checked.json")


def _head(text: str) -> str:
    """The copy's first line: its format and the SHA-256 of the text it was read from."""
    return f"placement-checked-copy {FORMAT} sha256:{hashlib.sha256(text.encode()).hexdigest()}"


class _NotData(Exception):
    """A value this encoding does not keep (a date, bytes), or a copy not in it."""


def _key(k: Any) -> str:
    """A mapping key as a JSON object key, its YAML type first (JSON keys are strings)."""
    if isinstance(k, str):
        return "s" + k
    if isinstance(k, bool):
        return "b1" if k else "b0"
    if isinstance(k, int):
        return "i" + str(k)
    if isinstance(k, float):
        return "f" + repr(k)
    if k is None:
        return "n"
    raise _NotData(type(k).__name__)


_KEY_TYPES = {"s": str, "i": int, "f": float, "b": lambda t: t == "1", "n": lambda _: None}


def _encode(v: Any) -> Any:
    if isinstance(v, dict):
        return {_key(k): _encode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_encode(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise _NotData(type(v).__name__)


def _mapping(pairs: list[tuple[str, Any]]) -> dict[Any, Any]:
    """json's hook for each object: its keys back to their YAML types."""
    try:
        return {_KEY_TYPES[k[0]](k[1:]): v for k, v in pairs}
    except (KeyError, IndexError, ValueError):
        raise _NotData("a key not in this encoding") from None


def read(path: Path, text: str) -> dict[str, Any] | None:
    """What ``text`` (the file at ``path``) read as when its writer checked it, or None
    (the caller checks it again: a copy is only as trusted as its folder)."""
    if len(text) < MIN_BYTES:
        return None
    copy = copy_path(path)
    try:
        raw = regular_file.read_text(copy, "checked copy", 8 * len(text) + 4096)
        head, sep, body = raw.partition("\n")
        if not sep or head != _head(text):
            return None
        data = json.loads(body, object_pairs_hook=_mapping)
    except (Exception, RecursionError):      # noqa: BLE001 - any doubt: parse the file
        return None
    return data if isinstance(data, dict) else None


def write(path: Path, text: str, data: dict[str, Any]) -> None:
    """Keep ``data``, read from ``text`` (just written to ``path``) and checked, beside
    ``path``, as private as it; a large file's writer calls it, never a reader."""
    if len(text) < MIN_BYTES:
        return
    try:
        mode = os.stat(path).st_mode & 0o777
        body = json.dumps(_encode(data), separators=(",", ":"))
        atomic.write_text(copy_path(path), _head(text) + "\n" + body, mode=mode)
    except (OSError, _NotData, ValueError, RecursionError):
        return      # no copy: the next load parses the file, as it would without one
