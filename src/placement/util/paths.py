"""Where the suite's files are, for tests that run from a checkout or an installed view."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import PlacementError

#: A system's name as files are named after it: letters, digits, '_', '.', '-', starting
#: with a letter or digit (so never '..', a '/' or a line break)
_SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def repo_root() -> Path:
    """The checkout holding reframe_tests/ and src/ (``PLACEMENT_ROOT`` overrides)."""
    env = os.environ.get("PLACEMENT_ROOT")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "reframe_tests").is_dir() and (parent / "src").is_dir():
            return parent
    return Path.cwd()


def baseline_dir() -> Path:
    """Reference files, one YAML per system (``PLACEMENT_BASELINES`` overrides)."""
    return Path(os.environ.get("PLACEMENT_BASELINES", repo_root() / "config" / "baselines"))


def baseline_file(system: str) -> Path:
    """A system's reference file (``<system>.yaml``; a partition suffix is dropped)."""
    return baseline_dir() / f"{system.split(':')[0]}.yaml"


def system_name(name: str, what: str = "system name") -> str:
    """``name`` when it can name a system's files; else a :class:`PlacementError`.

    The whole string must match (``fullmatch``, not ``$``, which also passes a trailing
    newline), so a name never leads a path out of its folder.
    """
    if not isinstance(name, str) or not _SYSTEM_NAME.fullmatch(name):
        raise PlacementError(f"invalid {what} {name!r}: use letters, digits, '_', '.' and '-', "
                             "starting with a letter or digit")
    return name
