"""Helpers the throw-away test clusters share: a free port, waiting for a daemon, stopping one."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable


def free_port() -> int:
    """A TCP port nothing listens on now (the clusters' daemons take their own)."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_until(what: str, ok: Callable[[], bool], timeout: float, error: type[Exception],
               logs: Callable[[], str], poll: float = 0.3) -> None:
    """Poll ``ok`` until it holds; else raise ``error`` naming ``what`` with the daemons' logs."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ok():
            return
        time.sleep(poll)
    raise error(f'{what} did not happen within {timeout:.0f} s\n{logs()}')


def terminate(pid: int, alive: Callable[[], bool], timeout: float,
              tick: Callable[[], None] = lambda: None) -> None:
    """SIGTERM ``pid``, wait up to ``timeout`` for ``alive()`` to turn false (``tick``
    each poll, e.g. to reap a child), then SIGKILL it if it still lives."""
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end and alive():
        tick()
        time.sleep(0.2)
    if alive():
        os.kill(pid, signal.SIGKILL)
