"""Where the suite's files are, for tests that run from a checkout or an installed view."""

from __future__ import annotations

import os
from pathlib import Path


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
