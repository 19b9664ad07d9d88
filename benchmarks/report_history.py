"""How long ``placement report`` takes, and how much memory, against the sessions ReFrame stores.

The history page's benchmark (``history_page.py``) hands the page its sessions one at a time;
``placement report`` reads them from ReFrame's results storage
(``reframe --describe-stored-sessions``), compares the run with the previous one, writes
the run's report, the system's history page, and the step table over the stored sessions.
This stores the history page benchmark's sessions (real A/A run reports spread over a year,
a NODE session with its confirmation, a step) in a results database with ReFrame's own
storage code, records the baseline of the first five, and times ``placement report --run``
of the newest session in a fresh process: its own CPU time and peak memory and the CPU of
the ReFrame processes it starts (their CPU, and the peak of the largest: what the report
asks ReFrame for, a period of sessions at a time); and, for scale only, ReFrame describing
every stored session at once, alone (its CPU, peak memory and output: what the report
asked for before it read a period at a time). Targets: under 60 s of CPU time and
2048 MB at 10,000 sessions (the process's own and its ReFrame processes' each); exits 1
when either misses. The storing is not counted.

    python benchmarks/report_history.py [--sessions 10000] [--results DIR]

``--results DIR``: a results folder these sessions were stored in before (its database is
read, never written), so a size is measured again without storing it again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import history_page as bench

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "benchmarks.md"
RESULTS = Path(__file__).parent / "results" / "report_history.json"
BEGIN, END = "<!-- report-history: benchmarks/report_history.py -->", "<!-- /report-history -->"
TARGET_S, TARGET_MB = 60.0, 2048

_STORE = """
import json, sys
sys.path.insert(0, sys.argv[3])
import reframe.core.config as config
import reframe.core.runtime as rt
site = config.load_config(sys.argv[1])
site.select_subconfig('generic')
rt.init_runtime(site)
from reframe.frontend.reporting.storage import StorageBackend
import history_page as bench
backend = StorageBackend.default()

def stored(d):
    # what ReFrame's storage indexes and the slimmed fixtures leave out
    info = d['session_info']
    info.setdefault('time_end_unix', info['time_start_unix'] + 1200)
    for r in d['runs']:
        for k, tc in enumerate(r['testcases']):
            tc.setdefault('job_completion_time_unix', info['time_start_unix'] + 600)
            tc['uuid'] = f"{info['uuid']}:0:{k}"
    return d

n, last = int(sys.argv[2]), None
for i, d in enumerate(bench.made(n)):
    backend.store(stored(d), f'history-{i}.json')
    last = d
for d in bench.confirmations(n):
    backend.store(stored(d), 'confirmation.json')
json.dump(last, sys.stdout)
"""

_MEASURE = """
import json, resource, sys, time
from placement import cli
t = time.perf_counter()
rc = cli.main(sys.argv[1:])
me, ch = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"rc": rc, "wall_s": time.perf_counter() - t,
                  "cpu_s": me.ru_utime + me.ru_stime, "peak_mb": me.ru_maxrss / 1024,
                  "reframe_cpu_s": ch.ru_utime + ch.ru_stime,
                  "reframe_peak_mb": ch.ru_maxrss / 1024}))
"""

#: one ReFrame call describing every stored session, from a process of its own that holds
#: nothing (a child's peak is read as at least its parent's size where it was forked)
_DESCRIBE = """
import json, resource, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
size = 0
while chunk := p.stdout.read(1 << 20):
    size += len(chunk)
p.wait()
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"describe_rc": p.returncode, "describe_cpu_s": ch.ru_utime + ch.ru_stime,
                  "describe_peak_mb": ch.ru_maxrss / 1024, "describe_out_mb": size / 2**20}))
"""


def store(n: int, results: Path) -> Path:
    """``n`` sessions and the NODE session's confirmation in ReFrame's database under
    ``results``; the newest session's run report, written beside it."""
    results.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([sys.executable, "-c", _STORE, str(ROOT / "config" / "settings.py"),
                        str(n), str(Path(__file__).parent)], capture_output=True, text=True,
                       env={**os.environ, "PLACEMENT_RESULTS": str(results)}, cwd=ROOT)
    if r.returncode:
        raise SystemExit(f"storing {n} sessions failed: {r.stderr.strip()[-2000:]}")
    last = results / "newest-session.json"
    last.write_text(r.stdout)
    return last


