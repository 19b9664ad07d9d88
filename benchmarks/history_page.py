"""How long a system's history page takes, and how much memory, against its number of sessions.

The sessions are real run reports of this suite (``tests/fixtures/aa-sessions-2h``,
twenty A/A sessions of 38 judged values) spread evenly over a year (52 of them: a week
apart; 10,000: under an hour apart), with the changes a history is read for: a slow drift
(0.2% a week), a node 30% slower in one session of week 26 (a NODE line, with its
confirmation session after it) and a step of one check (+50% from week 40). The baseline
is the first five sessions. The page is built as ``placement report`` builds it once
ReFrame's storage is read (judging each session, finding the steps, drawing the figure,
writing HTML, Markdown and CSV), in a fresh process per build whose peak memory is read;
the sessions are made as the page reads them, one at a time, and the making (JSON and the
changes above) is timed apart and left out. Each size is built from nothing (a new
folder) and then rebuilt in that folder as the page after a run is, with the points it kept
for the sessions judged before; three times each up to 1,000 sessions (the median is
given), once beyond. Each build checks what the page shows: the
NODE session flagged, the step found where it starts, the drift in the node's shift, the
page's rows and points bounded. Targets: the page of 10,000 sessions in under 60 s of CPU
time (the process's own: on the shared 2-core development machine the wall time is that
plus waiting for a core, printed beside it) and 2048 MB, both after a run and built from
nothing (a new baseline); exits 1 when either misses or a check fails.
The table in ``docs/reference/benchmarks.md`` is generated from the results JSON.

    python benchmarks/history_page.py [--sizes 100 1000 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "tests" / "fixtures" / "aa-sessions-2h").glob("run-*.json"))
PAGE = ROOT / "docs" / "reference" / "benchmarks.md"
RESULTS = Path(__file__).parent / "results" / "history_page.json"
BEGIN, END = "<!-- history-page: benchmarks/history_page.py -->", "<!-- /history-page -->"
#: the first session's start; the year's sessions spread evenly after it
START = dt.datetime(2025, 11, 3, 3, 0, tzinfo=dt.timezone.utc)
WEEKS = 52
BASELINE_WEEKS = 5
NODE_WEEK = 26
STEP_WEEK, STEP_TEST = 40, "MatmulCheck"
SIZES = (100, 1000, 10000)
#: the largest size's targets (CPU seconds, peak MB) and the size they hold at
TARGET_S, TARGET_MB, TARGET_SIZE = 60.0, 2048, 10000
#: builds up to this size are repeated (the median is given); larger ones run once
REPEATED_UP_TO = 1000


def _scaled(data: dict, factor, test: str = "") -> dict:
    """Every launch (and the reported value) of ``test`` (all: "") worse by ``factor``:
    times multiplied, rates divided."""
    from placement.judgement import reading
    for r in data["runs"]:
        for tc in r["testcases"]:
            if test and not tc["display_name"].startswith(test):
                continue
            units = {k.rsplit(":", 1)[-1]: v[4] for k, v in (tc.get("perfvalues") or {}).items()}
            for var, runs in (tc.get("perf_launches") or {}).items():
                hib = reading.direction.higher_is_better(var, units.get(var))
                f = factor if not hib else 1 / factor
                tc["perf_launches"][var] = [x * f for x in runs]
    return data


def _session(text: str, i: int, when: dt.datetime, keep_uuid: bool,
             extra: dict | None = None) -> dict:
    data = json.loads(text)
    info = data["session_info"]
    if not keep_uuid:
        info["uuid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"history-{i}-{bool(extra)}"))
    info.update(time_start=when.strftime("%Y%m%dT%H%M%S%z"),
                time_end=(when + dt.timedelta(minutes=20)).strftime("%Y%m%dT%H%M%S%z"),
                time_start_unix=when.timestamp(), **(extra or {}))
    return data


def when_of(i: int, n: int) -> dt.datetime:
    """Session ``i`` of ``n`` over the year."""
    return START + dt.timedelta(weeks=WEEKS) * i / n


def node_session(n: int) -> int:
    """The session the node was slower in: the first of week :data:`NODE_WEEK`."""
    return math.ceil(NODE_WEEK * n / WEEKS)


def made(n: int = WEEKS, texts: list[str] | None = None) -> Iterator[dict]:
    """The year's ``n`` whole-run sessions, oldest first, made one at a time: ReFrame run
    reports as its storage describes them."""
    texts = texts or [p.read_text() for p in SOURCES]
    for i in range(n):
        week = i * WEEKS / n
        data = _session(texts[i % len(texts)], i, when_of(i, n), keep_uuid=i < BASELINE_WEEKS)
        _scaled(data, 1 + 0.002 * week)
        if i == node_session(n):
            _scaled(data, 1.3)
        if week >= STEP_WEEK:
            _scaled(data, 1.5, STEP_TEST)
        yield data


def confirmations(n: int = WEEKS) -> list[dict]:
    """The node session's confirmation session, half a gap after it."""
    i = node_session(n)
    gap = dt.timedelta(weeks=WEEKS) / n
    data = _session(SOURCES[i % len(SOURCES)].read_text(), i, when_of(i, n) + gap / 2,
                    False, {"acceptance": "confirmation"})
    return [_scaled(_scaled(data, 1 + 0.002 * i * WEEKS / n), 1.3)]


