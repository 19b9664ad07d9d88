"""A system's reference file recorded from runs, compared with them, and its control value.

``placement baseline record`` merges the runs' measured values into
``config/baselines/<system>.yaml`` (``PLACEMENT_BASELINES`` moves the folder): cases in the
run replace theirs, others stay (``replace`` starts from scratch). Each judged variable's
launches are stored as one session; ``add`` keeps the sessions already stored and adds
the run's (the newest ``keep`` stay), and several sources record several sessions at once,
so the verdict can judge a new session against the spread between sessions. The previous
file is kept as ``<system>.yaml.prev`` (itself written whole or not at all); each write is a
temporary file and a rename, and two records of one system at once take turns (a lock on
``.<system>.yaml.lock``). The control value names the value whose change is the node's shift
(a fixed control case, like a reference build), under the same lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...util import PlacementError, atomic, one_line
from .. import reading, verdict
from ..verdict.intervals import entry_name, read_entry
from . import contents, samples, store

HEADER = ("# ReFrame reference file ($ref), written by `placement baseline record`.\n"
          "# Leaves: perfvar: [value, lower, upper, unit]; lower/upper are fractions of value.\n"
          "# _samples: each judged variable's runs (one per launch), for the verdict.\n")


@dataclass(frozen=True)
class Sources:
    """What a record (or its preview) reads and how it merges: the runs (``--from``, oldest
    first; none: the newest), whether stored sessions stay, how many, whether entries the
    runs lack are dropped, and the smallest regression the verdict lines call."""

    system: str
    runs: list[str]
    add: bool = False
    keep: int = samples.KEEP_SESSIONS
    replace: bool = False
    min_effect: float = verdict.over_sessions.MIN_EFFECT


def target(system: str, explicit: str | None = None) -> Path:
    """The system's reference file (``explicit``: another file, as the tests give one)."""
    from ...util import baseline_file, system_name
    system_name(system)
    return Path(explicit) if explicit else baseline_file(system)


def verdict_lines(path: Path, old: dict, report: reading.run_report.RunReport,
                  src: Sources, detail: bool) -> list[str]:
    """The run judged against the stored runs: a summary line, then the cases worth a look."""
    if not old:
        return []
    new = store.from_run(report, src.system)
    judged = samples.judge_entries(old, new, str(path), src.min_effect)
    if not judged:
        return [f"verdict: no variable of this run has stored runs in {path}"]
    out = [f"verdict against {path} ({len(judged)} values, each session one draw, "
           f"Benjamini-Hochberg at {verdict.over_sessions.ALPHA:g}, minimum effect {src.min_effect:.0%}): "
           f"{samples.summary(judged)}"]
    out += samples.context_lines(judged)
    if detail:
        for j in judged:
            if j.verdict is None or j.verdict.outcome != "unchanged":
                text = j.verdict.text() if j.verdict else j.note
                out.append(f"  {entry_name(j.entry)}: {text}")
    return out


def plan(path: Path, src: Sources, unmeasured: list[str] | None = None
         ) -> tuple[dict, dict, reading.run_report.RunReport]:
    """The file's content, what it becomes, and the newest run recorded.

    Every source is read before anything is written; after the first,
    each adds its session to those already gathered. ``unmeasured`` gets the values left
    out for having no number (:func:`store.from_run`).
    """
    old = store.load(path)  # corrupt: error before anything is written
    merged, report = old, None
    for i, spec in enumerate(src.runs or ["latest"]):
        report = reading.run_report.pool([reading.run_report.load(p) for p in reading.run_report.expand(spec, src.system)])
        new = store.from_run(report, src.system, pools=True, unmeasured=unmeasured)
        if not src.replace:
            store.check_units(old, new, str(path))
        if src.add or i > 0:
            new = samples.add_sessions(merged, new, src.keep, str(path))
        merged = new if src.replace and i == 0 else store.merge(merged, new)
    merged = store.session_intervals(merged, str(path))
    if samples.CONTROL_KEY in old:     # a site's choice, not a value: it stays
        merged[samples.CONTROL_KEY] = old[samples.CONTROL_KEY]
    return old, merged, report


