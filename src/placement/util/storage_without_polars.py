"""ReFrame's results-storage queries on an installation without polars (a Spack view).

ReFrame 4.10 refuses every results-storage option unless ``polars`` imports
(``validate_storage_options`` in ``reframe/frontend/cli.py``: "results storage requires
polars to be installed"), although only the tables of ``--performance-compare`` and
``--list/--describe-stored-testcases`` are built with it; reading and listing stored
sessions is plain SQLite. Spack's ``py-polars`` needs Rust, LLVM and Arrow built from
source (docs/howto/spack.md), so the project's ``reframe`` recipe leaves it out, and
without this every acceptance run there after the first could not compare with the
previous one, nor could a report find its history.

Where polars is missing, ReFrame's own query parsing, storage and printing stay as they
are; two things change: the check lets the options that do not build a table through
polars pass (:data:`WITHOUT_POLARS`), and ``compare_testcase_data`` (the one step of
``--performance-compare`` that uses polars) is this module's :func:`compare_testcase_data`,
which builds the same rows in plain Python. Where polars imports, nothing changes.
Installed from ``config/common.py`` on the ReFrame versions of
:data:`placement.util.reframe_workarounds.STORAGE_WITHOUT_POLARS`; ``tests/test_storage_without_polars.py``
checks the rows against ReFrame's own polars tables.
"""

from __future__ import annotations

import importlib.util
import math
import statistics
from collections.abc import Callable, Iterable
from typing import Any

from .reframe_workarounds import STORAGE_WITHOUT_POLARS, enabled

#: storage options that need no polars once comparisons are made here
WITHOUT_POLARS = ("--delete-stored-sessions", "--describe-stored-sessions",
                  "--list-stored-sessions", "--performance-compare")


def polars_missing() -> bool:
    return importlib.util.find_spec("polars") is None


def install() -> None:
    """Where polars is missing: ReFrame's check and comparison step replaced (see above)."""
    if not (enabled(STORAGE_WITHOUT_POLARS) and polars_missing()):
        return
    from reframe.frontend import cli, reporting
    if getattr(cli.validate_storage_options, "placement_without_polars", False):
        return
    cli.validate_storage_options = _validator(cli.validate_storage_options)
    reporting.compare_testcase_data = compare_testcase_data


def _validator(stock: Callable) -> Callable:
    """ReFrame's option check, asking for polars only for the options that still need it."""
    def validate(namespace, cmd_options):
        own = [o for o in cmd_options if o in WITHOUT_POLARS]
        rest = [o for o in cmd_options if o not in WITHOUT_POLARS]
        return _storage_enabled(namespace, own) and stock(namespace, rest)
    validate.placement_without_polars = True
    return validate


def _storage_enabled(namespace, cmd_options: list[str]) -> bool:
    """ReFrame's own first check (results storage switched on), word for word."""
    from reframe.core import logging, runtime
    if runtime.runtime().get_option("storage/0/enable"):
        return True
    for arg in cmd_options:
        if getattr(namespace, arg[2:].replace("-", "_"), None):
            logging.getlogger().error(
                f"option `{arg}` requires results storage; "
                "either set `RFM_ENABLE_RESULTS_STORAGE=1` or set "
                '`"storage": [{"enable": True}]` in the configuration file')
            return False
    return True


def _records(testcases: Iterable[dict], groups: list[str], columns: list[str]) -> list[dict]:
    """One record per performance value, as ReFrame's ``_create_dataframe`` makes them."""
    from reframe.frontend.reporting import _TCProxy
    wanted = list(dict.fromkeys(groups + columns))
    out = []
    for tc in map(_TCProxy, testcases):
        for pvar, reftuple in tc["perfvalues"].items():
            pval, pref, plower, pupper, punit, *presult = reftuple
            if pval is None:              # a performance test that failed sanity
                continue
            record = dict(_TCProxy(tc, include_only=wanted).data)
            record.update({
                "pvar": pvar.split(":")[-1], "pval": pval, "pref": pref,
                "plower": pref * (1 + plower) if plower is not None else -math.inf,
                "pupper": pref * (1 + pupper) if pupper is not None else math.inf,
                "punit": punit, "presult": presult[0] if presult else None,
            })
            out.append(record)
    return out


