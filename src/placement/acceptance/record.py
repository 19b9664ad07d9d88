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

#: the version of the record's layout (2: ``nodes``, the peer verdict's count; 3:
#: ``sessions``, the ReFrame sessions judged: a reader that knows only 2 refuses it by its
#: number rather than by a field it does not know)
SCHEMA = 3
#: the layouts a reader takes: a record of schema 1 reads as one with no count, one of
#: schema 1 or 2 as one whose run is matched by its report's name alone
READABLE = (1, 2, 3)
#: the prefix that names a run report's record (``run-report-X.json`` ->
#: ``verdict-run-report-X.json``): no ``run-report-*`` pattern takes it for a run report
PREFIX = "verdict-"
#: the largest record a reader takes: each judged value's verdict takes about 1 kB, so a
#: run of 100,000 values fits twice over (a 1,000-node partition's findings many times)
MAX_BYTES = 256 * 2**20
#: the kinds of finding: what each line of the summary is, given where the line is made
KINDS = ("COUNT", "NODE", "NODES", "HISTORY", "REGRESSION", "FAIL", "HUNG", "SKIP", "UNDECIDED",
         "WAITING", "CONFIRMED", "UNCONFIRMED", "NOTE", "PREVIOUS", "ACCEPTANCE")
#: the outcome words and their exit status
OUTCOMES = {"PASS": 0, "FAIL": 1, "UNFINISHED": 3, "INCOMPLETE": 4}
#: the gap of a run the summary could not judge: nothing in the record was judged, and its
#: notes say why (the ACCEPTANCE line's brackets, the cause last)
NOT_JUDGED = "the summary could not judge the run"


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
    """One line of the summary with the data it was drawn from, made where the line is
    (from the node's shift, a peer judgement, a case, a confirmation...): a reader takes
    the kind and the numbers from here and never reads them back out of the line."""

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
    #: the peer verdict's count (:class:`~.peer_lines.NodeCount`): ``judged``, ``alike``,
    #: ``odd``, ``not_judged``, ``no_majority``, ``undecided``, and each partition's under
    #: ``partitions``; empty for a run no peer verdict judged
    nodes: dict[str, Any] = field(default_factory=dict)
    #: each judged value's verdict, as the run's answer has it (its confirmation session
    #: included): ``system``, ``context`` (what the verdict leaned on) and ``values``, each
    #: with ``case``, ``sysenv``, ``var``, the ``verdict`` word, its ``change`` and its
    #: ``data`` (:mod:`placement.judgement.verdict.as_data`); empty when none was judged
    verdicts: dict[str, Any] = field(default_factory=dict)
    #: the ReFrame sessions (``session_info.uuid``) of :attr:`reports`, in their order: a
    #: report is this record's run only if its session is one of them (a file of another
    #: run, given the same name, read this record's PASS); empty in records written before
    #: it, which are matched by name alone
    sessions: list[str] = field(default_factory=list)
    schema: int = SCHEMA

    @property
    def judged(self) -> bool:
        """Whether the summary judged the run (else its notes say why it could not)."""
        return NOT_JUDGED not in self.gaps

    @property
    def line(self) -> str:
        """The one line a scheduled run ends with."""
        return self.lines[-1] if self.lines else ""

    def as_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"


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
    if not isinstance(data, dict) or data.get("schema") not in READABLE:
        takes = ", ".join(map(str, READABLE[:-1])) + f" or {READABLE[-1]}"
        raise PlacementError(f"{path}: not a verdict record of schema {takes} (schema "
                             f"{data.get('schema') if isinstance(data, dict) else None!r})")
    try:
        findings = [Finding(**f) for f in data.get("findings", [])]
        rec = VerdictRecord(**{k: v for k, v in data.items()
                               if k not in ("findings", "odd_nodes")},
                            findings=findings if data["schema"] > 1 else
                            _findings_of_schema_1(findings),
                            odd_nodes=[OddNode(**n) for n in data.get("odd_nodes", [])])
    except TypeError as exc:
        raise PlacementError(f"{path}: not a verdict record ({exc})") from None
    if not isinstance(rec.sessions, list) or not all(isinstance(u, str) for u in rec.sessions):
        raise PlacementError(f"{path}: not a verdict record (sessions is not a list of "
                             "ReFrame session uuids)")
    if rec.outcome not in OUTCOMES or OUTCOMES[rec.outcome] != rec.exit_status:
        raise PlacementError(f"{path}: not a verdict record (outcome {rec.outcome!r} with "
                             f"exit status {rec.exit_status!r})")
    return rec


def _findings_of_schema_1(findings: list[Finding]) -> list[Finding]:
    """A schema-1 record's findings in today's shape: one per printed line, each regressed
    value's copy (``REGRESSION``, appended after the lines) in the place of its line, and
    what an ``UNCONFIRMED`` line names as its data. Schema 1 kept no data of its own for
    these, so its lines, which this module's writers made, are read here, once."""
    extra = {f.line: f for f in findings if f.kind == "REGRESSION"}
    out = []
    for f in findings:
        if f.kind == "REGRESSION":
            continue
        if f.line in extra:
            f = extra[f.line]
        elif f.kind == "UNCONFIRMED" and not f.data:
            f.data = _unconfirmed_of_schema_1(f.line)
        out.append(f)
    return out


