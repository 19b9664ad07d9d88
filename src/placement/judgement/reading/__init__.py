"""Reading runs: ReFrame's run reports become cases, each with its node and its values.

:mod:`.run_report` reads a run report (or several) into :class:`~.run_report.Case` objects,
:mod:`.session_info` the session's times and host, :mod:`.summary` the summaries of a value's
samples. Every other room of :mod:`placement.judgement` starts from what is read here.
"""

from . import direction, run_report, session_info, summary

__all__ = ["direction", "run_report", "session_info", "summary"]
