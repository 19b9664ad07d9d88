"""NPB's job logic: finding the binaries, the job's repeat loop and time budget, and
reading NPB's output.

:mod:`.npb_locate` finds the benchmark programs, :mod:`.npb_budget` fits the repeats into
the job's time limit, :mod:`.npb_loop` writes the job's loop around them (the judge's
:mod:`placement.judgement.repeat_loop`) and :mod:`.npb_output` reads what NPB printed.

The front door of :mod:`placement.npb`: other groups import from here only. ReFrame's
NPB check (:mod:`placement.testlib.npb`) is its user; this group does not need ReFrame.
"""

__all__ = ["npb_budget", "npb_locate", "npb_loop", "npb_output"]
