"""Text that may go into a one-line output: no control character.

Why one place: names from run reports and words from a scheduler's answer both reach the
summary's lines; a line break (or a Unicode line or paragraph separator) in either would put
a forged line under the summary's, so both are checked by the same characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: C0 and C1 control characters, and the Unicode line and paragraph separators
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character that could break or forge a line."""
    return CONTROL.search(text) is not None


def flattened(text: str) -> str:
    """``text`` with each such character written as its escape (``\\n``): words a caller
    hands the summary for its line stay on that line."""
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def first_of(names: Sequence[str], shown: int, sep: str = "; ") -> str:
    """The first ``shown`` of ``names``, then how many more: a line that names what it
    counts stays one line however many there are."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return sep.join(names[:shown]) + more
