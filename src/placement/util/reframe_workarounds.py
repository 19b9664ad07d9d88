"""Where this project works around ReFrame, and for which ReFrame versions.

Each workaround is applied only on the ReFrame versions it was checked against
(``first`` to ``last``, by major.minor); on any other version ReFrame's own
behaviour is left alone, so a fixed ReFrame is never patched and an untested one
is not patched blindly. The table of docs/reference/workarounds.md lists the same
entries with why, how to tell the workaround is obsolete and what to watch
upstream. When moving to a new ReFrame, run those checks and either raise
``last`` or delete the workaround.

This module imports nothing from ReFrame at load time: ``config/`` files use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Workaround:
    """One ReFrame behaviour this project changes, and the ReFrame versions it is meant for."""

    name: str
    #: the file (and function) that holds it, as the README table names it
    where: str
    first: tuple[int, int]
    last: tuple[int, int]

    def applies(self, version: str | None = None) -> bool:
        """True on a ReFrame (``version``, default the installed one) in first..last."""
        return self.first <= _major_minor(version or reframe_version()) <= self.last


def reframe_version() -> str:
    import reframe
    return reframe.VERSION


def _major_minor(version: str) -> tuple[int, int]:
    parts = version.split('.')
    try:
        return int(parts[0]), int(''.join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)


#: inspect.stack() for every suppressed deprecation while test cases are instantiated
DEPRECATION_FASTPATH = Workaround('deprecation fast path',
                                  'src/placement/testlib/deprecation_fastpath.py', (4, 10), (4, 10))
#: the two "redefinition of ... generic" warnings on every command
QUIET_GENERIC = Workaround('quiet generic redefinition',
                           'config/settings.py (_quiet_generic_redefinition)', (4, 0), (4, 10))
#: the stock sge backend drops a partition's access options
SGE_ACCESS = Workaround('sge-access scheduler', 'config/common.py (SgeAccessScheduler)',
                        (4, 0), (4, 10))

#: the local scheduler signals only a job's process group: detached processes outlive it
LOCAL_SWEEP = Workaround('local job sweep', 'src/placement/util/local_jobs.py', (4, 10), (4, 10))
#: the poll loop sleeps on wall-clock differences: a clock set back stalls the run
MONOTONIC_POLL = Workaround('monotonic poll clock', 'src/placement/util/poll_clock.py',
                            (4, 10), (4, 10))

#: every results-storage option refused without polars, though only its tables need it
STORAGE_WITHOUT_POLARS = Workaround('storage without polars',
                                    'src/placement/util/storage_without_polars.py', (4, 10), (4, 10))

#: a second SIGINT during the abort leaves a job uncancelled and ReFrame waiting for it
INTERRUPT_ONCE = Workaround('interrupt once', 'src/placement/util/interrupt_once.py',
                            (4, 10), (4, 10))

ALL = (DEPRECATION_FASTPATH, QUIET_GENERIC, SGE_ACCESS, LOCAL_SWEEP, MONOTONIC_POLL,
       STORAGE_WITHOUT_POLARS, INTERRUPT_ONCE)


def enabled(w: Workaround) -> bool:
    """``w`` applies to this ReFrame and is not switched off for a comparison run.

    ``PLACEMENT_REFRAME_WORKAROUNDS=off`` disables all of them: the way to see
    whether a new ReFrame still needs them.
    """
    import os
    if os.environ.get('PLACEMENT_REFRAME_WORKAROUNDS', '').lower() == 'off':
        return False
    return w.applies()
