"""Reading a YAML file someone else may have written: no anchors or aliases, a size cap.

A reference file is hand-edited and copied between sites, so it is read as
untrusted text. A YAML alias is a pointer: a 1.3 kB file of nested aliases
(an "alias bomb") loads as a small graph that any walk over it expands to
hundreds of millions of nodes. No file this project writes holds an anchor
or alias (its writers dump shared lists out each time), so the reader refuses
them at the first one, before anything is built, and refuses a file larger
than any it writes before reading it. A key given twice is refused too (YAML
keeps the last, silently).

The document is built straight from libyaml's parser events, in one pass with no
recursion, as PyYAML's safe loader would build it (its resolver names each plain
scalar's type, its own functions make the rarer ones: dates, ``0x1f``, ``.inf``).
Only its plain collections are taken: ``!!set``, ``!!omap``, a merge key (``<<``) and
tags of no safe type are refused, as nothing this project writes holds them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import (AliasEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent, StreamEndEvent)
from yaml.nodes import ScalarNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from . import regular_file
from .errors import PlacementError

#: the largest file read: a reference file of 1000 values with 10 sessions of 10 launches
#: each is about 2 MB
MAX_BYTES = 32 * 1024 * 1024


class _PyParser(Reader, Scanner, Parser):
    """PyYAML's own parser, as its pure-Python loaders assemble it (without libyaml)."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)


try:        # libyaml's parser: its events cost a fraction of what PyYAML's own parser's do
    from yaml._yaml import CParser as _Parser
except ImportError:     # PyYAML without libyaml
    _Parser = _PyParser

_TAG = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
#: a collection's tag: only the plain one (``!!set``, ``!!omap`` and others are refused)
_COLLECTION = {MappingStartEvent: _TAG + "map", SequenceStartEvent: _TAG + "seq"}
#: the scalar tags PyYAML's safe loader builds, with its own functions (dates, binary, and
#: numbers in forms other than the two below); a merge key (``<<``) or ``=`` has none
_SCALARS = {t: f for t, f in SafeConstructor.yaml_constructors.items()
            if t and t not in set(_COLLECTION.values()) | {_TAG + "omap", _TAG + "pairs",
                                                           _TAG + "set"}}
#: the forms of a number that Python's ``int()``/``float()`` read exactly as YAML 1.1 does
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
#: plain scalars whose value is kept for their next time (a baseline's keys, units, ids)
_PLAIN_KEPT = 1 << 16
_NO_KEY = object()


class NoAliasError(yaml.YAMLError):
    """An anchor (``&name``) or alias (``*name``): refused, with its line."""

    def __init__(self, what: str, line: int) -> None:
        super().__init__(f"{what} at line {line}")
        self.what, self.line = what, line


class DuplicateKeyError(yaml.YAMLError):
    """A mapping key given twice: refused, with both lines (never the key's text)."""

    def __init__(self, line: int, first: int) -> None:
        super().__init__(f"a key given twice (line {line}, first at line {first})")
        self.line, self.first = line, first


def _line(event: Any) -> int:
    return event.start_mark.line + 1 if event.start_mark else 0


def _no_anchor(event: Any) -> None:
    """Refuse the event's anchor, or the event when it is an alias (name cut short)."""
    if isinstance(event, AliasEvent):
        kind, name = "alias *", event.anchor
    elif event.anchor is not None:
        kind, name = "anchor &", event.anchor
    else:
        return
    raise NoAliasError(kind + (name if len(name) <= 40 else name[:37] + "..."), _line(event))


class _Scalars:
    """Scalar events as the values PyYAML's safe loader makes of them (``16`` an integer,
    ``true`` a boolean): a plain scalar's text is resolved once, its value then kept (keys,
    units and session ids repeat on every entry of a baseline)."""

    def __init__(self) -> None:
        self._resolve = Resolver().resolve
        self._constructor = SafeConstructor()
        #: the value of each plain text seen (up to :data:`_PLAIN_KEPT` of them)
        self.plain: dict[str, Any] = {}

    def value(self, event: ScalarEvent) -> Any:
        """The scalar's value; a plain one's is kept for its text's next time."""
        text, tag = event.value, event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return text                 # quoted or a block: text
            value = self._typed(self._resolve(ScalarNode, text, event.implicit), event)
            if len(self.plain) < _PLAIN_KEPT and value == value:    # NaN: each its own
                self.plain[text] = value
            return value
        return self._typed(tag, event)

    def _typed(self, tag: str, event: ScalarEvent) -> Any:
        text = event.value
        if tag == _STR:
            return text
        if tag == _FLOAT and _FLOAT.match(text):
            return float(text)
        if tag == _INT and _DECIMAL.match(text):
            return int(text)
        if tag == _BOOL:
            return SafeConstructor.bool_values[text.lower()]
        if tag == _NULL:
            return None
        build = _SCALARS.get(tag)
        if build is None:
            raise ConstructorError(None, None, "a tag this reader does not take",
                                   event.start_mark)
        try:
            return build(self._constructor, ScalarNode(tag, text, event.start_mark,
                                                       event.end_mark, event.style))
        except ValueError:      # ``!!int x``, a date of month 13: not of its tag's type
            raise ConstructorError(None, None, "a value its tag's type does not read",
                                   event.start_mark) from None


