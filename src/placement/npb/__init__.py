"""NPB's job logic: finding the binaries, the job's repeat loop and time budget, and
reading NPB's output.

:mod:`.locate` finds the benchmark programs, :mod:`.budget` fits the repeats into
the job's time limit, :mod:`.loop` writes the job's loop around them (the judge's
:mod:`placement.judgement.repeats.loop_script`) and :mod:`.output` reads what NPB printed;
:mod:`.build` and :mod:`.install` build NPB from a source tarball where Spack is
not used (``placement npb build``); :mod:`.states` says which runs are too short for one
baseline session to judge.

The front door of :mod:`placement.npb`: other groups import from here only. ReFrame's
NPB check (:mod:`placement.testlib.npb`) is its user; this group does not need ReFrame.
"""

from . import budget, build, install, locate, loop, output, states

__all__ = ["budget", "build", "install", "locate", "loop", "output",
           "states"]
