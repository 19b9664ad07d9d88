"""Where the suite's files are, for tests that run from a checkout or an installed view."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import PlacementError

#: A system's name as files are named after it: letters, digits, '_', '.', '-', starting
#: with a letter or digit (so never '..', a '/' or a line break), at most 100 of them: it
#: goes into file names with up to about 70 characters more (a confirmation's run report,
#: ``confirm-report-acceptance-<name>-<mode>-<stamp>.json``, and its temporary files),
#: which must stay within 255 bytes
_SYSTEM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def env_path(name: str, default: Path | str | None = None) -> Path | None:
    """The folder the environment variable ``name`` names, ``default`` when it is unset;
    empty, blank or holding a line break it is one line (a newline in PLACEMENT_RESULTS
    split the acceptance line in two, a blank one made every case fail)."""
    value = os.environ.get(name)
    if value is None:
        return None if default is None else Path(default)
    why = ("empty" if value == "" else "blank" if not value.strip() else
           "a path with a line break" if any(c in value for c in "\n\r\0") else "")
    if why:
        raise PlacementError(f"{name} is {why}: expected the path of a folder, or leave it "
                             "unset for the default")
    return Path(value)


def repo_root() -> Path:
    """The checkout holding reframe_tests/ and src/ (``PLACEMENT_ROOT`` overrides)."""
    env = env_path("PLACEMENT_ROOT")
    if env is not None:
        return env
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "reframe_tests").is_dir() and (parent / "src").is_dir():
            return parent
    return Path.cwd()


def baseline_dir() -> Path:
    """Reference files, one YAML per system (``PLACEMENT_BASELINES`` overrides)."""
    return env_path("PLACEMENT_BASELINES") or repo_root() / "config" / "baselines"


def reports_dir() -> Path:
    """Where ``placement report`` writes (``PLACEMENT_REPORTS`` overrides, as it does for
    scripts/acceptance.sh; else ``reports/`` here)."""
    return env_path("PLACEMENT_REPORTS") or Path("reports")


def baseline_file(system: str) -> Path:
    """A system's reference file (``<system>.yaml``; a partition suffix is dropped)."""
    return baseline_dir() / f"{system.split(':')[0]}.yaml"


def system_name(name: str, what: str = "system name") -> str:
    """``name`` when it can name a system's files; else a :class:`PlacementError`.

    The whole string must match (``fullmatch``, not ``$``, which also passes a trailing
    newline), so a name never leads a path out of its folder.
    """
    if not isinstance(name, str) or not _SYSTEM_NAME.fullmatch(name):
        shown = repr(name) if len(repr(name)) <= 80 else repr(name)[:77] + "..."
        raise PlacementError(f"invalid {what} {shown}: use up to 100 letters, digits, '_', "
                             "'.' and '-', starting with a letter or digit")
    return name
