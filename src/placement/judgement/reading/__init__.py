"""Reading runs: ReFrame's run reports become cases, each with its node and its values.

:mod:`.run_report` reads a run report (or several) into :class:`~.run_report.Case` objects,
:mod:`.session_info` the session's times and host, :mod:`.summary` the summaries of a value's
samples, :mod:`placement.judgement.reading.family` a family test's case as its members'
cases. Every other room of :mod:`placement.judgement` starts from what is read here.
"""

from . import direction, family, run_report, session_info, summary

__all__ = ["direction", "family", "run_report", "session_info", "summary"]