def _nearest_quantile(values: list, q: float):
    """polars' default quantile ('nearest'): the value at round(q * (n - 1))."""
    s = sorted(values)
    return s[int(round(q * (len(s) - 1)))]


#: polars' aggregations by ReFrame's names (std: the sample's, ddof=1, as polars)
_OPS: dict[str, Callable[[list], Any]] = {
    "min": min, "max": max, "median": statistics.median, "mean": statistics.fmean,
    "std": lambda v: statistics.stdev(v) if len(v) > 1 else None,
    "first": lambda v: v[0], "last": lambda v: v[-1], "sum": sum,
}


def _aggregate(values: list, op: str):
    values = [v for v in values if v is not None]
    if not values:
        return None
    if op in _OPS:
        return _OPS[op](values)
    perc = op[1:]                        # pNN (ReFrame's Q_REGEX)
    return _nearest_quantile(values, 0.0 if perc == "00" else int(perc.lstrip("0")) / 100.)


def _aggregate_rows(testcases, query, suffix: str) -> dict[tuple, dict]:
    """Group key -> the aggregated columns (named with ``suffix``), like ``_aggregate_data``."""
    from reframe.core.runtime import runtime
    agg = query.aggregation
    delim = "\n" if runtime().get_option("general/0/table_format") == "pretty" else "|"
    groups: dict[tuple, list[dict]] = {}
    for rec in _records(testcases, query.group_by, query.attributes):
        groups.setdefault(tuple(rec.get(g) for g in query.group_by), []).append(rec)
    out = {}
    for key in sorted(groups, key=lambda k: tuple((v is None, str(v)) for v in k)):
        recs, row = groups[key], {}
        for col, ops in agg._aggregations.items():
            for op in ops:
                row[f"{col} ({op}){suffix}"] = _aggregate([r.get(col) for r in recs], op)
        for col in query.aggregated_attributes:
            if col in agg._aggregations or col == "pval":
                continue
            if col == "psamples":
                row[col + suffix] = len(recs)
            else:
                # polars' unique().str.join: nulls left out
                row[col + suffix] = delim.join(sorted({str(r[col]) for r in recs
                                                       if r.get(col) is not None}))
        out[key] = row
    return out


def _pdiff(lhs, rhs) -> float | None:
    if lhs is None or rhs is None:
        return None
    if rhs == 0:
        return math.nan if lhs == 0 else math.copysign(math.inf, lhs)
    return round(100 * (lhs - rhs) / rhs, 2)


def compare_testcase_data(base_testcases, target_testcases, query) -> list:
    """ReFrame's ``compare_testcase_data`` without polars: the header, then one row per
    group the two sides share (an inner join; ``<no data>`` on the right when the
    previous sessions hold nothing), sorted by the group's columns."""
    lhs = _aggregate_rows(base_testcases, query, query.lhs_column_suffix)
    rhs = _aggregate_rows(target_testcases, query, query.rhs_column_suffix)
    pval = query.aggregation.column_names("pval")[0]
    cols = query.columns
    rows = []
    for key, left in lhs.items():
        if rhs and key not in rhs:
            continue
        row = dict(zip(query.group_by, key), **left)
        if rhs:
            row.update(rhs[key])
            row[query.diff_column] = _pdiff(row[pval + query.lhs_column_suffix],
                                            row[pval + query.rhs_column_suffix])
        else:                   # ReFrame keeps the base's own (empty) pdiff column
            row[query.diff_column] = ""
        rows.append(tuple(row.get(c, "<no data>") for c in cols))
    return [list(cols)] + rows
