"""Acceptance runs: what a run's parts conclude, in one summary line, and the seeded baselines.

``scripts/acceptance.sh`` runs ReFrame within a time box and keeps the run reports of one
run (one or more parts, when ``--resume`` went on after a time box); everything it concludes
from them is here, behind ``placement acceptance`` (:mod:`placement.cli.acceptance`):

* :mod:`.parts` reads a run's parts once and their cases as the last attempt left them;
  :mod:`.case_kinds` says what each case counts as and the words of its line;
* :mod:`.regressions` judges the run's values against the baseline (the one regression
  rule); :mod:`.previous_run` reads ReFrame's comparison with the previous run
  (information only); :mod:`.baseline_notes` says what is wrong with the baseline itself;
* :mod:`.second_session` is the confirmation session's plumbing, :mod:`.confirmation`
  decides which first-session failures it confirms, :mod:`.distributed` selects the checks
  and nodes of a ``--distribute`` run's confirmation;
* :mod:`.judged_system` says which system a run is judged as (its baseline and name);
  :mod:`.findings` gathers what the run found, :mod:`.summary_lines` words it,
  :mod:`.outcome` decides the outcome word and exit status (0 pass, 1 fail, 3 unfinished,
  4 incomplete), :mod:`.run_summary` puts them together;
* :mod:`.resume` is the time box's plumbing (a cut run resumed, its sessions selected);
  :mod:`.waiting` names the cases whose job still waited on the scheduler when it closed;
* :mod:`.comparison_health` says whether ReFrame's comparison with the previous run could be
  trusted, :mod:`.peer_lines` holds a partition's nodes against each other;
* :mod:`.seed_baselines` writes the studies' NPB results as reference files
  (``python -m placement.acceptance.seed_baselines``).

The front door of :mod:`placement.acceptance`: other groups import from here only. It
sits above :mod:`placement.judgement` and below :mod:`placement.cli`.
"""

from .case_kinds import classify, fail_text
from .judged_system import UNKNOWN, judged_system
from .outcome import EXIT_STATUS, decide, unjudged
from .parts import readable
from .previous_run import compare_rows, previous_run_info
from .regressions import Judged, find_regressions, judge_values
from .resume import hung_cases, resume_plan, session_filter
from .record import VerdictRecord
from .run_summary import summary, verdict_record
from .second_session import not_a_confirmation, selection, to_confirm

__all__ = [
    # modules
    "baseline_notes", "case_kinds", "comparison_health", "confirmation", "distributed",
    "findings", "judged_system",
    "outcome", "parts", "peer_lines", "previous_run", "record", "regressions", "resume",
    "run_summary",
    "second_session", "waiting", "seed_baselines", "summary_lines",
    # names
    "EXIT_STATUS", "Judged", "classify", "compare_rows", "decide", "fail_text",
    "find_regressions", "hung_cases", "judged_system", "judge_values", "not_a_confirmation",
    "previous_run_info", "readable",
    "resume_plan", "selection", "session_filter", "summary", "to_confirm", "unjudged",
    "verdict_record",
    "UNKNOWN", "VerdictRecord",
]
