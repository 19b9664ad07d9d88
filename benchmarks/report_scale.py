"""A report of one large session: under a minute and 2 GB at 100k values, its cost against size.

The largest sessions a site writes are a partition's acceptance runs: every node runs the
acceptance matrix, each value of each node judged against its peers and against the
node's own baseline entries. The sessions here are real ones of this suite
(``tests/fixtures/validation/dev2core-acceptance-20261201``: three acceptance sessions of
about 340 values) spread over N nodes as ReFrame's ``--distribute`` names them (``%.nid``,
``job_nodelist``): node i takes session i mod 3 for the new run and the two others for its
baseline (recorded by ``placement baseline record``), so nodes differ as sessions of one
node did. One node in fifty is made 30% slower (the peer verdict names it) and one node's
matmul 40% slower (the baseline verdict calls it). Sizes of 1k, 10k and 100k values are
3, 30 and 297 nodes.

Each ``placement report --run NEW --no-compare`` (ReFrame's results storage is ReFrame's
cost and not timed) runs in a fresh process: its wall seconds, its own CPU seconds (user
and system, imports included) and its peak resident memory, the median of ``--repeats``
runs for the sizes below 100k (``--large-repeats`` at 100k), with the figures it drew and
whether its page says where every value is. Target: 100k values in under 60 s of CPU time
and 2048 MB (on the shared 2-core development machine the wall time is that plus waiting
for a core, printed beside it); exits 1 when missed. Writes
``benchmarks/results/report_scale.json`` and the table of
``docs/reference/report-scale.md``.

    .venv/bin/python benchmarks/report_scale.py [--sizes 1000,10000,100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from placement.util import atomic  # noqa: E402

SET = ROOT / "tests" / "fixtures" / "validation" / "dev2core-acceptance-20261201"
RESULTS = ROOT / "benchmarks" / "results" / "report_scale.json"
PAGE = ROOT / "docs" / "reference" / "report-scale.md"
BEGIN, END = "<!-- report-scale: benchmarks/report_scale.py -->", "<!-- /report-scale -->"
TARGET_VALUES, TARGET_S, TARGET_MB = 100_000, 60.0, 2048
#: every fiftieth node (from the eighth) 30% slower; one node's matmul 40% slower
SLOW_EVERY, SLOW_FIRST, SLOW_NODE, SLOW_MATMUL = 50, 7, 1.3, 1.4
MATMUL_NODE = 1


def sessions() -> list[dict]:
    """The recorded sessions the partitions are made of (three, one node each)."""
    paths = sorted(SET.glob("run-*.json"))
    if len(paths) < 3:
        raise SystemExit(f"report_scale: {SET} holds {len(paths)} sessions, 3 are needed")
    return [json.loads(p.read_text()) for p in paths[:3]]


def values_of(session: dict) -> int:
    """A session's performance values (every perfvalue of every case that is no fixture)."""
    return sum(len(tc.get("perfvalues") or {}) for r in session["runs"]
               for tc in r["testcases"] if not tc.get("fixture"))


def _worse(tc: dict, factor: float) -> None:
    """Every launch of ``tc`` worse by ``factor``: times multiplied, rates divided."""
    prefix = f"{tc['system']}:{tc['partition']}:"
    for var, runs in (tc.get("perf_launches") or {}).items():
        unit = ((tc.get("perfvalues") or {}).get(prefix + var) or [None] * 5)[4] or ""
        f = 1 / factor if unit.endswith("/s") else factor
        tc["perf_launches"][var] = [x * f for x in runs]


def partition(src: list[dict], nodes: int, shift: int, changed: bool) -> dict:
    """One session of ``nodes`` nodes: node i ran session ``(i + shift) mod 3``'s cases;
    ``changed``: the slower nodes and the slower matmul made so."""
    out = copy.deepcopy(src[shift % 3])
    cases = []
    for i in range(nodes):
        node = f"nid{i:05d}"
        for tc in src[(i + shift) % 3]["runs"][0]["testcases"]:
            if tc.get("fixture"):
                continue
            tc = copy.deepcopy(tc)
            tc["display_name"] += f" %.part={tc['system']}:{tc['partition']} %.nid={node}"
            tc["unique_name"] += f"_{node}"
            tc["job_nodelist"] = [node]
            if changed and i % SLOW_EVERY == SLOW_FIRST:
                _worse(tc, SLOW_NODE)
            if changed and i == MATMUL_NODE and tc["display_name"].startswith("MatmulCheck"):
                _worse(tc, SLOW_MATMUL)
            cases.append(tc)
    out["runs"] = [{**out["runs"][0], "testcases": cases}]
    return out


def _placement(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "placement", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)


