"""How long an NPB case may take: per-run watchdog budgets and the job's time limit.

A placement that goes wrong rarely crashes: threads spin-wait on shared cores
and the run simply takes ten or a hundred times longer. So every run is bounded:

* a run at or below the partition's PU count gets ``SLACK`` times the serial
  time of a slow reference core (below): a parallel run should never be slower
  than a serial one, let alone twice as slow;
* an oversubscribed run (more threads than PUs) gets ten times the wall time of
  the same case at the full count, measured in the same job just before (the
  collapse rule); its static budget is ten times the full-count budget;
* the job's time limit is the sum of its runs' budgets plus a fixed overhead,
  so the scheduler only ends a job the watchdog could not.

Serial seconds: the Bulldozer (Opteron 6272) and Xeon E5620 studies' single-
thread times where they have one, otherwise five times the NPB 3.4 logs'
single-thread time on a Zen 4 core (the studies' cores are 3-10x slower),
rounded up. They are budgets, not expectations.
"""

from __future__ import annotations

import math

#: Serial seconds per benchmark and class on a slow (2010-2012 era) core.
SERIAL_S: dict[str, dict[str, float]] = {
    "BT": {"S": 1, "W": 10, "A": 95, "B": 310, "C": 1560},
    "CG": {"S": 1, "W": 2, "A": 5, "B": 100, "C": 250},
    "EP": {"S": 2, "W": 3, "A": 40, "B": 90, "C": 600},
    "FT": {"S": 1, "W": 1, "A": 10, "B": 85, "C": 370},
    "SP": {"S": 1, "W": 12, "A": 60, "B": 265, "C": 1160},
    "LU": {"S": 1, "W": 12, "A": 90, "B": 295, "C": 1200},
    "MG": {"S": 1, "W": 1, "A": 8, "B": 40, "C": 200},
    "IS": {"S": 1, "W": 1, "A": 6, "B": 25, "C": 100},
}
#: Classes D and E scale roughly 16x per step in work.
_CLASS_STEP = {"D": 16, "E": 256}

SLACK = 2.0            #: a run at <= full count may take this many serial times
MIN_RUN_S = 30.0       #: no budget is shorter (process start-up, a loaded laptop)
COLLAPSE_FACTOR = 10.0  #: an oversubscribed run may take this many full-count times
MIN_COLLAPSE_S = 10.0  #: floor of the measured collapse budget (class S runs take ms)
JOB_OVERHEAD_S = 120.0  #: probe, staging and scheduler slack per job
#: The partition extra (``config/systems/*.py``) that gives a slow node's budget scale once,
#: so a site does not repeat ``-S budget_scale=N`` on every command line for that partition.
SCALE_EXTRA = "npb_budget_scale"


def serial_seconds(benchmark: str, npb_class: str) -> float:
    """The slow-core serial time used for budgets (classes D/E extrapolated from C)."""
    table = SERIAL_S[benchmark.upper()]
    cls = npb_class.upper()
    if cls in table:
        return float(table[cls])
    return float(table["C"] * _CLASS_STEP[cls])


def resolve_scale(given: float | None, extra: object, partition: str) -> float:
    """The budget scale a case runs with: ``-S budget_scale=N`` where given, else the
    partition's ``extras['npb_budget_scale']``, else 1 (a real node at the reference speed).

    ValueError, in one line, for a scale that gives no usable watchdog (0, below 0, NaN,
    infinite, not a number): a run would be stopped at once or never.
    """
    if given is not None:
        value, where = given, "budget_scale"
    elif extra is not None:
        value, where = extra, f"{partition}: extras['{SCALE_EXTRA}']"
    else:
        return 1.0
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and value > 0
    if not ok:
        raise ValueError(f"{where}={value!r}: expected a finite number above 0 (how many "
                         "times slower than the budgets' reference core)")
    return float(value)


def run_budget(benchmark: str, npb_class: str, threads: int, pus: int,
               scale: float = 1.0) -> float:
    """Static watchdog seconds for one run with ``threads`` threads on ``pus`` PUs.

    ``scale``: how many times slower the node's cores are than the slow reference core
    (an emulated node under QEMU's TCG, a throttled partition); everything scales with it.
    """
    base = scale * max(MIN_RUN_S, SLACK * serial_seconds(benchmark, npb_class))
    return base * COLLAPSE_FACTOR if threads > pus else base


def collapse_budget(full_count_wall: float) -> float:
    """Watchdog seconds for an oversubscribed run, from the measured full-count wall time."""
    return max(MIN_COLLAPSE_S, COLLAPSE_FACTOR * full_count_wall)


def job_time_limit(benchmark: str, npb_class: str, threads: int, pus: int,
                   repeats: int, scale: float = 1.0) -> int:
    """Seconds for the whole job: its runs' budgets (and the full-count run) plus overhead,
    all ``scale`` times longer on a node that much slower than the reference core."""
    total = repeats * run_budget(benchmark, npb_class, threads, pus, scale)
    if threads > pus:
        total += run_budget(benchmark, npb_class, pus, pus, scale)
    return int(math.ceil((total + scale * JOB_OVERHEAD_S) / 60.0) * 60)
