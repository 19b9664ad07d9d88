"""How long a system's history page takes for a year of weekly runs: 52 sessions.

The sessions are real run reports of this suite (``tests/fixtures/aa-sessions-2h``,
twenty A/A sessions of 38 judged values) given a week each over a year, with the
changes a history is read for: a slow drift (0.2% a week), a node 30% slower for one
week (a NODE line, with its confirmation session an hour later) and a step of one
check (+50% from week 40). The baseline is the first five weeks' sessions. The page is
built as ``placement report`` builds it once ReFrame's storage is read (judging each
session, drawing the figure, writing HTML, Markdown and CSV); reading the storage is
ReFrame's and not timed. Target: under 10 s of CPU time (the process's own: on the
shared 2-core development machine the wall time is that plus waiting for a core,
printed beside it).

    python benchmarks/history_page.py [--weeks 52] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "tests" / "fixtures" / "aa-sessions-2h").glob("run-*.json"))
#: the first session's start; a week apart after it
START = dt.datetime(2025, 11, 3, 3, 0, tzinfo=dt.timezone.utc)
BASELINE_WEEKS = 5
NODE_WEEK = 26
STEP_WEEK, STEP_TEST = 40, "MatmulCheck"
TARGET_S = 10.0


def _scaled(data: dict, factor, test: str = "") -> dict:
    """Every launch (and the reported value) of ``test`` (all: "") worse by ``factor``:
    times multiplied, rates divided."""
    from placement.judgement import baseline_samples
    for r in data["runs"]:
        for tc in r["testcases"]:
            if test and not tc["display_name"].startswith(test):
                continue
            units = {k.rsplit(":", 1)[-1]: v[4] for k, v in (tc.get("perfvalues") or {}).items()}
            for var, runs in (tc.get("perf_launches") or {}).items():
                hib = baseline_samples.higher_is_better(var, units.get(var))
                f = factor if not hib else 1 / factor
                tc["perf_launches"][var] = [x * f for x in runs]
    return data


def _session(src: Path, week: int, keep_uuid: bool, extra: dict | None = None) -> dict:
    data = json.loads(src.read_text())
    when = START + dt.timedelta(weeks=week, hours=1 if extra else 0)
    info = data["session_info"]
    if not keep_uuid:
        info["uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"history-{week}-{bool(extra)}"))
    info.update(time_start=when.strftime("%Y%m%dT%H%M%S%z"),
                time_end=(when + dt.timedelta(minutes=20)).strftime("%Y%m%dT%H%M%S%z"),
                time_start_unix=when.timestamp(), **(extra or {}))
    return data


def year_of_sessions(weeks: int = 52) -> tuple[list[dict], list[dict], list[Path]]:
    """(the weekly sessions, their confirmation sessions, the baseline's run reports):
    ReFrame run reports as its storage describes them."""
    sessions, confirmations = [], []
    for week in range(weeks):
        src = SOURCES[week % len(SOURCES)]
        data = _session(src, week, keep_uuid=week < BASELINE_WEEKS)
        _scaled(data, 1 + 0.002 * week)
        if week == NODE_WEEK:
            _scaled(data, 1.3)
            confirmations.append(_scaled(_session(src, week, False, {"acceptance":
                                                                     "confirmation"}), 1.3))
        if week >= STEP_WEEK:
            _scaled(data, 1.5, STEP_TEST)
        sessions.append(data)
    return sessions, confirmations, SOURCES[:BASELINE_WEEKS]


def build(out: Path, weeks: int) -> tuple[float, float, int]:
    """The page of a year in ``out``: (wall s, CPU s, sessions drawn)."""
    from placement.judgement import runreport
    from placement.report import history_page
    sessions, confirmations, _ = year_of_sessions(weeks)
    t, c = time.perf_counter(), time.process_time()
    reports = [runreport.from_data(d, Path(d["session_info"]["uuid"])) for d in sessions]
    conf = [runreport.from_data(d, Path(d["session_info"]["uuid"])) for d in confirmations]
    history_page.write("generic", reports, conf, out)
    return time.perf_counter() - t, time.process_time() - c, len(reports)


def record_baseline(where: Path) -> None:
    """The baseline of the first weeks' sessions, as ``placement baseline record`` writes it."""
    from placement import cli
    os.environ["PLACEMENT_BASELINES"] = str(where)
    froms = [a for p in SOURCES[:BASELINE_WEEKS] for a in ("--from", str(p))]
    if cli.main(["baseline", "record", "--system", "generic", *froms]):
        raise SystemExit("could not record the baseline")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weeks", type=int, default=52)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        record_baseline(Path(tmp) / "baselines")
        runs = [build(Path(tmp) / "history", args.weeks) for _ in range(args.repeats)]
        png = (Path(tmp) / "history" / "history.png").stat().st_size
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    ok = cpu < TARGET_S
    print(f"history page of {runs[0][2]} weekly sessions (38 values each): median of "
          f"{args.repeats}: {wall:.2f} s wall, {cpu:.2f} s CPU; figure {png // 1024} KiB; "
          f"target < {TARGET_S:.0f} s CPU: {'ok' if ok else 'SLOW'}")
    out = Path(__file__).parent / "results" / "history_page.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"weeks": args.weeks, "repeats": args.repeats,
                               "median_wall_s": round(wall, 2), "median_cpu_s": round(cpu, 2),
                               "target_s": TARGET_S, "met": ok}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