def index(*datas: dict) -> dict[str, list[str]]:
    """Each test's index names (``$index``), for :meth:`store.Diff.lines`."""
    out: dict[str, list[str]] = {}
    for d in datas:
        for k, v in d.items():
            if isinstance(v, dict) and "$index" in v:
                out[k] = list(v["$index"])
    return out


@dataclass(frozen=True)
class Recorded:
    """What a record wrote: the change, the previous version kept, and the lines to say."""

    diff: store.Diff
    previous: Path | None
    #: a stored file's values counted in another way (``contents.unrecorded``), or ""
    uncounted: str
    verdicts: list[str]
    #: the values not recorded from the run, which reported them NaN, infinite or none
    unmeasured: list[str] = field(default_factory=list)


def unmeasured_line(names: list[str], shown: int = 5) -> str:
    """How many values no reference was made of, and the first ``shown`` of them."""
    return (f"{len(names)} value(s) reported but not measured (NaN, infinite or none), not "
            f"recorded from this run (a reference the file held is kept): "
            f"{one_line.first_of(names, shown)}")


def record(path: Path, src: Sources) -> Recorded:
    """Read, merge and write under one lock: two records at once must not drop either's
    entries."""
    with atomic.locked(path):
        atomic.remove_leftovers(path)
        other = store.foreign(store.load(path), src.system, str(path))
        if other and not src.replace:
            raise PlacementError(f"{other}; not merged into it: move it away, or record "
                                 "with --replace to start it afresh; nothing was written")
        missing: list[str] = []
        old, merged, report = plan(path, src, missing)
        d = store.diff(old, merged)
        verdicts = verdict_lines(path, old, report, src, detail=False)
        data = {store.PROVENANCE_KEY: store.provenance(
            report, src.system, store.thresholds_used(report, src.system)), **merged}
        prev = store.write_atomic(path, data, HEADER)
    return Recorded(d, prev, contents.unrecorded(old, str(path), written=True), verdicts,
                    sorted(set(missing)))


def control_line(path: Path, data: dict) -> str:
    """The file's control value as ``placement baseline control`` says it."""
    key = samples.CONTROL_KEY
    return f"{path}: " + (f"control value {data[key]}" if key in data else
                          "no control value: the node's shift is the median of the values")


def set_control(path: Path, system: str, entry: str | None) -> tuple[dict, bool]:
    """Set the control value to ``entry`` (None: clear it) under the file's lock; the file's
    new content and whether it was written. One line, exit 2, when nothing is recorded or
    ``entry`` has no stored runs. A value already set (or none to clear) writes nothing:
    a rewrite would make ``.prev`` a copy of the file and lose the real previous version."""
    key = samples.CONTROL_KEY
    with atomic.locked(path):
        atomic.remove_leftovers(path)
        data = store.load(path)
        if not data:
            raise PlacementError(f"{path}: no reference file for system {system!r}: "
                                 "record a run first (`placement baseline record`)")
        before = data.get(key)
        if entry is None:
            data.pop(key, None)
        else:
            e = read_entry(entry, data)     # either form `baseline diff` and the tools print
            stored = list(map(entry_name, samples.entries(data, str(path))))
            if e is None or entry_name(e) not in stored:
                what = ("is not a value Test[index values].var" if e is None
                        else f"has no stored runs in {path}")
                raise PlacementError(f"control value {entry!r} {what}; accepted: a value "
                                     "as `placement baseline diff` prints it, one of "
                                     f"{len(stored)} with stored runs, e.g. "
                                     + ", ".join(stored[:3]))
            data[key] = entry_name(e)
        if data.get(key) == before:
            return data, False
        store.write_atomic(path, data, HEADER)
    return data, True
