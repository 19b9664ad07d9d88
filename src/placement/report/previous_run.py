"""The previous run of the same system, through ReFrame's results storage CLI.

ReFrame keeps every session in its results database (``storage`` in the
site configuration). The previous session is found with
``--list-stored-sessions`` (same host, started earlier) and compared with
``--performance-compare=<this>/<previous>/mean:/+result`` (terms ``this`` and
``previous``: ReFrame's pdiff is (lhs − rhs)/rhs, so a positive pdiff means
the value grew since the previous run); no SQL of our own,
so the database format stays ReFrame's business.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..judgement import CONFIRMATION_EXTRA, RunReport, is_primary_var
from .tables import Numbers, Table


def reframe_cmd(root: Path) -> list[str] | None:
    """ReFrame with the suite's configuration, preferring the one next to this Python."""
    exe = Path(sys.executable).with_name("reframe")
    exe = str(exe) if exe.exists() else shutil.which("reframe")
    cfg = root / "config" / "settings.py"
    if not exe or not cfg.is_file():
        return None
    return [exe, "-C", str(cfg), "--nocolor", "--table-format=csv"]


def run_reframe(cmd: list[str], root: Path) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=root,
                       env={**os.environ, "RFM_COLORIZE": "n"})
    if r.returncode:
        raise RuntimeError((r.stderr or r.stdout).strip().splitlines()[-1:] or ["failed"])
    return r.stdout


def _csv(text: str) -> list[dict[str, str]]:
    lines = [ln for ln in text.splitlines() if "," in ln and not ln.startswith(("WARNING", "\x1b"))]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def sessions_query(until: str, host: str | None) -> str:
    """ReFrame's stored-session query: the whole runs of ``host`` up to ``until``.

    Confirmation sessions (ReFrame's session extra :data:`CONFIRMATION_EXTRA`) are passed
    over: they rerun a few checks of the run before them, which is the run to compare with,
    and in a history they would count one state of the node twice. ReFrame evaluates the
    query's filter over each session's info, whose keys are the filter's names; ``locals()``
    there is that info, so a session without the extra passes.
    """
    key, value = CONFIRMATION_EXTRA
    query = f"19700101T0000+0000:{until}?locals().get({key!r}) != {value!r}"
    return query + (f" and hostname == {host!r}" if host else "")


def previous_session(report: RunReport, root: Path) -> str | None:
    """UUID of the newest stored whole run on the same host started before this one."""
    base = reframe_cmd(root)
    start = report.session.get("time_start")
    if not base or not start:
        return None
    query = sessions_query(start, report.session.get("hostname"))
    rows = _csv(run_reframe(base + [f"--list-stored-sessions={query}"], root))
    rows = [r for r in rows if r.get("UUID") and r["UUID"] != report.uuid]
    rows.sort(key=lambda r: r.get("Start time", ""))
    return rows[-1]["UUID"] if rows else None


def compare(report: RunReport, root: Path, numbers: Numbers) -> tuple[Table | None, str]:
    """A table of this run against the previous one, and a note saying what was done."""
    base = reframe_cmd(root)
    if base is None:
        return None, "ReFrame or its configuration not found: no comparison with a previous run."
    try:
        prev = previous_session(report, root)
        if prev is None:
            return None, ("No earlier session of this host in ReFrame's results storage: "
                          "nothing to compare with yet.")
        spec = f"{report.uuid}/{prev}/mean:/+result"
        rows = _csv(run_reframe(base + [f"--performance-compare={spec}", "--term-lhs=this",
                                 "--term-rhs=previous"], root))
        # per-run copies and spreads are in the boxplots, not worth a comparison row
        rows = [r for r in rows if is_primary_var(r.get("pvar", ""))]
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
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
