"""Shared fixtures: where the checkout is and which ``reframe`` to run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope='session')
def root() -> Path:
    """The checkout (config/, reframe_tests/, scripts/)."""
    return ROOT


@pytest.fixture(scope='session')
def reframe_bin() -> str:
    """The venv's ReFrame (``make venv``), else one on PATH: the version the suite pins."""
    for cand in (ROOT / '.venv' / 'bin' / 'reframe', shutil.which('reframe')):
        if cand and os.access(cand, os.X_OK):
            return str(cand)
    pytest.fail('reframe not found: run `make venv`')
