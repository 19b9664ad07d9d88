"""A report folder assembled: from ReFrame run reports (:func:`report_runs`), or from the
stored baselines and the studies' seed tables (:func:`report_reference`).

A run report writes ``<output>/<system>-<date>/``; the baselines' report writes the
folder itself. Both return the folder written (``placement report`` prints it).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from ..judgement import Case, RunReport, baselines, reading
from ..util import PlacementError, baseline_dir, cycles, system_name
from . import files, folder, history_page, history_read, node_history, provenance
from .document import Report
from .escape import markdown as md
from .previous_run import compare
from .sections import build, npb_sections
from .tables import Numbers, Table


def _root() -> Path:
    from ..util import repo_root
    return repo_root()


def _run_date(r: RunReport) -> str:
    when = reading.session_info.started(r.session) or _dt.datetime.now(_dt.timezone.utc)
    return when.astimezone(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")


def report_runs(reports: list[RunReport], output: Path, system: str | None,
                compare_previous: bool = True, answer: Any = None) -> Path:
    cases: list[Case] = [c for r in reports for c in r.cases]
    if system:
        system_name(system, "--system")
        held = sorted({c.system for c in cases})
        cases = [c for c in cases if c.system == system]
        if not cases:
            raise PlacementError(f"--system {system}: no case of that system in the run(s) "
                                 f"(they hold: {', '.join(held) or 'no cases'})")
    # the folder is named after the systems: a name from a file never leads out of --output
    systems = [system_name(s, "system name in the run report")
               for s in sorted({c.system for c in cases})] or ["empty"]
    name = system or "+".join(systems)
    newest = max(reports, key=lambda r: reading.session_info.order(r.session))
    with folder.claimed(output / f"{name}-{_run_date(newest)}", output) as target:
        return _write_runs(reports, cases, name, newest, target, compare_previous, answer)


def _write_runs(reports: list[RunReport], cases: list[Case], name: str, newest: RunReport,
                out: Path, compare_previous: bool, answer: Any = None) -> Path:
    # the system's reference file read once for the verdicts, the history and its pages
    with baselines.store.read_once():
        return _write_read_once(reports, cases, name, newest, out, compare_previous, answer)


def _write_read_once(reports: list[RunReport], cases: list[Case], name: str,
                     newest: RunReport, out: Path, compare_previous: bool,
                     answer: Any) -> Path:
    root = _root()
    table, note, scratch = None, "", Numbers()
    hist, link = None, ""
    if compare_previous:
        table, note, hist, link = _against_stored(name, newest, root, scratch, out)
    notes = out / folder.DISCUSSION
    rep = build(f"Placement report: {name}",
                f"{len(cases)} test cases from {len(reports)} run(s), newest session "
                f"{newest.uuid} ({newest.session.get('time_start', '?')}).",
                cases, out, provenance.collect(reports, root), table, note,
                discussion=notes.read_text() if notes.is_file() else "", history=hist,
                answer=answer, history_link=link)
    rep.numbers.rows += scratch.rows
    files.write(rep, out)
    return out


@cycles.without_cyclic_gc     # the reading's millions of objects, none in a cycle
def _against_stored(name: str, newest: RunReport, root: Path, numbers: Numbers, out: Path
                    ) -> tuple[Table | None, str, tuple[Table | None, str], str]:
    """The comparison with the previous run, the step table and the history pages, from one
    reading of the stored sessions. Ten thousand sessions' reductions are millions of
    objects: the cyclic collector is paused until the reading is dropped (on return), so
    it never walks them, and the run's report that follows does not hold them."""
    pages = _pages(name, out)
    stored = history_read.read(newest, root, pages)
    table, note = compare(newest, root, numbers, None if stored.error else stored.sessions)
    hist, link = _history(stored, pages, numbers, out)
    return table, note, hist, link


def _pages(system: str, out: Path) -> history_page.Pages | None:
    """The history pages of a report's system (one per system: a pooled report has none)."""
    return None if "+" in system else history_page.Pages.of(system, out.parent)


def _history(stored: history_read.Reading, pages: history_page.Pages | None, numbers: Numbers,
             out: Path) -> tuple[tuple[Table | None, str], str]:
    """The step changes over ReFrame's stored sessions of this host (``stored``:
    :func:`.history_read.read`), and the link to the system's history page (written beside
    the report; "" when there is none)."""
    if stored.error:
        return (None, f"History: {md(stored.error)}."), ""
    if pages is None or stored.history is None:
        return stored.steps.table(numbers), ""
    back = f"../../{out.name}/index.html"
    history_page.write_judged(pages, stored.history, stored.confirmations, pages.folder(), back)
    node_history.write_judged(pages, stored.nodes, stored.confirmations, back)
    where = history_page.folder(pages.system)
    return stored.steps.table(numbers), f"../{where.as_posix()}/index.html"


def report_reference(baseline_files: list[Path], seed_files: list[Path], output: Path) -> Path:
    from .reference_cases import from_baseline, from_seed_csv
    cases: list[Case] = []
    prov: list[tuple[str, str]] = []
    for f in baseline_files:
        cases += from_baseline(f)
        prov.append(("baseline", str(f)))
    for f in seed_files:
        cases += from_seed_csv(f)
        prov.append(("seed table", str(f)))
    if not cases:
        where = (f"{baseline_dir()} holds no *.yaml" if not baseline_files and not seed_files
                 else "the files given hold no entries")
        raise PlacementError(f"no baselines or seed tables to render ({where}; give "
                             "--baseline or --seed-csv)")
    with folder.claimed(output) as out:
        return _write_reference(cases, prov, out)


