"""The argument types several commands share: each turns a typed word into a value, or into
argparse's one-line usage error (exit 2) saying what is accepted."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """A count of threads or ranks: a whole number of 1 or more."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def fraction(text: str) -> float:
    """A minimum effect as typed: a fraction (0.03) or a percentage (3%)."""
    try:
        x = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        x = -1.0
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"invalid minimum effect {text!r} "
                                         "(a fraction such as 0.03, or 3%)")
    return x


def session_count(text: str) -> int:
    """How many sessions a reference file keeps per variable: 1 to 1000."""
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"invalid session count {text!r} "
                                         "(a whole number from 1 to 1000)")
    return int(text)


def percent(text: str) -> float:
    """A percentage of 0 or more (NaN is none)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:      # also NaN
        raise argparse.ArgumentTypeError(f"expected a percentage of 0 or more, got {text!r}")
    return value
