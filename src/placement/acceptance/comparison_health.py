"""Whether an acceptance run's evidence is all there: the comparison and the results database.

ReFrame reports a failed ``--performance-compare`` or a failed store on its
standard output and goes on; an empty comparison, or one whose previous values
are all ``<no data>`` (a corrupt or replaced database, a moved checkout), looks
like a clean one unless someone reads the rows. Each such gap is one phrase
here; the summary names them in the ACCEPTANCE line and never calls the run a
plain pass (``INCOMPLETE``), because "no regression found" is not "compared
and found none".
"""

from __future__ import annotations

import re
from pathlib import Path

from . import distributed

#: ReFrame's lines (frontend/cli.py) when a comparison or a store fails.
_COMPARE_FAILED = re.compile(r"failed to generate performance comparison:?[ \t]*(.*)")
_NOT_STORED = re.compile(r"failed to store results in the database:?[ \t]*(.*)")
#: What ReFrame puts in the previous run's columns when its sessions hold no value.
NO_DATA = "<no data>"
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _text(path: Path) -> str:
    try:
        return _COLOUR.sub("", path.read_text(errors="replace"))
    except OSError:
        return ""


def checks_of(cases: list[dict]) -> set[str]:
    """The checks a run measured values of (a skipped case measured nothing; a check with
    no performance variable has no row in ReFrame's comparison), by name (ReFrame's
    per-node copies of ``--distribute`` as their check): what two runs must share before
    an empty comparison means anything."""
    return {distributed.check_name(str(tc.get("display_name") or tc.get("name") or ""))
            for tc in cases if not tc.get("fixture") and tc.get("result") in ("pass", "fail")
            and tc.get("perfvalues")}


def comparison_gaps(compare: Path, rows: list[dict[str, str]],
                    shared: bool = True) -> list[str]:
    """``not compared: ...`` phrases for a comparison with the previous run that holds no
    evidence, empty when it compared values.

    ``rows`` are the CSV rows as :func:`placement.acceptance.previous_run.compare_rows` reads
    them; ``shared``: whether the previous run ran any check this one did (an empty
    comparison of two runs with nothing in common, a partition run after a plain run of the
    same mode, is nothing to compare with, not evidence lost).
    """
    if not compare.is_file():
        return [f"not compared: no comparison file {compare} to read"]
    m = _COMPARE_FAILED.search(_text(compare))
    if m:
        why = m.group(1).strip() or "no reason given"
        return [f"not compared: ReFrame could not compare with the previous run ({why})"]
    if not rows and not shared:
        return []
    if not rows:
        return ["not compared: the comparison with the previous run is empty (the sessions "
                "of this run or the previous one are not in the results database)"]
    # a few new values have no previous one (cases added since): that is no gap; none
    # compared at all is
    missing = [r for r in rows if any(v.strip() == NO_DATA for v in r.values())]
    if len(missing) == len(rows):
        return [f"not compared: {len(missing)} of {len(rows)} value(s) have no previous value "
                f"({NO_DATA}: the previous run's sessions are not in the results database)"]
    return []


def not_stored(parts: list[Path]) -> list[str]:
    """One phrase per run part ReFrame could not store in its results database (read from
    the output kept beside its report): the next run will have nothing to compare with."""
    out = []
    for part in parts:
        m = _NOT_STORED.search(_text(part.with_suffix(".out")))
        if m:
            out.append(f"not stored in the results database: {m.group(1).strip()} "
                       f"({part.name}; the next run has no previous values)")
    return out
