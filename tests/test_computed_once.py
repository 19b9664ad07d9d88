"""An attribute computed on first reading and kept (util.computed_once): a case's identity
and a value's prepared launches, read millions of times over ten thousand stored sessions."""

from __future__ import annotations

from dataclasses import dataclass

from placement.util import once


@dataclass(frozen=True)
class _Box:
    x: int

    @once
    def doubled(self) -> list[int]:
        """Twice x."""
        _Box.calls += 1
        return [2 * self.x]


_Box.calls = 0


def test_an_attribute_is_computed_on_first_reading_only_and_kept_per_instance():
    a, b = _Box(1), _Box(2)
    assert a.doubled == [2] and a.doubled is a.doubled and b.doubled == [4]
    assert _Box.calls == 2 and a == _Box(1)      # kept beside the fields, never compared
    assert _Box.__dict__["doubled"].__doc__ == "Twice x."
