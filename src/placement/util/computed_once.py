"""An attribute computed on first reading and kept on the instance, without a lock.

``functools.cached_property`` takes a lock shared by every instance of the class on each
first reading (up to Python 3.12, which dropped it): a report over ten thousand stored
sessions reads a case's identity and a value's prepared launches for the first time
millions of times, and the lock was a tenth of its time. Nothing here is shared between
threads; two threads reading one attribute at once would compute the same value twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class once(Generic[T]):     # noqa: N801 -- read as a decorator, as cached_property is
    """``@once`` over a method: its value on first reading, kept in the instance's
    ``__dict__`` (which later readings find first: this is a non-data descriptor)."""

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value
