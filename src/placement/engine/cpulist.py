"""Parsing and formatting of CPU and node lists (``0-3,8``) and hwloc bitmask strings."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from ..util import PlacementError

#: No CPU or node number is this large (Linux's NR_CPUS tops out far below it):
#: a range past it is a typo, refused before it is expanded.
MAX_INDEX = 1 << 20

_NUMBER = re.compile(r"[0-9]+")     # ASCII digits only: str.isdigit() accepts '²'


def parse_list(text: str, what: str = "CPU", valid: Collection[int] | None = None) -> list[int]:
    """Parse ``"0,4,1-3"`` (commas or blanks) into an ordered list, ranges expanded.

    Order is kept because an affinity list is an order, not a set. With ``valid``,
    every number must be one of them; either way a range is checked before it
    is expanded, so a typo like ``0-20000000`` costs nothing.
    """
    top = max(valid) if valid else MAX_INDEX - 1
    out: list[int] = []
    for item in text.replace(",", " ").split():
        lo, dash, hi = item.partition("-")
        if not dash:
            hi = lo
        if not (_NUMBER.fullmatch(lo) and _NUMBER.fullmatch(hi)):
            raise PlacementError(f"bad {what} entry {item!r}: expected a non-negative "
                                 "number or a range N-M (e.g. 0-3)")
        first, last = int(lo), int(hi)
        if first > last:
            raise PlacementError(f"bad {what} range {item!r}: expected N-M with N <= M (e.g. 0-3)")
        if last > top:
            why = (f"is not in the topology (valid {what}s: {format_ranges(valid)})" if valid
                   else f"does not exist ({what} numbers stop below {MAX_INDEX})")
            raise PlacementError(f"bad {what} {'range' if dash else 'entry'} {item!r}: "
                                 f"{what} {last} {why}")
        out.extend(range(first, last + 1))
    return out


def format_ranges(values: Iterable[int]) -> str:
    """Format a set of numbers compactly as ``0-3,8``; order is not kept."""
    nums = sorted(set(values))
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(parts)


#: hwloc writes each 32-bit word of a bitmap as ``0x`` and 8 hex digits (16 for 64-bit).
_WORD = re.compile(r"0x[0-9a-fA-F]{0,16}")
_INFINITE = "0xf...f"


def parse_bitmask(text: str, top: int = 0) -> frozenset[int]:
    """Decode an hwloc bitmap string (``0x000000ff,0xffffffff``, most significant word first).

    Linear in its length: each word is at most 16 hex digits and there are at most
    ``MAX_INDEX / 32`` of them. hwloc's infinite marker (``0xf...f`` as the first word)
    sets every bit from that word up to ``top`` (the caller's largest index + 1).
    The error names the problem, never the text (a bad mask may be megabytes long).
    """
    if not text:
        return frozenset()
    words = [w.strip() for w in text.split(",")]
    if len(words) > MAX_INDEX // 32:
        raise ValueError(f"an hwloc bitmap of {len(words)} words: no node has "
                         f"{MAX_INDEX} CPUs")
    bits: list[int] = []
    for pos, word in enumerate(reversed(words)):
        base = 32 * pos
        if word == _INFINITE and pos == len(words) - 1:
            bits.extend(range(base, max(base, top)))
            continue
        if not _WORD.fullmatch(word) and word:
            raise ValueError("not an hwloc bitmap (comma-separated words of 0x and at most "
                             "16 hex digits)")
        value = int(word[2:] or "0", 16) if word else 0   # hwloc elides all-zero words
        bits.extend(base + i for i in range(value.bit_length()) if value >> i & 1)
    return frozenset(bits)
