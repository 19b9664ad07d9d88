"""Run every benchmark of this folder, one after the other: ``make bench``.

Each benchmark prints its own table and writes ``benchmarks/results/<name>.json``;
docs/reference/benchmarks.md quotes them. Each runs with its defaults, the settings of the
figures there. Exit status: 0 when every benchmark met its target, else 1
(naming those that did not).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: In the benchmarks page's order.
BENCHMARKS = ("map_speed.py", "kernels_vs_likwid.py", "regression_detection.py",
              "history_page.py", "report_history.py", "pagesample_overhead.py",
              "peer_judge_scale.py", "report_scale.py", "partition_cost.py")


def main() -> int:
    failed = []
    for name in BENCHMARKS:
        print(f"== {name}", flush=True)
        if subprocess.run([sys.executable, str(HERE / name)], cwd=HERE.parent).returncode:
            failed.append(name)
    if failed:
        print(f"missed its target or failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
