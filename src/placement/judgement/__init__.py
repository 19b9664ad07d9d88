"""The *judge* stage: samples, statistics, verdicts, baselines and change points.

ReFrame's run reports become cases (:mod:`.runreport`, summaries in :mod:`.stats`, the
fixed-limit checks in :mod:`.guards`, the node's load over a run in :mod:`.node_load`); a run's values are judged against their
baseline's sessions (:mod:`.verdict` with :mod:`.moderation`); reference files keep the
intervals ReFrame reads (:mod:`.intervals`, written by :mod:`.baselines`) and the
per-launch samples (:mod:`.baseline_samples`), with the counts that tell a whole file from
a cut one (:mod:`.baseline_contents`), and a partition's pooled entry beside its nodes'
(:mod:`.baseline_pool`); :mod:`.changepoints` finds steps in
history. :mod:`.repeat_loop` and :mod:`.judge_cli` (``placement judge``) put the same
judge inside a job, so it must stay importable without ReFrame.

The front door of :mod:`placement.judgement`: other groups import from here only. It
depends on :mod:`placement.util` alone, not on the engine: a verdict is about numbers.
"""

from .baselines import git_commit
from .intervals import entry_name, parse_entry
from .judge_cli import fraction_arg
from .repeat_loop import LoopScript, RepeatLoop
from .runreport import CONFIRMATION_EXTRA, Case, PerfValue, RunReport, is_primary_var
from .stats import Summary, fmt, number, summarize
from .verdict import two_modes

__all__ = [
    # modules
    "baseline_contents", "baseline_pool", "baseline_samples", "baselines", "changepoints", "guards", "intervals",
    "judge_cli", "moderation", "node_load", "node_shift", "peer_cases", "peer_stats", "peers",
    "repeat_loop", "rules", "runreport",
    "session_info", "stats", "verdict",
    # names
    "CONFIRMATION_EXTRA", "Case", "LoopScript", "PerfValue", "RepeatLoop", "RunReport",
    "Summary", "entry_name", "fmt", "fraction_arg", "git_commit", "is_primary_var", "number",
    "parse_entry", "summarize", "two_modes",
]
