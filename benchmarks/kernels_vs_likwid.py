#!/usr/bin/env python3
"""Performance bar of the memory kernels: ours against likwid-bench, same machine, same run.

Built as shipped (portable flags, runtime dispatch of the wide store paths).
The bar: the single-thread and all-core memory-write kernels reach at least
90 % of likwid-bench's best store kernel, and the copy kernel at least 90 % of
its best copy kernel (one thread). Each side is run ``--runs`` times,
interleaved, and the medians are compared. likwid-bench counts the bytes it
loads plus stores (MByte/s, 1e6); our copy kernel reports the same as
``traffic_gbps``. Writes benchmarks/results/kernels_vs_likwid.{json,md}.

    python benchmarks/kernels_vs_likwid.py [--runs 5] [--size 1GB]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "src" / "kernels"
RESULTS = ROOT / "benchmarks" / "results"
STORE = ["store", "store_avx", "store_avx512", "store_mem", "store_mem_sse", "store_mem_avx",
         "store_mem_avx512"]
COPY = ["copy", "copy_sse", "copy_avx", "copy_avx512", "copy_mem", "copy_mem_sse",
        "copy_mem_avx", "copy_mem_avx512"]


def likwid_kernels() -> set[str] | str:
    """Kernels likwid-bench offers here, or why it cannot run."""
    if not shutil.which("likwid-bench"):
        return "likwid-bench is not installed"
    out = subprocess.run(["likwid-bench", "-a"], capture_output=True, text=True)
    if out.returncode != 0:
        return f"likwid-bench -a failed: {(out.stderr or out.stdout).strip()[:200]}"
    return {line.split(" - ")[0].strip() for line in out.stdout.splitlines() if " - " in line}


def likwid(kernel: str, size_mb: int, threads: int) -> float | None:
    """GB/s (1e9) of one likwid-bench run over the whole node's memory domain."""
    out = subprocess.run(["likwid-bench", "-t", kernel, "-w", f"N:{size_mb}MB:{threads}"],
                         capture_output=True, text=True)
    m = re.search(r"MByte/s:\s+([\d.]+)", out.stdout)
    return float(m.group(1)) / 1000 if out.returncode == 0 and m else None


def ours(args: list[str], key: str, env: dict[str, str] | None = None) -> float:
    out = subprocess.run([str(KERNELS / args[0]), *args[1:]], capture_output=True, text=True,
                         env=dict(os.environ, **(env or {})), check=True)
    m = re.search(rf"^result .*\b{key}=(\S+)", out.stdout, re.M)
    return float(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=1024, help="array size in MB (default 1024)")
    ns = ap.parse_args()
    if ns.runs < 1 or ns.size < 16:
        ap.error("--runs must be >= 1 and --size >= 16 (MB)")
    subprocess.run(["make", "-s", "-C", str(KERNELS)], check=True)
    threads = os.cpu_count() or 1
    per_thread = ns.size // threads
    cases = {
        "write_1_thread": (STORE, 1, ["memwrite", "--mode", "single", "--size", f"{ns.size}M",
                                      "--blocks", "64M"], "gbps", {}),
        f"write_{threads}_threads": (STORE, threads, ["memwrite", "--mode", "threads", "--block",
                                                      f"{per_thread}M"], "gbps",
                                     {"OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "close",
                                      "OMP_PLACES": "cores"}),
        "copy_1_thread": (COPY, 1, ["numacopy", "--size", f"{ns.size // 2}M"], "traffic_gbps", {}),
    }
    available = likwid_kernels()
    report: dict = {"runs": ns.runs, "size_mb": ns.size, "threads": threads, "cases": {}}
    if isinstance(available, str):
        report["likwid"] = available
        print(f"note: {available}; reporting our kernels only", file=sys.stderr)
    for name, (family, nthreads, cmd, key, env) in cases.items():
        mine: list[float] = []
        theirs: dict[str, list[float]] = {}
        for _ in range(ns.runs):     # interleaved, so drifts hit both sides alike
            mine.append(ours(cmd, key, {"STATLOOP_ITERS": "16", **env}))
            if not isinstance(available, str):
                for k in family:
                    if k in available:
                        size = ns.size // 2 if family is COPY else ns.size
                        v = likwid(k, size, nthreads)
                        if v is not None:
                            theirs.setdefault(k, []).append(v)
        entry = {"ours_gbps": statistics.median(mine), "ours_runs": mine}
        if theirs:
            best = max(theirs, key=lambda k: statistics.median(theirs[k]))
            entry.update(likwid_best=best, likwid_gbps=statistics.median(theirs[best]),
                         likwid_runs=theirs[best],
                         ratio=statistics.median(mine) / statistics.median(theirs[best]))
            entry["meets_90pct"] = entry["ratio"] >= 0.9
            # each interleaved pair's ratio: the spread tells a shortfall from noise
            pairs = [m / t for m, t in zip(mine, theirs[best])]
            entry.update(ratio_min=min(pairs), ratio_max=max(pairs))
        report["cases"][name] = entry
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "kernels_vs_likwid.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = ["| case | ours GB/s | likwid-bench best | likwid GB/s | ratio | per-run ratios |",
             "|---|---|---|---|---|---|"]
    for name, e in report["cases"].items():
        lines.append(f"| {name} | {e['ours_gbps']:.2f} | {e.get('likwid_best', '-')} | "
                     f"{e.get('likwid_gbps', float('nan')):.2f} | {e.get('ratio', float('nan')):.2f} | "
                     f"{e.get('ratio_min', float('nan')):.2f}-{e.get('ratio_max', float('nan')):.2f} |")
    note = f"\nlikwid-bench: {report['likwid']}\n" if "likwid" in report else ""
    table = "\n".join(lines) + "\n" + note + f"\nmedians of {ns.runs} runs, {ns.size} MB arrays\n"
    (RESULTS / "kernels_vs_likwid.md").write_text(table)
    print(table)
    missed = [n for n, e in report["cases"].items() if not e.get("meets_90pct", False)]
    if missed:      # below 90%, or no likwid-bench to compare with: the target is not shown
        print(f"MISSED the 90% target: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
