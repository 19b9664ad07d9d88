"""Parsing and formatting of CPU and node lists (``0-3,8``) and hwloc bitmask strings."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import PlacementError


def parse_list(text: str, what: str = "CPU") -> list[int]:
    """Parse ``"0,4,1-3"`` (commas or blanks) into an ordered list, ranges expanded.

    Order is kept because an affinity list is an order, not a set.
    """
    out: list[int] = []
    for item in text.replace(",", " ").split():
        if "-" in item:
            lo, _, hi = item.partition("-")
            if not (lo.isdigit() and hi.isdigit()) or int(lo) > int(hi):
                raise PlacementError(
                    f"bad {what} range {item!r}: expected N-M with N <= M (e.g. 0-3)")
            out.extend(range(int(lo), int(hi) + 1))
        elif item.isdigit():
            out.append(int(item))
        else:
            raise PlacementError(
                f"bad {what} entry {item!r}: expected a non-negative number or a range N-M")
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


def parse_bitmask(text: str) -> frozenset[int]:
    """Decode an hwloc bitmap string (``0x000000ff,0xffffffff``, most significant word first)."""
    if not text:
        return frozenset()
    bits: set[int] = set()
    words = [w.strip() for w in text.split(",")]
    for pos, word in enumerate(reversed(words)):
        if word.startswith("0xf...f"):  # infinite set marker: no finite bits beyond
            word = word[len("0xf...f"):] or "0x0"
        value = int(word, 16) if word else 0  # hwloc elides all-zero words
        base = 32 * pos
        while value:
            low = value & -value
            bits.add(base + low.bit_length() - 1)
            value ^= low
    return frozenset(bits)
