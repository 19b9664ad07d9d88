"""The *judge* stage: runs read, judged over sessions and against peers, baselines kept.

Its rooms, each entered through its own front door, in the order they build on each other:

* :mod:`.reading`: ReFrame's run reports become cases (a case's node and values read once);
* :mod:`.verdict`: a run's values judged against their baseline's sessions, the node as a
  whole, its load, the fixed limits, the reference intervals and the change points;
* :mod:`.peers`: a partition's nodes judged against each other in one session;
* :mod:`.baselines`: the reference files, their samples, a partition's pooled entry;
* :mod:`.repeats`: the same judge inside a job (``placement judge``), between repeats, so it
  must stay importable without ReFrame.

:mod:`.rules` holds the settings of both verdicts.

The front door of :mod:`placement.judgement`: other groups import from here only. It
depends on :mod:`placement.util` alone, not on the engine: a verdict is about numbers.
"""

from . import baselines, peers, reading, repeats, rules, verdict
from .baselines.store import git_commit
from .verdict.intervals import entry_name, parse_entry
from .repeats.loop_script import LoopScript, RepeatLoop
from .reading.run_report import CONFIRMATION_EXTRA, Case, PerfValue, RunReport, is_primary_var
from .reading.summary import Summary, fmt, number, summarize
from .verdict.over_sessions import two_modes

__all__ = [
    # rooms and settings
    "baselines", "peers", "reading", "repeats", "rules", "verdict",
    # names
    "CONFIRMATION_EXTRA", "Case", "LoopScript", "PerfValue", "RepeatLoop", "RunReport",
    "Summary", "entry_name", "fmt", "git_commit", "is_primary_var", "number",
    "parse_entry", "summarize", "two_modes",
]
