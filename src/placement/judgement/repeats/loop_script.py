"""A job's repeat loop: how many times one job launches its program.

Shared by the NPB checks (:mod:`placement.npb.loop`) and the kernels
(:mod:`placement.testlib.kernels`). The loop is a shell ``while`` with a
counter: it runs ``min_runs`` times and, between ``min_runs`` and
``max_runs``, as long as the shell condition ``more`` succeeds (default
``false``: exactly ``min_runs`` runs). That condition is where a judge of the
runs so far (adaptive repeats, :func:`placement.judgement.repeats.conditions.shell_condition`)
plugs in.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def condition(self, counter: str) -> str:
        """The ``while`` test on the shell variable ``counter`` (runs made so far)."""
        low = f'[ "${counter}" -lt {self.min_runs} ]'
        if self.max_runs == self.min_runs:
            return low
        return f'{low} || {{ [ "${counter}" -lt {self.max_runs} ] && {self.more}; }}'


def refused_count(name: str, value: int, meaning: str) -> str | None:
    """Why a run count below one is refused (zero runs would pass vacuously), else None.

    ``name`` is the ReFrame variable (``repeats``, ``launches``), ``meaning`` says
    what one run is, e.g. ``NPB cases run at least once``.
    """
    if value >= 1:
        return None
    return f'{name}={value} is not accepted: {meaning} (-S {name}=N, N >= 1)'


@dataclass(frozen=True)
class LoopScript:
    """The lines before and after the launched program (ReFrame's prerun and postrun).

    ReFrame writes a job script as ``prerun_cmds``, the launched program,
    ``postrun_cmds``; the loop opens before the program and closes after it.
    """

    before: list[str]
    after: list[str]

    def lines(self, program: str) -> list[str]:
        """The whole loop around one program line, as the job script holds it."""
        return self.before + [program] + self.after


#: The line the kernel loop prints after each launch; :func:`split_launches` reads it.
LAUNCH_MARKER = 'kernel-launch'


def launches_script(loop: RepeatLoop) -> LoopScript:
    """The plain launch loop (the kernels): the program, then ``kernel-launch n=K rc=R``."""
    before = ['kl_n=0', f'while {loop.condition("kl_n")}; do', 'kl_n=$((kl_n + 1))']
    after = ['kl_rc=$?', f'echo "{LAUNCH_MARKER} n=$kl_n rc=$kl_rc"', 'done']
    return LoopScript(before, after)


def split_launches(text: str) -> list[tuple[int, str]]:
    """``(rc, output)`` of each launch, in order, from a job's stdout.

    A launch's output is everything after the previous marker (the first one
    also holds what the job printed before the loop, e.g. the binding probe).
    Output after the last marker (an unfinished launch) is not a launch.
    """
    out: list[tuple[int, str]] = []
    chunk: list[str] = []
    for line in text.splitlines():
        if line.startswith(LAUNCH_MARKER + ' '):
            rc = next((int(f[3:]) for f in line.split() if f.startswith('rc=')
                       and f[3:].lstrip('-').isdigit()), -1)
            out.append((rc, '\n'.join(chunk)))
            chunk = []
        else:
            chunk.append(line)
    return out
