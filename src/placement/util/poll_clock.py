"""ReFrame's poll loop on the monotonic clock, so that a wall clock step never stalls a run.

ReFrame 4.10's execution policies time their polling with ``time.time()``: the
controller sleeps ``(polls + 1) / rate - (now - last_reset)``. When the wall clock
is set back (NTP stepping a drifted clock, a hand correction) by an hour, ``now -
last_reset`` is an hour negative and ReFrame sleeps that hour with a finished job
unreaped; a run without a time box then does not end. Every ``time.time()`` in that
module measures an interval, so the monotonic clock (which never steps) is the right
one for all of them (``tests/test_local_jobs.py`` sets ReFrame's clock back an hour during a
job, for ReFrame alone: with this off the run stalls). Installed only on the ReFrame versions of
:data:`placement.util.reframe_workarounds.MONOTONIC_POLL`.
"""

from __future__ import annotations

import time
import types

from .reframe_workarounds import MONOTONIC_POLL, enabled

#: ``time`` as the policies module sees it: intervals on the monotonic clock
MONOTONIC_TIME = types.SimpleNamespace(time=time.monotonic, sleep=time.sleep)


def install() -> None:
    """Point ReFrame's execution policies at :data:`MONOTONIC_TIME`."""
    if not enabled(MONOTONIC_POLL):
        return
    from reframe.frontend.executors import policies
    if policies.time is time:
        policies.time = MONOTONIC_TIME
