"""What the page sampler costs: the datamap kernel with and without ``libpagesample.so``.

The kernel's own throughput (MLUP/s of its timed steps, after initialisation)
with the sampler preloaded, against the same kernel without it, launches
alternated, medians compared. The sampler's cost grows with the pages armed per
second (PAGESAMPLE_PAGES / PAGESAMPLE_PERIOD_US); the target is on its
defaults: at most 25% slower. The figures are quoted in docs/reference/benchmarks.md.

    python benchmarks/pagesample_overhead.py [--repeats 5] [--grid 512] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "src" / "kernels"
TARGET_PCT = 25.0
#: (label, sampler settings); None: without the sampler. The first sampled row is the defaults.
SETTINGS = [("without", None), ("defaults (64 pages / 10 ms)", {}),
            ("256 pages / 10 ms", {"PAGESAMPLE_PAGES": "256"}),
            ("64 pages / 2 ms", {"PAGESAMPLE_PERIOD_US": "2000"})]


def launch(grid: int, threads: int, sampler: dict | None, out: Path) -> tuple[float, int]:
    """MLUP/s of one launch and the sampler's sample count (0 without it)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "close"}
    if sampler is not None:
        env.update({"LD_PRELOAD": str(KERNELS / "libpagesample.so"),
                    "PAGESAMPLE_OUTPUT": str(out), **sampler})
    proc = subprocess.run([str(KERNELS / "datamap"), "--nx", str(grid), "--ny", str(grid),
                           "--init", "parallel"], env=env, capture_output=True, text=True, check=True)
    mlups = float(re.search(r"^result kernel=datamap .*mlups=(\S+)", proc.stdout, re.M).group(1))
    samples = re.search(r"samples=(\d+)", proc.stderr)
    return mlups, int(samples.group(1)) if samples else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--grid", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    subprocess.run(["make", "-s", "-C", str(KERNELS), "datamap", "libpagesample.so"], check=True)
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    runs: dict[str, list[tuple[float, int]]] = {label: [] for label, _ in SETTINGS}
    for _ in range(args.repeats):                 # alternated: a slow spell hits every row
        for label, sampler in SETTINGS:
            runs[label].append(launch(args.grid, args.threads, sampler, out / "pagesample.csv"))
    (out / "pagesample.csv").unlink(missing_ok=True)
    base = statistics.median(m for m, _ in runs["without"])
    rows = []
    for label, _ in SETTINGS:
        mlups = statistics.median(m for m, _ in runs[label])
        rows.append({"settings": label, "median_mlups": round(mlups, 3),
                     "overhead_pct": round(100 * (1 - mlups / base), 1),
                     "median_samples": int(statistics.median(s for _, s in runs[label]))})
    print(f"datamap --nx {args.grid} --ny {args.grid}, {args.threads} threads, "
          f"medians of {args.repeats}; target: defaults at most {TARGET_PCT:.0f}% slower")
    print(f"{'settings':<30}{'MLUP/s':>9}{'overhead':>10}{'samples':>9}")
    for r in rows:
        print(f"{r['settings']:<30}{r['median_mlups']:>9}{r['overhead_pct']:>9}%{r['median_samples']:>9}")
    (out / "pagesample_overhead.json").write_text(json.dumps(
        {"grid": args.grid, "threads": args.threads, "repeats": args.repeats,
         "target_pct": TARGET_PCT, "rows": rows}, indent=1) + "\n")
    ok = rows[1]["overhead_pct"] <= TARGET_PCT
    print("defaults: " + ("ok" if ok else "MISSED the target"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
