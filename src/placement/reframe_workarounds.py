"""Where this project works around ReFrame, and for which ReFrame versions.

Each workaround is applied only on the ReFrame versions it was checked against
(``first`` to ``last``, by major.minor); on any other version ReFrame's own
behaviour is left alone, so a fixed ReFrame is never patched and an untested one
is not patched blindly. The README's *ReFrame workarounds* table lists the same
entries: why, how to tell the workaround is obsolete, what to watch upstream.
When moving to a new ReFrame, check each entry's ``obsolete_when`` and either
raise ``last`` or delete the workaround.

This module imports nothing from ReFrame at load time: ``config/`` files use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Workaround:
    """One ReFrame behaviour this project changes, and the versions it is meant for."""

    name: str
    where: str
    first: tuple[int, int]
    last: tuple[int, int]
    why: str
    obsolete_when: str
    upstream: str

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


DEPRECATION_FASTPATH = Workaround(
    name='deprecation fast path',
    where='src/placement/testlib/deprecation_fastpath.py',
    first=(4, 10), last=(4, 10),
    why='ReFrame reads its deprecated `variables` alias for every test case inside '
        'suppress_deprecations(); user_deprecation_warning() walks the stack '
        '(inspect.stack()) before the filter drops the warning: listing the 1289 cases '
        'here takes 12-16 s instead of 5 s',
    obsolete_when='`reframe -c reframe_tests -R -l` is as fast without it '
                  '(PLACEMENT_REFRAME_WORKAROUNDS=off), or ReFrame checks the filter '
                  'before inspect.stack()',
    upstream='reframe-hpc/reframe: reframe/core/warnings.py user_deprecation_warning; '
             'load-time cost of test instantiation discussed in PR #2544',
)

QUIET_GENERIC = Workaround(
    name='quiet generic redefinition',
    where='config/settings.py (_quiet_generic_redefinition)',
    first=(4, 0), last=(4, 10),
    why="our catch-all system keeps ReFrame's name `generic` on purpose (--system generic "
        'and stored results read as usual); ReFrame logs two warning lines about '
        'redefining its builtin on every command',
    obsolete_when='`reframe -C config/settings.py -l` prints no `redefinition of` lines '
                  'with PLACEMENT_REFRAME_WORKAROUNDS=off',
    upstream='reframe-hpc/reframe: reframe/core/config.py (the redefinition warning); '
             'no issue filed upstream',
)

SGE_ACCESS = Workaround(
    name='sge-access scheduler',
    where='config/common.py (SgeAccessScheduler)',
    first=(4, 0), last=(4, 10),
    why="ReFrame's `sge` backend drops a partition's `access` options (Slurm, PBS, LSF "
        'and OAR emit them), so `-pe smp 64 -l exclusive=true` never reaches qsub',
    obsolete_when="a dry run with the stock `sge` scheduler writes the partition's "
                  '`access` lines as `#$` options (tests/test_reframe_workarounds.py)',
    upstream='reframe-hpc/reframe: reframe/core/schedulers/sge.py emit_preamble '
             '(the backend came with PR #1959)',
)

ALL = (DEPRECATION_FASTPATH, QUIET_GENERIC, SGE_ACCESS)


def enabled(w: Workaround) -> bool:
    """``w`` applies to this ReFrame and is not switched off for a comparison run.

    ``PLACEMENT_REFRAME_WORKAROUNDS=off`` disables all of them: the way to see
    whether a new ReFrame still needs them.
    """
    import os
    if os.environ.get('PLACEMENT_REFRAME_WORKAROUNDS', '').lower() == 'off':
        return False
    return w.applies()