def _write_reference(cases: list[Case], prov: list[tuple[str, str]], out: Path) -> Path:
    from ..judgement import git_commit
    rep = Report("Stored baselines in the studies' layout",
                 "What the reference files hold, laid out as the studies' Tables so they can "
                 "be checked cell by cell (Bulldozer: Tables 1–2 of seed 000, classes A and C; "
                 "Xeon E5620: Tables 1–2 of seed 002, class B). Single values: no CI.")
    rep.sections += npb_sections(cases, out, rep.numbers)
    rep.provenance = prov + [("git commit", git_commit(_root()) or "not a git checkout")]
    files.write(rep, out)
    return out


def newest_path(paths: list[Path], reports: list[RunReport]) -> Path:
    """The path of the run report (of ``reports``, read from ``paths``) that started last:
    the one a run's verdict record is written beside."""
    return max(zip(paths, reports), key=lambda pr: reading.session_info.order(pr[1].session))[0]


def answer_for(paths: list[Path], reports: list[RunReport], system: str | None) -> Any:
    """The run's verdict record: the one beside its newest run report if it judged exactly
    these parts (:func:`placement.acceptance.record.of_parts`), else the parts judged now by
    the acceptance summary's own function (:func:`placement.acceptance.verdict_record`), so
    the report, the line and the exit status never disagree. Runs of several systems (no
    ``--system``) are judged each as its own summary judges it, and answer with the worst
    (:func:`placement.acceptance.record.pooled`): a pooled PASS hid a system's FAIL."""
    from ..acceptance import judged_system
    systems = sorted({s for r in reports for s in r.systems})
    if system is None and len(systems) > 1:
        return _per_system(paths, reports, systems)
    try:
        name = judged_system(system, reports)
    except PlacementError:
        return None     # a --system the runs do not hold: the report says so
    return _judged_as(paths, reports, name)


def _judged_as(paths: list[Path], reports: list[RunReport], name: str) -> Any:
    """The parts' record as system ``name``: the one beside the newest part that judged
    exactly these parts as ``name``, else the parts judged now (and the record written
    beside the newest part of a run of the results folder, where none is yet: a record the
    summary wrote for other parts of the run stays)."""
    from ..acceptance import record, verdict_record
    ordered = ordered_paths(paths, reports)
    found = record.of_parts(ordered, sessions_of(ordered, paths, reports))
    if found is not None and found.system == name:
        return found
    newest = ordered[-1]
    rec = verdict_record(ordered, name, _mode(reports))
    where = record.path_for(newest)
    if _in_results(newest) and not where.exists():  # for the next report of this run
        try:
            record.write(rec, where)
        except (OSError, PlacementError):
            pass        # a folder this user cannot write: judged all the same
    return rec


def _per_system(paths: list[Path], reports: list[RunReport], systems: list[str]) -> Any:
    """Each system's runs (the parts holding its cases, and any holding none) judged as the
    summary judges them with ``--system``, pooled into one record, worst outcome first."""
    from ..acceptance import record
    recs = []
    for name in systems:
        mine = [(p, r) for p, r in zip(paths, reports) if name in r.systems or not r.systems]
        recs.append(_judged_as([p for p, _ in mine], [r for _, r in mine], name))
    return record.pooled(recs)


def ordered_paths(paths: list[Path], reports: list[RunReport]) -> list[Path]:
    """The paths in their sessions' order, the newest (where a record is written) last."""
    return [p for p, _ in sorted(zip(paths, reports),
                                 key=lambda pr: reading.session_info.order(pr[1].session))]


def sessions_of(wanted: list[Path], paths: list[Path], reports: list[RunReport]) -> list[str]:
    """The ReFrame sessions of the run reports read from ``wanted``, in its order."""
    return [session_of(p, paths, reports) for p in wanted]


def record_mismatch(answer: Any, paths: list[Path], reports: list[RunReport],
                    system: str | None) -> str:
    """Why the verdict record ``answer`` (given with ``--record``) is not the one of these
    parts judged as the report's system; "" when it is."""
    from ..acceptance import judged_system, record
    ordered = ordered_paths(paths, reports)
    why = record.mismatch(answer, ordered, sessions_of(ordered, paths, reports))
    if why:
        return why
    try:
        name = judged_system(system, reports)
    except PlacementError as exc:
        return f"it judged {answer.system} alone ({exc})"
    return "" if answer.system == name else f"it judged system {answer.system}, not {name}"


def session_of(path: Path, paths: list[Path], reports: list[RunReport]) -> str:
    """The ReFrame session of the run report read from ``path``."""
    return next((r.uuid for p, r in zip(paths, reports) if p == path), "")


def _in_results(path: Path) -> bool:
    """Whether a run report is one of the results folder's, where the runs' records live
    (a run report given from elsewhere, a shared or a read-only one, is left as it is)."""
    try:
        return Path(path).resolve().is_relative_to(reading.run_report.results_dir().resolve())
    except OSError:
        return False


def _mode(reports: list[RunReport]) -> str:
    """The mode ReFrame ran in (``--mode quick``), as its session recorded the command line."""
    for r in reports:
        words = str(r.session.get("cmdline", "")).split()
        for i, w in enumerate(words):
            if w == "--mode" and i + 1 < len(words):
                return words[i + 1]
            if w.startswith("--mode="):
                return w.split("=", 1)[1]
    return "run"