def year_of_sessions(weeks: int = WEEKS) -> tuple[list[dict], list[dict], list[Path]]:
    """(the weekly sessions, their confirmation sessions, the baseline's run reports)."""
    return list(made(weeks)), confirmations(weeks), SOURCES[:BASELINE_WEEKS]


class _Timed:
    """An iterator whose own time (making each session) is summed, to be left out."""

    def __init__(self, it: Iterator) -> None:
        self.it, self.wall, self.cpu = it, 0.0, 0.0

    def __iter__(self) -> Iterator:
        return self

    def __next__(self):
        t, c = time.perf_counter(), time.process_time()
        try:
            return next(self.it)
        finally:
            self.wall += time.perf_counter() - t
            self.cpu += time.process_time() - c


def build(out: Path, n: int) -> dict:
    """The page of ``n`` sessions in ``out``: its wall and CPU seconds (the making of the
    sessions left out) and this process's peak memory, MB."""
    from placement.judgement import reading
    from placement.report import history_page
    texts = [p.read_text() for p in SOURCES]
    making = _Timed(made(n, texts))
    # from_data is the page's reading of a stored session: it stays counted
    sessions = (reading.run_report.from_data(d, Path(d["session_info"]["uuid"])) for d in making)
    conf = [reading.run_report.from_data(d, Path("confirmation")) for d in confirmations(n)]
    t, c = time.perf_counter(), time.process_time()
    history_page.write("generic", sessions, conf, out)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {"wall_s": wall - making.wall, "cpu_s": cpu - making.cpu, "made_cpu_s": making.cpu,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def shown(out: Path, n: int) -> dict:
    """What the page shows, read back from its files: the NODE session flagged, the steps
    found, the drift in the node's shift, its rows, size and figure."""
    from placement.report import history_bins, history_page
    html = (out / "index.html").read_text()
    rows = re.search(r'<table id="sessions">.*?</table>', html, re.S).group(0).count("<tr")
    steps = re.search(r'<table id="steps">.*?</table>', html, re.S).group(0)
    step_rows = re.findall(r"<tr[^>]*><td>([^<]*)</td><td>(\d{4}-\d\d-\d\d)", steps)
    flagged, shift = set(), {}
    with open(out / "numbers.csv", newline="") as f:
        for r in csv.DictReader(f):
            if r["quantity"] == "NODE line":
                flagged.add(r["row"])
            elif r["quantity"] == "node shift":
                shift[r["row"]] = float(r["value"])
    node_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"history-{node_session(n)}-False"))
    last = [shift[str(uuid.uuid5(uuid.NAMESPACE_URL, f"history-{i}-False"))]
            for i in range(n - max(3, n // 50), n)]
    step_day = when_of(math.ceil(STEP_WEEK * n / WEEKS), n).date()
    size = max(1, math.ceil(n / history_bins.MAX_POINTS))
    slack = dt.timedelta(weeks=WEEKS) * size / n + dt.timedelta(days=1)
    on_step = [d for name, d in step_rows if name.startswith(STEP_TEST)
               and abs(dt.date.fromisoformat(d) - step_day) <= slack]
    checks = {"node_flagged": node_uuid in flagged,
              "step_found": bool(on_step),
              "drift_in_shift": 5.0 <= statistics.median(last) <= 16.0,
              "rows_bounded": rows - 1 <= history_page.RECENT_ROWS}
    return {"flagged": len(flagged), "steps": len(step_rows),
            "steps_on_the_step": len(on_step), "rows": rows - 1,
            "last_shift_pct": round(statistics.median(last), 1),
            "html_kb": round(len(html.encode()) / 1024),
            "figure_kb": round((out / history_page.FIGURE).stat().st_size / 1024),
            "csv_kb": round((out / "numbers.csv").stat().st_size / 1024), "checks": checks}


def _child(n: int, out: Path) -> None:
    r = build(out, n)
    r.update(shown(out, n))
    print(json.dumps(r))


def record_baseline(where: Path) -> None:
    """The baseline of the first sessions, as ``placement baseline record`` writes it."""
    from placement import cli
    os.environ["PLACEMENT_BASELINES"] = str(where)
    froms = [a for p in SOURCES[:BASELINE_WEEKS] for a in ("--from", str(p))]
    if cli.main(["baseline", "record", "--system", "generic", *froms]):
        raise SystemExit("could not record the baseline")


def fresh(n: int, out: Path) -> dict:
    """One build of ``n`` sessions into ``out`` in a fresh process (its peak memory is its
    own); a folder a page was built in before is a rebuild (its points kept)."""
    r = subprocess.run([sys.executable, __file__, "--child", str(n), str(out)],
                       capture_output=True, text=True, env={**os.environ})
    if r.returncode:
        raise SystemExit(f"the build of {n} sessions failed: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict]) -> dict:
    return {"runs": len(runs), "wall_s": round(statistics.median(r["wall_s"] for r in runs), 2),
            "cpu_s": round(statistics.median(r["cpu_s"] for r in runs), 2),
            "peak_mb": round(max(r["peak_mb"] for r in runs)),
            "checks": {k: all(r["checks"][k] for r in runs) for k in runs[0]["checks"]}}


def measure(n: int, repeats: int, tmp: Path) -> dict:
    """``n`` sessions built from nothing (a new folder each time), then rebuilt in the last
    of those folders as the page after a run is (every session's point kept)."""
    times = repeats if n <= REPEATED_UP_TO else 1
    cold = [fresh(n, tmp / f"history-{n}-{i}") for i in range(times)]
    again = [fresh(n, tmp / f"history-{n}-{times - 1}") for _ in range(times)]
    out = {k: v for k, v in cold[-1].items() if k not in ("wall_s", "cpu_s", "peak_mb")}
    out.update(sessions=n, **_summary(cold), rebuild=_summary(again))
    out["checks"] = {k: v and out["rebuild"]["checks"][k] for k, v in out["checks"].items()}
    return out


def exponent(sizes: list[dict]) -> float | None:
    """The slope of log(CPU seconds) on log(sessions): 1 for a linear cost."""
    pts = [(math.log(r["sessions"]), math.log(r["cpu_s"])) for r in sizes if r["cpu_s"] > 0]
    if len(pts) < 2:
        return None
    mx, my = statistics.mean(p[0] for p in pts), statistics.mean(p[1] for p in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def page_block(result: dict) -> str:
    """The reference page's table, generated from the results JSON."""
    rows = ["| sessions | built from nothing: CPU s / wall s / peak MB | after a run (points "
            "kept): CPU s / wall s / peak MB | page KB (rows) | figure KB | CSV KB | "
            "NODE lines | steps (on the step) | checks |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in result["sizes"]:
        ok = "all hold" if all(r["checks"].values()) else \
            "failed: " + ", ".join(k for k, v in r["checks"].items() if not v)
        b = r["rebuild"]
        rows.append(f"| {r['sessions']:,} | {r['cpu_s']:.1f} / {r['wall_s']:.1f} / "
                    f"{r['peak_mb']} | {b['cpu_s']:.1f} / {b['wall_s']:.1f} / {b['peak_mb']} | "
                    f"{r['html_kb']} ({r['rows']}) | {r['figure_kb']} | "
                    f"{r['csv_kb']:,} | {r['flagged']} | {r['steps']} "
                    f"({r['steps_on_the_step']}) | {ok} |")
    exp = result["exponent"]
    rows += ["", *_marginal(result["sizes"]),
             f"CPU time a median of {result['repeats']} fresh processes up to "
             f"{REPEATED_UP_TO:,} sessions, one beyond; peak memory the process's own. "
             "After a run the page is rebuilt with the points it kept for the stored sessions "
             "(the same baseline and judgement); from nothing after a new baseline or "
             f"version. Fitted exponent of the CPU time from nothing in the number of "
             f"sessions: **{'n/a' if exp is None else f'{exp:.2f}'}**. Target at "
             f"{TARGET_SIZE:,} sessions: under {TARGET_S:.0f} s of CPU and {TARGET_MB} MB; "
             f"met by the page after a run: **{'yes' if result['met'] else 'no'}**, by one "
             f"built from nothing: **{'yes' if result.get('met_cold') else 'no'}**."]
    return "\n".join([BEGIN, *rows, END])


def _marginal(sizes: list[dict]) -> list[str]:
    """The CPU time each further session costs between the two largest sizes (the fixed
    cost of a page, its figure and imports, flattens the fitted exponent at small sizes)."""
    if len(sizes) < 2:
        return []
    a, b = sizes[-2], sizes[-1]
    n = b["sessions"] - a["sessions"]
    cold = (b["cpu_s"] - a["cpu_s"]) / n * 1000
    kept = (b["rebuild"]["cpu_s"] - a["rebuild"]["cpu_s"]) / n * 1000
    return [f"Each further session costs {cold:.1f} ms of CPU built from nothing and "
            f"{kept:.1f} ms after a run (between {a['sessions']:,} and {b['sessions']:,} "
            "sessions)."]


def write_page(result: dict) -> None:
    """The figures into their page, between its markers (:mod:`page_blocks`)."""
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(result))


def met(sizes: list[dict], build: str = "rebuild") -> bool:
    """Every check held, and the target size (when measured) within its targets: the page
    after a run (``rebuild``: the stored sessions' points kept) or built from nothing
    (``cold``)."""
    ok = all(all(r["checks"].values()) for r in sizes)
    for r in sizes:
        if r["sessions"] >= TARGET_SIZE:
            m = r["rebuild"] if build == "rebuild" else r
            ok = ok and m["cpu_s"] < TARGET_S and m["peak_mb"] < TARGET_MB
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("N", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(int(args.child[0]), Path(args.child[1]))
        return 0
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        record_baseline(Path(tmp) / "baselines")
        for n in args.sizes:
            r = measure(n, args.repeats, Path(tmp))
            sizes.append(r)
            b = r["rebuild"]
            print(f"{n:6d} sessions: {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall "
                  f"(median of {r['runs']}), peak {r['peak_mb']} MB; rebuilt: "
                  f"{b['cpu_s']:.2f} s CPU, {b['wall_s']:.2f} s wall, peak {b['peak_mb']} MB; "
                  f"page {r['html_kb']} KB, "
                  f"{r['rows']} rows, figure {r['figure_kb']} KB, CSV {r['csv_kb']} KB; "
                  f"{r['flagged']} NODE line(s), {r['steps']} step(s); checks "
                  f"{r['checks']}", flush=True)
    result = {"sizes": sizes, "repeats": args.repeats, "exponent": exponent(sizes),
              "target_s": TARGET_S, "target_mb": TARGET_MB, "target_size": TARGET_SIZE,
              "met": met(sizes), "met_cold": met(sizes, "cold")}
    from placement.util import atomic
    atomic.write_text(RESULTS, json.dumps(result, indent=1) + "\n")
    if TARGET_SIZE in args.sizes:
        write_page(result)
    print(f"fitted exponent {result['exponent']}; targets met by the page after a run: "
          f"{result['met']}, by one built from nothing: {result['met_cold']}")
    return 0 if result["met"] and result["met_cold"] else 1


if __name__ == "__main__":
    sys.exit(main())
