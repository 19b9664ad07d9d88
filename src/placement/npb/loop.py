"""The NPB job's repeat loop, written in one place.

One NPB case is one job: the binding probe, for an oversubscribed case the
same case at the full count (its wall time sets the collapse budget), then the
program repeated under a ``timeout`` watchdog, each run followed by a marker
line that :mod:`placement.npb.output` reads back::

    npb-full threads=64 rc=0 wall=4.512
    npb-run rep=3 rc=0 limit=184 wall=12.034

ReFrame writes a job script as ``prerun_cmds``, the launched program,
``postrun_cmds``; the loop opens before the program and closes after it, so
:func:`script` returns both halves together and the check assigns them in one
hook. The loop itself (a counter, a minimum, a cap and the condition where a
judge of the runs so far plugs in) is :class:`placement.judgement.repeats.loop_script.RepeatLoop`,
shared with the kernels.
"""

from __future__ import annotations

from ..judgement import LoopScript, RepeatLoop
from . import budget

__all__ = ['LIMIT_ARG', 'LoopScript', 'RepeatLoop', 'script']

#: Shell functions the loop uses: elapsed seconds since a ``date +%s.%N`` stamp,
#: and the collapse budget from the full-count wall time.
_FUNCTIONS = [
    'npb_elapsed() { awk -v t0="$1" -v t1="$(date +%s.%N)" '
    "'BEGIN { printf \"%.3f\", t1 - t0 }'; }",
    'npb_collapse_limit() { awk -v w="$1" -v f=%g -v m=%g '
    "'BEGIN { l = f * w; if (l < m) l = m; printf \"%%.2f\", l }'; }"
    % (budget.COLLAPSE_FACTOR, budget.MIN_COLLAPSE_S),
]

#: How the program line refers to the current run's watchdog budget.
LIMIT_ARG = '"$npb_limit"'


def script(loop: RepeatLoop, run_budget_s: float, full_count: str | None = None,
           full_threads: int = 0) -> LoopScript:
    """The job's loop around the program line.

    ``full_count`` is the complete shell command of the full-count comparison
    run (already quoted, output redirected); with it, each run's budget is the
    collapse budget measured from that run instead of ``run_budget_s``.
    """
    before = list(_FUNCTIONS) + [f'npb_limit={run_budget_s:.0f}']
    if full_count is not None:
        before += [
            'npb_t0=$(date +%s.%N)',
            full_count,
            'npb_rc=$?',
            'npb_full=$(npb_elapsed "$npb_t0")',
            f'echo "npb-full threads={full_threads} rc=$npb_rc wall=$npb_full"',
            'npb_limit=$(npb_collapse_limit "$npb_full")',
        ]
    before += [
        'npb_rep=0',
        f'while {loop.condition("npb_rep")}; do',
        'npb_rep=$((npb_rep + 1))',
        'npb_t0=$(date +%s.%N)',
    ]
    after = [
        'npb_rc=$?',
        'echo "npb-run rep=$npb_rep rc=$npb_rc limit=$npb_limit wall=$(npb_elapsed "$npb_t0")"',
        'done',
    ]
    return LoopScript(before, after)
