"""Sizes written with a binary suffix (``512K``, ``16M``, ``1G``), as the kernels take them.

One parser for the kernels' checks (which match the byte counts a kernel prints)
and the report (which plots bandwidth over block size).
"""

from __future__ import annotations

_MULT = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}


def size_bytes(text: str) -> int:
    """``512K``/``16M``/``1G``/``1.5M``/``4096`` as a number of bytes."""
    text = text.strip()
    if text and text[-1] in _MULT:
        return int(float(text[:-1]) * _MULT[text[-1]])
    return int(float(text))
