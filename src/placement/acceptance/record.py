"""The verdict record: one JSON file per judged run that every reader of the outcome reads.

Why: the summary's lines, its exit status, the report's banner and the history page must
say the same thing about a run. They did not when each read the run again or parsed the
printed lines back. So the run is judged once (:func:`placement.acceptance.run_summary.
verdict_record`), and what it concluded is written here, beside the newest run report,
atomically: the outcome word and exit status, ReFrame's counts, what the confirmation
session confirmed and dismissed, every finding with its data, the odd nodes a site acts
on (with the command that drains each, printed, never run) and the baseline's digest.

The schema is versioned (:data:`SCHEMA`); the reference docs describe each field.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..util import PlacementError, atomic, regular_file

#: the version of the record's layout; a reader refuses another
SCHEMA = 1
#: the prefix that names a run report's record (``run-report-X.json`` ->
#: ``verdict-run-report-X.json``): no ``run-report-*`` pattern takes it for a run report
PREFIX = "verdict-"
#: the largest record a reader takes (a 1,000-node partition's findings fit many times over)
MAX_BYTES = 64 * 2**20
#: the words a finding's line starts with, and what each is
KINDS = ("NODE", "NODES", "HISTORY", "REGRESSION", "FAIL", "HUNG", "WAITING", "SKIP",
         "UNDECIDED", "UNCONFIRMED", "CONFIRMED", "DISMISSED", "NOTE", "PREVIOUS", "ACCEPTANCE")
#: the outcome words and their exit status
OUTCOMES = {"PASS": 0, "FAIL": 1, "UNFINISHED": 3, "INCOMPLETE": 4}


@dataclass
class OddNode:
    """A node a peer verdict named, with what a site does about it."""

    partition: str
    node: str
    why: str
    #: the scheduler's command that drains the node with its reason (printed, never run)
    drain: str


@dataclass
class Finding:
    """One line of the summary with the data it was drawn from."""

    kind: str
    line: str
    #: where it applies: ``system:partition`` and the node, when the finding names one
    partition: str = ""
    node: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class VerdictRecord:
    """What one judged run concluded (see the module docstring)."""

    system: str
    mode: str
    outcome: str
    exit_status: int
    #: the run reports judged, first session's parts in order
    reports: list[str]
    #: passed, failed, skipped, regressions, ran (cases that ran, fixtures left out)
    counts: dict[str, int]
    #: every line the summary prints, the ACCEPTANCE line last
    lines: list[str]
    findings: list[Finding] = field(default_factory=list)
    odd_nodes: list[OddNode] = field(default_factory=list)
    #: whether a confirmation session ran and what it decided
    confirmation: dict[str, Any] = field(default_factory=dict)
    #: what could not be judged (missing evidence: the run is INCOMPLETE while any is left)
    gaps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the reference file judged against and its sha256 ("" when there was none)
    baseline: dict[str, str] = field(default_factory=dict)
    schema: int = SCHEMA

    @property
    def line(self) -> str:
        """The one line a scheduled run ends with."""
        return self.lines[-1] if self.lines else ""

    def as_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"


def kind_of(line: str) -> str:
    """The finding's kind, from the word its line starts with (the line was made here)."""
    word = line.split(" ", 1)[0]
    return word if word in KINDS else "NOTE"


def drain_command(scheduler: str, node: str, why: str) -> str:
    """The command a site runs to take ``node`` out of service, with ``why`` as the reason;
    "" for a scheduler without one here. Printed for the site, never run by the suite."""
    reason = re.sub(r"[^A-Za-z0-9 ,.:%()+=_-]", "", why)[:120].strip() or "placement odd node"
    if scheduler == "slurm":
        return f"scontrol update NodeName={node} State=DRAIN Reason='{reason}'"
    if scheduler in ("sge", "gridengine"):
        return f"qmod -d '*@{node}'"
    return ""


def path_for(report: Path) -> Path:
    """The record's path beside a run report (a gzipped report's record is plain JSON)."""
    name = report.name[:-len(".gz")] if report.name.endswith(".gz") else report.name
    return report.with_name(PREFIX + name)


def write(record: VerdictRecord, path: Path) -> Path:
    """Writes the record atomically (temporary file + rename): a reader sees the old record
    or the new one, never half of one."""
    atomic.write_text(path, record.as_json())
    return path


def read(path: Path) -> VerdictRecord:
    """A record written by :func:`write`; one line (a :class:`PlacementError`) for anything
    else: not a regular file, too large, not JSON, another schema, a field missing."""
    text = regular_file.read_text(path, "verdict record", MAX_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlacementError(f"{path}: not a verdict record (unreadable JSON: {exc.msg} at "
                             f"line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise PlacementError(f"{path}: not a verdict record of schema {SCHEMA} (schema "
                             f"{data.get('schema') if isinstance(data, dict) else None!r})")
    try:
        rec = VerdictRecord(**{k: v for k, v in data.items()
                               if k not in ("findings", "odd_nodes")},
                            findings=[Finding(**f) for f in data.get("findings", [])],
                            odd_nodes=[OddNode(**n) for n in data.get("odd_nodes", [])])
    except TypeError as exc:
        raise PlacementError(f"{path}: not a verdict record ({exc})") from None
    if rec.outcome not in OUTCOMES or OUTCOMES[rec.outcome] != rec.exit_status:
        raise PlacementError(f"{path}: not a verdict record (outcome {rec.outcome!r} with "
                             f"exit status {rec.exit_status!r})")
    return rec


def beside(reports: list[Path]) -> VerdictRecord | None:
    """The record beside the newest of ``reports``, if one was written."""
    if not reports:
        return None
    path = path_for(Path(reports[-1]))
    return read(path) if path.is_file() else None
