"""Run every benchmark of this folder, one after the other: ``make bench``.

Each benchmark prints its own table and writes ``benchmarks/results/<name>.json``;
docs/reference/benchmarks.md quotes them. Each runs with its defaults, the settings of the
figures there. Exit status: 0 when every benchmark met its target, else 1
(naming those that did not).

Not run here, because each needs what the test setup starts as root:
``distribute_scale.py`` (a real slurmctld serving a 1,000-node slurm.conf) and
``partition_goals.py record`` (a live 4-node partition); ``partition_goals.py judge``
judges the sessions already recorded and is run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: In the benchmarks page's order.
BENCHMARKS = (("map_speed.py",), ("kernels_vs_likwid.py",), ("regression_detection.py",),
              ("history_page.py",), ("report_history.py",), ("pagesample_overhead.py",),
              ("baseline_load.py",), ("peer_judge_scale.py",), ("peer_nulls.py",),
              ("peer_sessions_maxt.py",), ("peer_history.py",), ("partition_goals.py", "judge"),
              ("report_scale.py",), ("partition_cost.py",))


def main() -> int:
    failed = []
    for name, *args in BENCHMARKS:
        print(f"== {' '.join([name, *args])}", flush=True)
        if subprocess.run([sys.executable, str(HERE / name), *args],
                          cwd=HERE.parent).returncode:
            failed.append(name)
    if failed:
        print(f"missed its target or failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
