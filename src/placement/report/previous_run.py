"""The previous run of the same system, through ReFrame's results storage CLI.

ReFrame keeps every session in its results database (``storage`` in the
site configuration). The previous session is found with
``--describe-stored-sessions`` (same system, started earlier by the sessions' own
recorded times) and compared with
``--performance-compare=<this>/<previous>/mean:/+result`` (terms ``this`` and
``previous``: ReFrame's pdiff is (lhs − rhs)/rhs, so a positive pdiff means
the value grew since the previous run); no SQL of our own,
so the database format stays ReFrame's business.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..judgement import CONFIRMATION_EXTRA, RunReport, is_primary_var, reading
from ..util import PlacementError, one_line
from . import stored_windows
from .tables import Numbers, Table


def reframe_cmd(root: Path) -> list[str] | None:
    """ReFrame with the suite's configuration, preferring the one next to this Python."""
    exe = Path(sys.executable).with_name("reframe")
    exe = str(exe) if exe.exists() else shutil.which("reframe")
    cfg = root / "config" / "settings.py"
    if not exe or not cfg.is_file():
        return None
    return [exe, "-C", str(cfg), "--nocolor", "--table-format=csv"]


def results_database(root: Path) -> Path:
    """ReFrame's results database as the suite's configuration names it
    (``config/common.py``: ``$PLACEMENT_RESULTS/results.db``, else under ``root``)."""
    from ..util import paths
    return (paths.env_path("PLACEMENT_RESULTS") or root / "results") / "results.db"


#: the longest a ReFrame call may take, seconds
TIMEOUT_S = 300


