"""ReFrame stops on its first SIGINT and ignores the ones that follow, as it does on SIGTERM.

ReFrame 4.10 ends on SIGTERM and SIGHUP through a handler that first ignores any further
SIGINT, SIGHUP and SIGTERM (``_force_exit`` in ``reframe/frontend/executors``), but leaves
SIGINT to Python's default handler: every SIGINT raises ``KeyboardInterrupt``. On the first
one ReFrame aborts its cases: for each, it cancels the job and then waits for it to end
(``RegressionTask.abort``). A second SIGINT raised while the cancel is still under way
stops the cancel before the job is signalled, and the wait that follows waits for a job
nobody cancelled: a job that hangs keeps ReFrame for good. GNU ``timeout`` sends every
signal it passes on twice (to ReFrame, then to ReFrame's process group), so a time box
or a Ctrl-C handed on by scripts/acceptance.sh gives ReFrame two SIGINTs microseconds
apart; on a loaded machine ReFrame may run between them, and the run then hangs until
``timeout -k`` kills ReFrame, without its report.

Here the first SIGINT ignores the three from then on and raises ``KeyboardInterrupt`` as
before, so ReFrame's abort, report and exit are unchanged. Installed from
``config/common.py``, only where Python's own handler is in place (a SIGINT ignored from
the start stays ignored), on the ReFrame versions of
:data:`placement.util.reframe_workarounds.INTERRUPT_ONCE` (docs/reference/workarounds.md).
"""

from __future__ import annotations

import signal
from types import FrameType

from .reframe_workarounds import INTERRUPT_ONCE, enabled

#: the signals that end ReFrame gracefully, ignored once one SIGINT has come
GRACEFUL = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)


def interrupt_once(signum: int, frame: FrameType | None) -> None:
    """The SIGINT handler: ReFrame is stopping, so later stop signals are ignored."""
    for sig in GRACEFUL:
        signal.signal(sig, signal.SIG_IGN)
    raise KeyboardInterrupt


def install() -> None:
    """Make :func:`interrupt_once` the SIGINT handler in place of Python's default one."""
    if not enabled(INTERRUPT_ONCE):
        return
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, interrupt_once)
    except ValueError:     # not the main thread (a configuration loaded elsewhere): leave it
        pass
