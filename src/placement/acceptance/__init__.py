"""Acceptance runs: counting a run's cases into one summary line, and seeding baselines.

:mod:`.run` counts an acceptance run's cases and writes its summary line and exit
status; :mod:`.confirmation` decides which first-session failures a second session
confirms; :mod:`.comparison_health` says whether ReFrame's comparison with the previous
run could be trusted; :mod:`.seed_baselines` writes the studies' NPB results as
reference files (``python -m placement.acceptance.seed_baselines``).

The front door of :mod:`placement.acceptance`: other groups import from here only. It
sits above :mod:`placement.judgement` and below :mod:`placement.cli`.
"""

__all__ = ["comparison_health", "confirmation", "run", "seed_baselines"]
