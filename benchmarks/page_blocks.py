"""The docs' generated blocks: the text between a benchmark's two markers, replaced.

Why one place: every benchmark writes its figures into a page between ``<!-- NAME: ... -->``
and ``<!-- /NAME -->`` markers, and the page must stay whole (an exclusive temporary file
renamed over it) whichever benchmark writes.
"""

from __future__ import annotations

from pathlib import Path

from placement.util import atomic


def replace(page: Path, begin: str, end: str, block: str) -> bool:
    """``page`` with the text from ``begin`` to ``end`` (both kept, as ``block`` holds them)
    replaced by ``block``; False, and nothing written, where the page lacks the markers."""
    text = page.read_text()
    if begin not in text or end not in text:
        return False
    a, b = text.index(begin), text.index(end) + len(end)
    atomic.write_text(page, text[:a] + block + text[b:])
    return True