def measure(results: Path, last: Path, out: Path) -> dict:
    """``placement report --run`` of the newest session in a fresh process."""
    r = subprocess.run([sys.executable, "-c", _MEASURE, "report", "--run", str(last),
                        "--output", str(out)], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PLACEMENT_RESULTS": str(results)})
    if r.returncode:
        raise SystemExit(f"placement report failed: {r.stderr.strip()[-2000:]}")
    got = json.loads(r.stdout.strip().splitlines()[-1])
    got["history_page"] = any(out.glob("history/*/index.html"))
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in got.items()}


def describe(results: Path) -> dict:
    """ReFrame describing every stored session once, as ``placement report`` asks it to
    (:func:`placement.report.previous_run.sessions_of`): its CPU, peak and output."""
    from placement.report.previous_run import reframe_cmd
    cmd = [a for a in reframe_cmd(ROOT) or [] if a != "--table-format=csv"]
    r = subprocess.run([sys.executable, "-c", _DESCRIBE, *cmd,
                        "--describe-stored-sessions=19700101T0000+0000:now"],
                       capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PLACEMENT_RESULTS": str(results)})
    if r.returncode or not cmd:
        raise SystemExit(f"ReFrame's description failed: {r.stderr.strip()[-2000:]}")
    got = json.loads(r.stdout.strip().splitlines()[-1])
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in got.items()}


def met(r: dict) -> bool:
    """Within the targets, the process's own and its ReFrame processes' each, and the page
    written (the description of every session at once is no part of it: the report no
    longer asks for one)."""
    return (r["rc"] == 0 and r["history_page"] and r["cpu_s"] < TARGET_S
            and r["peak_mb"] < TARGET_MB and r["reframe_cpu_s"] < TARGET_S
            and r["reframe_peak_mb"] < TARGET_MB)


def page_block(r: dict) -> str:
    """The reference page's lines, generated from the results JSON."""
    return "\n".join([
        BEGIN,
        "| stored sessions | placement: CPU s / wall s / peak MB | its ReFrame calls: CPU s "
        "/ peak MB | for scale: one ReFrame description of every session: CPU s / peak MB / "
        "output MB | history page written | target met |",
        "|---:|---:|---:|---:|---|---|",
        f"| {r['sessions']:,} | {r['cpu_s']:.1f} / {r['wall_s']:.1f} / {r['peak_mb']:.0f} | "
        f"{r['reframe_cpu_s']:.1f} / {r['reframe_peak_mb']:.0f} | {r['describe_cpu_s']:.1f} / {r['describe_peak_mb']:.0f} "
        f"/ {r['describe_out_mb']:.0f} | {'yes' if r['history_page'] else 'no'} | "
        f"{'yes' if r['met'] else '**no**'} |",
        "",
        f"Target: under {TARGET_S:.0f} s of CPU and {TARGET_MB} MB, the process's own and "
        "its ReFrame processes' each; one fresh process, the page built from nothing (no "
        "points kept). The ReFrame processes' peak is the largest of those the report "
        "started, read from above: a process is read as at least its parent's size where "
        "it was started. The description of every session at once is for scale, no target: "
        "the report asks for a period of sessions at a time.",
        END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10000)
    parser.add_argument("--results", type=Path,
                        help="a results folder these sessions were stored in before")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bench.record_baseline(Path(tmp) / "baselines")
        results = args.results or Path(tmp) / "results"
        last = results / "newest-session.json"
        if not (args.results and last.is_file()):
            last = store(args.sessions, results)
        r = {"sessions": args.sessions, **measure(results, last, Path(tmp) / "reports"),
             **describe(results)}
    r["met"] = met(r)
    from placement.util import atomic
    atomic.write_text(RESULTS, json.dumps(r, indent=1) + "\n")
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(r))
    print(json.dumps(r))
    return 0 if r["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
