"""The adaptive repeat loop inside a job: the judge asked, between repeats, whether the runs so
far already decide (:mod:`.loop_script` writes the loop, :mod:`.conditions` the shell
condition it asks with, :mod:`.judge` answers it as ``placement judge``). It must stay
importable without ReFrame.
"""

from . import conditions, judge, loop_script

__all__ = ["conditions", "judge", "loop_script"]