def prepare(src: list[dict], nodes: int, tmp: Path) -> tuple[Path, dict]:
    """The new session of ``nodes`` nodes and a baseline of two others recorded for it:
    (the new run report, the environment that points the report at the baseline)."""
    env = {**os.environ, "PLACEMENT_BASELINES": str(tmp / "baselines"),
           "PLACEMENT_RESULTS": str(tmp / "results"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    (tmp / "baselines").mkdir()
    paths = []
    for shift, changed in ((0, True), (1, False), (2, False)):
        p = tmp / f"run-report-{shift}.json"
        p.write_text(json.dumps(partition(src, nodes, shift, changed)))
        paths.append(p)
    r = _placement(["baseline", "record", "--system", "generic", "--from", str(paths[1]),
                    "--from", str(paths[2])], env)
    if r.returncode:
        raise SystemExit(f"report_scale: baseline record failed: {r.stderr.strip()[-400:]}")
    return paths[0], env


#: run in the fresh process: the report, then its own CPU seconds and peak memory
_CHILD = ("import resource, sys\n"
          "from placement.cli.main import main\n"
          "rc = main(sys.argv[1:])\n"
          "u = resource.getrusage(resource.RUSAGE_SELF)\n"
          "print('COST', rc, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)\n")


def report_once(run: Path, env: dict, out: Path) -> dict:
    """One ``placement report`` in a fresh interpreter: wall, CPU, peak MB, what it wrote."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _CHILD, "report", "--run", str(run),
                        "--output", str(out), "--no-compare"], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    cost = next((ln.split() for ln in r.stdout.splitlines() if ln.startswith("COST ")), None)
    if r.returncode or cost is None or cost[1] != "0":
        raise SystemExit(f"report_scale: placement report failed: {r.stderr.strip()[-400:]}")
    folder = Path(r.stdout.splitlines()[0].strip())
    page = (folder / "index.html").read_text()
    return {"wall_s": wall, "cpu_s": float(cost[2]), "peak_mb": float(cost[3]),
            "figures": len(list(folder.glob("*.png"))),
            "says_where_values_are": "values are in the table of all values" in page,
            "csv_rows": sum(1 for _ in (folder / "numbers.csv").open()) - 1}


def measure(src: list[dict], size: int, repeats: int) -> dict:
    """A partition of at least ``size`` values: its report ``repeats`` times, the medians."""
    per_node = values_of(src[0])
    nodes = max(3, math.ceil(size / per_node))
    with tempfile.TemporaryDirectory(prefix="report-scale.") as tmp:
        run, env = prepare(src, nodes, Path(tmp))
        got = [report_once(run, env, Path(tmp) / f"reports-{k}") for k in range(repeats)]
        row = {"values": values_of(json.loads(run.read_text())), "nodes": nodes,
               "run_report_mb": round(run.stat().st_size / 2**20, 1), "runs": repeats,
               "wall_s": round(statistics.median(g["wall_s"] for g in got), 2),
               "cpu_s": round(statistics.median(g["cpu_s"] for g in got), 2),
               "peak_mb": round(max(g["peak_mb"] for g in got)),
               "figures": got[-1]["figures"], "csv_rows": got[-1]["csv_rows"],
               "says_where_values_are": all(g["says_where_values_are"] for g in got),
               "each": [{k: round(v, 2) for k, v in g.items() if k in ("wall_s", "cpu_s",
                                                                      "peak_mb")}
                        for g in got]}
    print(f"{row['values']:>7} values ({nodes:>3} nodes): CPU {row['cpu_s']:6.1f} s, wall "
          f"{row['wall_s']:6.1f} s (median of {repeats}), peak {row['peak_mb']:5.0f} MB, "
          f"{row['figures']} figures, {row['csv_rows']} CSV rows", flush=True)
    return row


def exponent(rows: list[dict]) -> float | None:
    """The slope of log(CPU seconds) on log(values): 1 for a cost linear in the values."""
    if len(rows) < 2:
        return None
    import numpy as np
    return float(np.polyfit(np.log([r["values"] for r in rows]),
                            np.log([r["cpu_s"] for r in rows]), 1)[0])


def page_block(result: dict) -> str:
    """The reference page's table, generated from the results JSON."""
    rows = ["| values | nodes | run report (MB) | CPU s (median) | wall s (median) | peak MB "
            "| figures | CSV rows |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in result["sizes"]:
        rows.append(f"| {r['values']} | {r['nodes']} | {r['run_report_mb']} | {r['cpu_s']:.1f} "
                    f"| {r['wall_s']:.1f} | {r['peak_mb']} | {r['figures']} | {r['csv_rows']} |")
    exp = result["exponent"]
    rows += ["", (f"Fitted exponent of the CPU time in the number of values: **{exp:.2f}**; "
                  if exp is not None else "")
             + f"target: {TARGET_VALUES} values in under {TARGET_S:.0f} s of CPU time and "
             f"{TARGET_MB} MB. {result['cpus']} CPUs, load average {result['load'][0]:.1f} "
             f"at the start and {result['load'][1]:.1f} at the end (wall time is CPU time "
             f"plus waiting for a core). Target met: **{'yes' if result['met'] else 'no'}**."]
    return "\n".join([BEGIN, *rows, END])


def write_page(result: dict) -> None:
    """The figures into their page, between its markers (:mod:`page_blocks`)."""
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(result))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3, help="runs per size below 100k")
    ap.add_argument("--large-repeats", type=int, default=1, help="runs at 100k values")
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    src = sessions()
    load0 = os.getloadavg()[0]
    rows = [measure(src, n, args.large_repeats if n >= TARGET_VALUES else args.repeats)
            for n in sizes]
    big = [r for r in rows if r["values"] >= TARGET_VALUES]
    met = bool(big) and all(r["cpu_s"] < TARGET_S and r["peak_mb"] < TARGET_MB
                            and r["says_where_values_are"] for r in big)
    result = {"target": {"values": TARGET_VALUES, "cpu_s": TARGET_S, "peak_mb": TARGET_MB},
              "met": met, "source": str(SET.relative_to(ROOT)), "cpus": os.cpu_count(),
              "load": [load0, os.getloadavg()[0]], "exponent": exponent(rows), "sizes": rows}
    RESULTS.parent.mkdir(exist_ok=True)
    atomic.write_text(RESULTS, json.dumps(result, indent=1) + "\n")
    write_page(result)
    print(f"target ({TARGET_VALUES} values in {TARGET_S:.0f} s of CPU, {TARGET_MB} MB): "
          f"{'met' if met else 'MISSED'}; wrote {RESULTS}, {PAGE}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
