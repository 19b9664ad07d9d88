"""Reading a YAML file someone else may have written: no anchors or aliases, a size cap.

A reference file is hand-edited and copied between sites, so it is read as
untrusted text. A YAML alias is a pointer: a 1.3 kB file of nested aliases
(an "alias bomb") loads as a small graph that any walk over it expands to
hundreds of millions of nodes. No file this project writes holds an anchor
or alias (its writers dump shared lists out each time), so the reader refuses
them at the first one, before anything is built, and refuses a file larger
than any it writes before reading it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from . import regular_file
from .errors import PlacementError

#: the largest file read: a reference file of 1000 values with 10 sessions of 10 launches
#: each is about 2 MB
MAX_BYTES = 32 * 1024 * 1024

try:        # libyaml's parser (five times faster) under the Python composer that checks
    from yaml._yaml import CParser as _Parser
except ImportError:     # PyYAML without libyaml
    from yaml.parser import Parser as _Parser
    from yaml.reader import Reader as _Reader
    from yaml.scanner import Scanner as _Scanner
else:
    _Reader = _Scanner = None


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


class _NoDuplicateKeys:
    """The constructor of both loaders: a key given twice is refused."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict:
        """PyYAML's mapping, refusing a key given twice (``1`` and ``1.0`` are one key too):
        the later one would replace the earlier silently, and its values be lost."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise DuplicateKeyError(line, seen[key])
                except TypeError:       # a list or mapping as a key: PyYAML's own error
                    break
                seen[key] = line
        return super().construct_mapping(node, deep)  # type: ignore[misc]


class _Loader(_NoDuplicateKeys, Composer, _Parser, SafeConstructor, Resolver):
    """PyYAML's safe loader whose composer refuses anchors and aliases."""

    def __init__(self, stream: str) -> None:
        if _Reader is None:
            _Parser.__init__(self, stream)
        else:
            _Reader.__init__(self, stream)
            _Scanner.__init__(self)
            _Parser.__init__(self)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.AliasEvent):
            raise NoAliasError(f"alias *{event.anchor}", line)
        if getattr(event, "anchor", None) is not None:
            raise NoAliasError(f"anchor &{event.anchor}", line)
        return super().compose_node(parent, index)


if hasattr(yaml, "CSafeLoader"):
    class _FastLoader(_NoDuplicateKeys, yaml.CSafeLoader):   # type: ignore[misc]
        """libyaml's safe loader, composer included (faster than the Python composer,
        which a 100k-entry baseline spends most of its load in): used only for text with no
        ``&`` or ``*`` at all, where no anchor or alias can be. Its parser has the nesting
        bound (1000) of :class:`_Loader`'s, which uses the same libyaml parser."""
else:       # PyYAML without libyaml
    _FastLoader = None


def _loader(text: str) -> type:
    """The fast loader where no anchor or alias can be, else the one that refuses them."""
    if _FastLoader is not None and "&" not in text and "*" not in text:
        return _FastLoader
    return _Loader


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
        return yaml.load(text, Loader=_loader(text))
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
