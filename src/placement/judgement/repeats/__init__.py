"""The adaptive repeat loop inside a job: the judge asked, between repeats, whether the runs so
far already decide (:mod:`.loop_script` writes the loop, :mod:`.judge_cli` answers it). It must
stay importable without ReFrame.
"""

from . import judge_cli, loop_script

__all__ = ["judge_cli", "loop_script"]
