"""A run in progress, as the run lock sees it (``scripts/run_lock.sh``): another process holding
the results folder's lock with ``flock``, for the tests that a second run is refused."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def is_held(lock: Path) -> bool:
    """Whether some process holds ``lock`` now (``flock -n`` cannot take it)."""
    return subprocess.run(['flock', '-n', str(lock), 'true']).returncode != 0


@contextmanager
def held_lock(lock: Path) -> Iterator[None]:
    """Hold ``lock`` in another process until the block ends (taken before it starts)."""
    holder = subprocess.Popen(['flock', str(lock), 'sleep', '60'])
    try:
        for _ in range(50):
            if is_held(lock):
                break
            time.sleep(0.1)
        yield
    finally:
        holder.kill()
