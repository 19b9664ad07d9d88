"""NPB's job logic: finding the binaries, the job's repeat loop and time budget, and
reading NPB's output.

:mod:`.npb_locate` finds the benchmark programs, :mod:`.npb_budget` fits the repeats into
the job's time limit, :mod:`.npb_loop` writes the job's loop around them (the judge's
:mod:`placement.judgement.repeat_loop`) and :mod:`.npb_output` reads what NPB printed;
:mod:`.npb_build` and :mod:`.npb_install` build NPB from a source tarball where Spack is
not used (``placement npb build``); :mod:`.npb_states` says which runs are too short for one
baseline session to judge.

The front door of :mod:`placement.npb`: other groups import from here only. ReFrame's
NPB check (:mod:`placement.testlib.npb`) is its user; this group does not need ReFrame.
"""

__all__ = ["npb_budget", "npb_build", "npb_install", "npb_locate", "npb_loop", "npb_output",
           "npb_states"]
