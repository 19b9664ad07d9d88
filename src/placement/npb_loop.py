"""The NPB job's repeat loop, written in one place.

One NPB case is one job: the binding probe, for an oversubscribed case the
same case at the full count (its wall time sets the collapse budget), then the
program repeated under a ``timeout`` watchdog, each run followed by a marker
line that :mod:`placement.npb_output` reads back::

    npb-full threads=64 rc=0 wall=4.512
    npb-run rep=3 rc=0 limit=184 wall=12.034

ReFrame writes a job script as ``prerun_cmds``, the launched program,
``postrun_cmds``; the loop opens before the program and closes after it, so
:func:`script` returns both halves together and the check assigns them in one
hook. The loop is a ``while`` with a counter: it runs ``min_runs`` times and,
between ``min_runs`` and ``max_runs``, as long as the shell condition ``more``
succeeds (default ``false``: exactly ``min_runs`` runs). That condition is the
one place where a judge of the runs so far (adaptive repeats) plugs in.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import npb_budget

#: Shell functions the loop uses: elapsed seconds since a ``date +%s.%N`` stamp,
#: and the collapse budget from the full-count wall time.
_FUNCTIONS = [
    'npb_elapsed() { awk -v t0="$1" -v t1="$(date +%s.%N)" '
    "'BEGIN { printf \"%.3f\", t1 - t0 }'; }",
    'npb_collapse_limit() { awk -v w="$1" -v f=%g -v m=%g '
    "'BEGIN { l = f * w; if (l < m) l = m; printf \"%%.2f\", l }'; }"
    % (npb_budget.COLLAPSE_FACTOR, npb_budget.MIN_COLLAPSE_S),
]

#: How the program line refers to the current run's watchdog budget.
LIMIT_ARG = '"$npb_limit"'


@dataclass(frozen=True)
class RepeatLoop:
    """How many runs a job makes, and the hook that may ask for more."""

    #: Runs always made.
    min_runs: int
    #: Runs never exceeded; equal to ``min_runs`` for a fixed count.
    max_runs: int
    #: Shell condition checked after each run from ``min_runs`` on: success runs once more.
    more: str = 'false'

    def __post_init__(self):
        if self.min_runs < 1 or self.max_runs < self.min_runs:
            raise ValueError(f'repeats must be at least 1 and min <= max '
                             f'(got min {self.min_runs}, max {self.max_runs})')

    @classmethod
    def fixed(cls, repeats: int) -> 'RepeatLoop':
        """Exactly ``repeats`` runs, as the studies did."""
        return cls(repeats, repeats)

    def condition(self) -> str:
        """The ``while`` test: below the minimum, or below the cap and ``more`` says go on."""
        low = f'[ "$npb_rep" -lt {self.min_runs} ]'
        if self.max_runs == self.min_runs:
            return low
        return f'{low} || {{ [ "$npb_rep" -lt {self.max_runs} ] && {self.more}; }}'


@dataclass(frozen=True)
class LoopScript:
    """The lines before and after the launched program (ReFrame's prerun and postrun)."""

    before: list[str]
    after: list[str]

    def lines(self, program: str) -> list[str]:
        """The whole loop around one program line, as the job script holds it."""
        return self.before + [program] + self.after


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
        f'while {loop.condition()}; do',
        'npb_rep=$((npb_rep + 1))',
        'npb_t0=$(date +%s.%N)',
    ]
    after = [
        'npb_rc=$?',
        'echo "npb-run rep=$npb_rep rc=$npb_rc limit=$npb_limit wall=$(npb_elapsed "$npb_t0")"',
        'done',
    ]
    return LoopScript(before, after)
