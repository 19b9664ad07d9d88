"""The outcome of an acceptance run: its one word and exit status, and the record of a run
the summary could not judge.
"""

from __future__ import annotations

import traceback
from pathlib import Path

from ..util import PlacementError
from .case_kinds import classify
from .parts import by_signal, final_cases, readable
from .record import NOT_JUDGED, Finding, VerdictRecord
from .waiting import by_queue

#: the exit status of each outcome of the ACCEPTANCE line
EXIT_STATUS = {"PASS": 0, "FAIL": 1, "UNFINISHED": 3, "INCOMPLETE": 4}


def decide(*, cut_short: bool, failed: bool, complete: bool,
           readable: bool = True) -> tuple[str, int]:
    """The outcome word of the ACCEPTANCE line and the run's exit status, decided here only.

    * no readable run report: ``FAIL`` (1), cut short or not: nothing was left to judge;
    * the time box cut the run: ``UNFINISHED`` (3), a failure to finish, never a regression;
    * ``failed`` (a failed case, a regression, a node line that fails the run):
      ``FAIL`` (1); no judgement turns a failure into a pass;
    * not ``complete`` (missing evidence, or a run the summary could not judge):
      ``INCOMPLETE`` (4);
    * else ``PASS`` (0).
    """
    word = ("FAIL" if not readable else "UNFINISHED" if cut_short else "FAIL" if failed
            else "PASS" if complete else "INCOMPLETE")
    return word, EXIT_STATUS[word]


def failure_cause(exc: BaseException) -> str:
    """One line for an exception the summary met: a user error's own message, else its
    type, message and the innermost place it was raised (``over_sessions.py:591``)."""
    if isinstance(exc, PlacementError):
        text = str(exc)
    else:
        where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        text = f"{type(exc).__name__}: {exc}" + "".join(
            f" ({Path(f.filename).name}:{f.lineno} {f.name})" for f in where)
    text = " ".join(text.split())
    return text if len(text) <= 400 else text[:397] + "..."


def unjudged(parts: list[Path], system: str, mode: str, cut_short: bool, notes: list[str],
             exc: BaseException) -> VerdictRecord:
    """The record of a run the summary could not judge (a baseline it cannot read, a value
    the verdict cannot take): its one ACCEPTANCE line, ReFrame's own results counted, the
    cause named once; the cause is the record's last note, and its gap
    (:data:`~.record.NOT_JUDGED`) says that nothing was judged.

    Never a PASS: ``INCOMPLETE`` (exit 4) when ReFrame passed every case, ``FAIL`` (1)
    when it failed one (no judgement turns a failure into a pass), ``UNFINISHED`` (3)
    when the time box cut the run."""
    cause = f"{NOT_JUDGED}: {failure_cause(exc)}"
    try:
        good, _ = readable(parts)
        signalled, queued = by_signal(good), by_queue(good)
        kinds = [classify(tc, cut_short, key in signalled, key in queued)
                 for key, tc in final_cases(good).items()]
        failed = sum(k in ("fail", "unfinished", "hung") for k in kinds)
        counts = (f"{kinds.count('pass')} passed, {failed} failed "
                  f"report={good[-1].path if good else '(none readable)'}")
    except Exception as again:   # noqa: BLE001 - the reports themselves: say so too
        failed, counts = 0, f"results not counted ({failure_cause(again)})"
    outcome, status = decide(cut_short=cut_short, failed=failed > 0, complete=False)
    why = [*notes, cause]
    line = f"ACCEPTANCE {system} {mode}: {outcome} {counts} ({'; '.join(why)})"
    return VerdictRecord(system, mode, outcome, status, [str(p) for p in parts], {}, [line],
                         [Finding("ACCEPTANCE", line, system, data={"outcome": outcome})],
                         gaps=[NOT_JUDGED], notes=why)
