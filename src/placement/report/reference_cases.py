"""Cases from stored baselines and from the studies' CSV tables, for ``reports/reference/``.

The reference report shows what a system's baseline says in the studies'
layout, so it can be checked cell by cell against the published Tables
(a baseline typed in wrong shows up there, not as a mysterious regression).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from ..judgement import Case, PerfValue, baselines
from ..util import PlacementError, regular_file


def from_baseline(path: Path) -> list[Case]:
    """One case per leaf mapping of a reference file; the system is the file's name."""
    if not path.exists():
        raise PlacementError(f"reference file {str(path)!r} not found (give a YAML file "
                             "`placement baseline record` wrote, as in config/baselines/)")
    data = baselines.store.load(path)
    if not data:
        raise PlacementError(f"{path}: no reference entries")
    system = path.name.split(".")[0]
    by: dict[tuple, Case] = {}
    for (test, keys, var), v in baselines.store.entries(data).items():
        index = baselines.store.index_of(data, test)
        k = (test, keys)
        if k not in by:
            by[k] = Case(test=test, params=dict(zip(index, keys)), system=system,
                         partition="baseline", environ="stored", result="pass",
                         fail_phase=None, perf={}, index=index)
        try:
            value = float(v[0])       # a bound may be None: one-sided (no limit that side)
            lower, upper = (None if b is None else float(b) for b in v[1:3])
        except (TypeError, ValueError, IndexError):
            raise PlacementError(f"{path}: {test}{list(keys)}.{var}: expected "
                                 f"[value, lower, upper, unit], got {v!r}") from None
        by[k].perf[var] = PerfValue(value, value, lower, upper,
                                    v[3] if len(v) > 3 else None, None)
    for case in by.values():
        # the studies timed whole processes, so their baselines hold `wall`: tables show it as time
        if "time" not in case.perf and "wall" in case.perf:
            case.perf["time"] = case.perf["wall"]
    return list(by.values())


#: a seed table's columns (``../shared/seed-data/`` writes them so)
SEED_COLUMNS = ("benchmark", "class", "threads", "affinity", "time_s")


def _positive(text: str | None, kind: type) -> float | int | None:
    """``text`` as a finite number of ``kind`` above zero, else None."""
    try:
        v = kind(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def from_seed_csv(path: Path, system: str | None = None) -> list[Case]:
    """The seed tables (``benchmark,class,threads,affinity,time_s``; ``#`` comments)."""
    if not path.exists():
        raise PlacementError(f"seed table {str(path)!r} not found")
    system = system or path.stem.split("_npb")[0].replace("_", "-")
    text = regular_file.read_text(path, "seed table", 2**26)
    rows = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    reader = csv.DictReader(rows)
    missing = [c for c in SEED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise PlacementError(f"{path}: no column {', '.join(missing)} (a seed table's header "
                             f"is {','.join(SEED_COLUMNS)})")
    cases = []
    for n, r in enumerate(reader, start=1):
        threads, time_s = _positive(r["threads"], int), _positive(r["time_s"], float)
        if threads is None or time_s is None:
            raise PlacementError(f"{path}: data row {n} ({','.join(str(r[c]) for c in SEED_COLUMNS)}"
                                 "): threads must be a whole number and time_s a number of "
                                 "seconds, both above zero")
        cases.append(Case(
            test="NPB", params={"benchmark": r["benchmark"], "npb_class": r["class"],
                                "num_threads": threads, "affinity": r["affinity"]},
            system=system, partition="published", environ="seed", result="pass",
            fail_phase=None, perf={"time": PerfValue(time_s, None, None, None, "s", None)}))
    if not cases:
        raise PlacementError(f"{path}: no rows")
    return cases