def _document(parser: Any) -> Any:
    """The one document of the stream, built from the parser's events as they come: an
    anchor, alias, key given twice or tag beyond the safe loader's plain ones is refused at
    its event, before anything after it is read. Why not PyYAML's composer and
    constructor: they build a node per value, then the value, in Python; a 100k-entry
    reference file took minutes that way, and seconds this way (the loop is the reader's
    whole cost beside libyaml's: keep it flat)."""
    scalars = _Scalars()
    plain, get = scalars.plain, parser.get_event
    get()                                   # the stream's start
    if isinstance(parser.peek_event(), StreamEndEvent):
        return None
    get()                                   # the document's start
    root: Any = None
    stack: list[tuple[Any, list[int] | None, Any]] = []
    node: Any = None            # the open mapping or list (None: the document itself)
    lines: list[int] | None = None      # a mapping's key lines, in order (None: a list)
    key: Any = _NO_KEY          # a mapping's key waiting for its value
    while True:
        event = get()
        kind = type(event)
        if kind is ScalarEvent:
            if event.anchor is not None:
                _no_anchor(event)
            value = plain.get(event.value, _NO_KEY) if event.tag is None and \
                event.implicit[0] else _NO_KEY
            if value is _NO_KEY:
                value = scalars.value(event)
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = node
            node, lines, key = stack.pop()
        elif kind in _COLLECTION:
            _no_anchor(event)
            if event.tag not in (None, "!", _COLLECTION[kind]):
                raise ConstructorError(None, None, "a tag this reader does not take",
                                       event.start_mark)
            stack.append((node, lines, key))
            node, lines = ({}, []) if kind is MappingStartEvent else ([], None)
            key = _NO_KEY
            continue
        elif kind is AliasEvent:
            _no_anchor(event)
        else:                               # the document's end
            break
        if key is not _NO_KEY:
            node[key] = value
            key = _NO_KEY
        elif lines is not None:
            _new_key(node, lines, value, event)
            key = value
        elif node is not None:
            node.append(value)
        else:
            root = value
    end = get()
    if not isinstance(end, StreamEndEvent):
        raise ComposerError("expected a single document in the stream", None,
                            "but found another document", end.start_mark)
    return root


def _new_key(node: dict, lines: list[int], key: Any, event: Any) -> None:
    """Note the line of a mapping's next key; one given twice (``1`` and ``1.0`` are one
    key too) is refused: the later would replace the earlier, and its values be lost."""
    try:
        given = key in node
    except TypeError:       # a list or mapping as a key
        raise ConstructorError("while constructing a mapping", None, "found unhashable key",
                               event.start_mark) from None
    line = _line(event)
    if given:
        first = next(i for i, k in enumerate(node) if k == key)
        raise DuplicateKeyError(line, lines[first])
    lines.append(line)


def load(path: Path, what: str = "file", max_bytes: int = MAX_BYTES) -> Any:
    """The YAML document in ``path`` (None when empty); anything else is one line.

    ``what`` names the file in the error (``reference file``); the errors say the
    file was left as it was, because every caller reads before it writes.
    """
    text = regular_file.read_text(Path(path), what, max_bytes)
    return loads(text, str(path), what)


def loads(text: str, where: str, what: str = "file") -> Any:
    """:func:`load` for text already read (``where`` names it in the error)."""
    try:
        return _document(_Parser(text))
    except NoAliasError as exc:
        raise PlacementError(
            f"{where}: YAML {exc.what} at line {exc.line}: anchors and aliases are not "
            f"accepted in a {what} (none is ever written; a file of nested aliases expands "
            "without bound); write the values out, nothing was written") from None
    except DuplicateKeyError as exc:
        raise PlacementError(
            f"{where}: a key given twice in one mapping (line {exc.line}, first at line "
            f"{exc.first}): YAML keeps only the last, the other's values would be lost; "
            "remove one, nothing was written") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise PlacementError(f"{where}: not valid YAML ({exc.__class__.__name__}{at}); "
                             "fix or remove it first, nothing was written") from None
    except ValueError:      # Python's own limit on a number's digits (4300)
        raise PlacementError(f"{where}: a number with more digits than Python reads (more "
                             f"than {sys.get_int_max_str_digits()}); no {what} holds one, fix "
                             "or remove it first, nothing was written") from None
    except RecursionError:
        raise PlacementError(f"{where}: nested deeper than any {what} this project writes; "
                             "fix or remove it first, nothing was written") from None