def run_reframe(cmd: list[str], root: Path) -> str:
    """ReFrame's output of ``cmd``, as ``subprocess.run(text=True)`` gives it; a
    RuntimeError with its last line when it fails, ``subprocess.TimeoutExpired`` (the
    process killed) after :data:`TIMEOUT_S`.

    The output is read whole, in one go, and the errors go to a file: a description of a
    thousand stored sessions is some 45 MB, which ``subprocess.run`` collects 32 KB at a
    time, at twice the CPU."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=root,
                             env={**os.environ, "RFM_COLORIZE": "n"})
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            p.kill()
        watchdog = threading.Timer(TIMEOUT_S, kill)
        watchdog.start()
        try:
            with p.stdout:
                out = p.stdout.read()
            p.wait()
        finally:
            watchdog.cancel()
        if killed.is_set():
            raise subprocess.TimeoutExpired(cmd, TIMEOUT_S)
        if p.returncode:
            err.seek(0)
            why = _text(err.read()) or _text(out)
            raise RuntimeError(why.strip().splitlines()[-1:] or ["failed"])
    return _text(out)


def _text(data: bytes) -> str:
    """``data`` as subprocess's text mode reads a pipe: decoded as a text wrapper of it
    would be (the locale's encoding), every newline ``\\n``."""
    text = data.decode(io.TextIOWrapper(io.BytesIO()).encoding)
    # looked for first: a search for a pair of characters in 45 MB costs more than its decoding
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _csv(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if "," in ln and not ln.startswith(("WARNING", "\x1b"))]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def sessions_query(until: _dt.datetime) -> str:
    """ReFrame's stored-session query: the whole runs up to ``until``.

    Confirmation sessions (ReFrame's session extra :data:`CONFIRMATION_EXTRA`) are passed
    over: they rerun a few checks of the run before them, which is the run to compare with,
    and in a history they would count one state of the node twice. ReFrame evaluates the
    query's filter over each session's info, whose keys are the filter's names; ``locals()``
    there is that info, so a session without the extra passes. ReFrame evaluates that
    filter as Python, so its text is ours alone: the time is formatted from a parsed
    datetime, and nothing a run report says (its host, its times) is copied into it.
    """
    key, value = CONFIRMATION_EXTRA
    return (f"19700101T0000+0000:{reading.session_info.query_time(until)}"
            f"?locals().get({key!r}) != {value!r}")


def stored_sessions(report: RunReport, root: Path) -> list[RunReport]:
    """Every stored whole run of this run's system up to this run, oldest first.

    Read a period at a time (:func:`stored_runs`); confirmation sessions left out
    (:func:`sessions_query`). The system is the one the sessions' cases ran on, not the
    host: two systems can share a host and a results folder. The order is the sessions'
    own recorded start.
    """
    end = reading.session_info.ended(report.session)
    if end is None or reframe_cmd(root) is None:
        return []
    periods = [[r for r in period if not is_confirmation(r)]
               for period in stored_runs(end, set(report.systems), root)]
    return sorted((r for period in reversed(periods) for r in period),
                  key=lambda r: reading.session_info.order(r.session))


def is_confirmation(r: RunReport) -> bool:
    """A confirmation session (:data:`CONFIRMATION_EXTRA`), as :func:`sessions_query`'s
    filter tells it: ReFrame evaluates it over the session's info."""
    key, value = CONFIRMATION_EXTRA
    return r.session.get(key) == value


@dataclass
class Unreadable:
    """The stored sessions that could not be read as run reports: how many, and why the
    first could not (a page says so: nothing is dropped without a word)."""

    count: int = 0
    first: str = ""

    def add(self, why: str) -> None:
        self.count += 1
        self.first = self.first or why

    def note(self) -> str:
        """``N stored session(s) could not be read ...``, or "" for none."""
        if not self.count:
            return ""
        return (f"{self.count} stored session(s) in ReFrame's results storage could not be "
                f"read as run reports and are not on this page (of this system or another: "
                f"an unreadable session names none); the first: {one_line.flattened(self.first)}")


def stored_runs(until: _dt.datetime, systems: set[str], root: Path,
                unreadable: Unreadable | None = None) -> Iterator[Iterator[RunReport]]:
    """The stored sessions of ``systems`` that started before ``until`` (to the second, as
    :func:`sessions_query`), confirmation sessions among them: one iterator per period of
    :func:`.stored_windows.periods`, newest period first, each in ReFrame's order and
    to be read before the next is asked for. Each session is parsed when its period's
    iterator reaches it, so one period's text and one session are held at a time; one that
    is no run report is counted in ``unreadable``."""
    base = [a for a in reframe_cmd(root) or [] if a != "--table-format=csv"]
    if not base:
        return

    def describe(query: str) -> str:
        return run_reframe(base + [f"--describe-stored-sessions={query}"], root)
    end = int(until.timestamp())
    whole = stored_windows.at_once(results_database(root))
    for period in stored_windows.periods(end, describe, whole=whole):
        yield _reports(period, systems, unreadable)


def _reports(data: Iterable[object], systems: set[str],
             unreadable: Unreadable | None = None) -> Iterator[RunReport]:
    """The run reports of ``systems`` among ReFrame's described sessions; a session that is
    no run report is no history, and counted in ``unreadable`` (when given)."""
    for d in data:
        if not (isinstance(d, dict) and isinstance(d.get("session_info"), dict)):
            if unreadable is not None:
                unreadable.add("a stored session without session_info")
            continue
        try:
            r = reading.run_report.from_data(d, Path(f"stored session {d['session_info'].get('uuid')}"))
        except PlacementError as exc:
            if unreadable is not None:
                unreadable.add(str(exc))
            continue
        if systems & set(r.systems):
            yield r


def sessions_of(query: str, systems: set[str], root: Path,
                unreadable: Unreadable | None = None) -> list[RunReport]:
    """The stored sessions ReFrame's ``query`` selects whose cases ran on one of
    ``systems`` (matched here: the query holds nothing a run report says; those that are no
    run report counted in ``unreadable``)."""
    base = reframe_cmd(root)
    if not base:
        return []
    text = run_reframe([a for a in base if a != "--table-format=csv"]
                       + [f"--describe-stored-sessions={query}"], root)
    return list(_reports(stored_windows.items(text), systems, unreadable))


def previous_session(report: RunReport, root: Path,
                     stored: Sequence[tuple[_dt.datetime, str]] | None = None) -> str | None:
    """UUID of the newest stored whole run of the same system started before this one
    (``stored``: each stored whole run's start and uuid, oldest first, when the caller has
    read them: :func:`stored_sessions`)."""
    start = reading.session_info.started(report.session)
    if start is None:
        return None
    own = {report.uuid, *report.session.get("parts", [])}     # every part of a resumed run
    if stored is None:
        stored = [(reading.session_info.order(r.session), r.uuid)
                  for r in stored_sessions(report, root)]
    earlier = [uuid for at, uuid in stored if uuid not in own and at < start]
    return earlier[-1] if earlier else None


def compare(report: RunReport, root: Path, numbers: Numbers,
            stored: Sequence[tuple[_dt.datetime, str]] | None = None
            ) -> tuple[Table | None, str]:
    """A table of this run against the previous one, and a note saying what was done
    (``stored``: each stored whole run's start and uuid, oldest first, when the caller has
    read them: ten thousand stored sessions are read once for a report, not once for each
    of its parts)."""
    base = reframe_cmd(root)
    if base is None:
        return None, "ReFrame or its configuration not found: no comparison with a previous run."
    try:
        prev = previous_session(report, root, stored)
        if prev is None:
            return None, ("No earlier session of this system in ReFrame's results storage: "
                          "nothing to compare with yet.")
        if not (reading.session_info.is_uuid(report.uuid) and reading.session_info.is_uuid(prev)):
            return None, "A session without a UUID: no comparison with a previous run."
        spec = f"{report.uuid}/{prev}/mean:/+result"
        rows = _csv(run_reframe(base + [f"--performance-compare={spec}", "--term-lhs=this",
                                 "--term-rhs=previous"], root))
        # per-run copies and spreads are in the boxplots, not worth a comparison row
        rows = [r for r in rows if is_primary_var(r.get("pvar", ""))]
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as exc:
        return None, f"ReFrame's performance comparison failed: {exc}"
    note = (f"Previous run: session {prev[:8]} (`reframe --performance-compare={spec}`; "
            "pdiff = (this − previous)/previous).")
    if not rows:
        return None, note + " No test case is common to both runs."
    header = list(rows[0].keys())
    t = Table("previous-run", "Against the previous run of the same system", header,
              note="pdiff (%): relative change of the mean perfvar from the previous run.")
    for r in rows:
        t.add([r.get(h, "") for h in header])
        for h in header:
            if h.startswith("pval") or h.startswith("pdiff"):
                try:
                    numbers.add("previous-run", "previous-run",
                                f"{r.get('name', '')} {r.get('sysenv', '')}", r.get("pvar", ""),
                                h, float(r[h]), "%" if h.startswith("pdiff") else r.get("punit"))
                except (TypeError, ValueError):
                    pass
    return t, note