def _unconfirmed_of_schema_1(line: str) -> dict[str, str]:
    """What a schema-1 ``UNCONFIRMED`` line names: the node, or a case (``NAME @WHERE``) or a
    value (``NAME @WHERE VAR``), each before its ``[first session: ...]``."""
    head = line[len("UNCONFIRMED "):].split(" [first session: ", 1)[0]
    if head.startswith("NODE "):
        return {"what": "node"}
    name, _, at = head.rpartition(" @")
    where, _, var = at.partition(" ")
    return {"what": "value" if var else "case", "case": name, "sysenv": where, "var": var}


def judged(record: VerdictRecord, report: Path, session: str = "") -> bool:
    """Whether ``record`` is the one of the run whose newest report is ``report`` (of
    ReFrame session ``session``): the run reports it judged hold it, by the name its record
    goes by (a gzipped report's has no .gz, :func:`path_for`), and by its session where
    both are known (a name is no identity: another run's file can carry it)."""
    named = path_for(Path(report)).name in {path_for(Path(r)).name for r in record.reports}
    return named and (not session or not record.sessions or session in record.sessions)


def beside(reports: list[Path], session: str = "") -> VerdictRecord | None:
    """The record beside the newest of ``reports`` (of ReFrame session ``session``), if
    one was written for that run (a record of another session there is none of its)."""
    rec = _newest(reports)
    return rec if rec is not None and judged(rec, Path(reports[-1]), session) else None


def _newest(reports: list[Path]) -> VerdictRecord | None:
    """The record written beside the newest (the last) of ``reports``, whichever run's."""
    if not reports:
        return None
    path = path_for(Path(reports[-1]))
    return read(path) if path.is_file() else None


def _names(reports: list[str] | list[Path]) -> list[str]:
    """The run reports' names as their records go by them (:func:`path_for`: no .gz),
    sorted."""
    return sorted(path_for(Path(r)).name[len(PREFIX):] for r in reports)


def mismatch(record: VerdictRecord, reports: list[Path], sessions: list[str]) -> str:
    """Why ``record`` is not the record of exactly the run reports ``reports`` (of ReFrame
    sessions ``sessions``, in the same order); "" when it is.

    Why exactly: a record of parts A and B read for B alone headed a page of B's 65 cases
    with A+B's 102 and A's NODE lines, and one of B alone read for A and B hid A's loaded
    node behind B's PASS. The parts are matched by their names, and (schema 3 on) by their
    sessions too: a name is no identity, another run's file can carry it. A record with no
    sessions (schema 1 or 2, or a run none of whose parts the summary could read) is
    matched by its names alone."""
    judged, given = _names(record.reports), _names(reports)
    if judged != given:
        return (f"it judged {', '.join(judged) or 'no run report'}, not "
                f"{', '.join(given) or 'no run report'}")
    if record.sessions and sorted(record.sessions) != sorted(sessions):
        return (f"it judged session(s) {', '.join(record.sessions)}, not "
                f"{', '.join(s or '(none recorded)' for s in sessions)}")
    return ""


def of_parts(reports: list[Path], sessions: list[str]) -> VerdictRecord | None:
    """The record beside the newest of ``reports`` (the last, of ReFrame sessions
    ``sessions`` in the same order), if it judged exactly these parts (:func:`mismatch`);
    None otherwise: the reader judges the parts afresh rather than show another
    selection's outcome."""
    rec = _newest(reports)
    return rec if rec is not None and not mismatch(rec, reports, sessions) else None


#: the outcomes from worst to best: several systems' runs pooled answer with their worst
#: (a failure before a run cut short, before missing evidence, before a pass)
WORST_FIRST = ("FAIL", "UNFINISHED", "INCOMPLETE", "PASS")


def pooled(records: list[VerdictRecord]) -> VerdictRecord:
    """One record for runs of several systems, each judged as its own summary judges it
    (``records``, one a system): the worst outcome, every system's lines and findings, the
    counts summed, and a last line saying what was pooled.

    Why: a pooled report once showed PASS (exit 4) where one system's summary said FAIL;
    its answer is now never better than any system's. It is no summary's record: the
    report shows it and never writes it."""
    worst = min((r.outcome for r in records), key=WORST_FIRST.index)
    each = ", ".join(f"{r.system} {r.outcome}" for r in records)
    line = (f"NOTE runs of {len(records)} systems, each judged as its own summary judges it "
            f"({each}): {worst}, the worst of them")
    counts: dict[str, int] = {}
    for r in records:
        for k, v in r.counts.items():
            counts[k] = counts.get(k, 0) + v
    partitions = {k: v for r in records for k, v in r.nodes.get("partitions", {}).items()}
    return VerdictRecord(
        system="+".join(r.system for r in records), mode=records[0].mode,
        outcome=worst, exit_status=OUTCOMES[worst],
        reports=list(dict.fromkeys(p for r in records for p in r.reports)), counts=counts,
        lines=[x for r in records for x in r.lines] + [line],
        findings=[f for r in records for f in r.findings] + [Finding("NOTE", line, data={
            "what": "pooled systems", "outcomes": {r.system: r.outcome for r in records}})],
        odd_nodes=[o for r in records for o in r.odd_nodes],
        gaps=[f"{r.system}: {g}" for r in records for g in r.gaps],
        notes=[f"{r.system}: {n}" for r in records for n in r.notes],
        nodes={"partitions": partitions} if partitions else {},
        sessions=list(dict.fromkeys(s for r in records for s in r.sessions)))
