"""A report's ``numbers.csv``: every number the tables show, one row each.

The columns are :attr:`placement.report.tables.Numbers.COLUMNS` (section, table,
row, column, quantity, value, unit): for reading the numbers back into other
tools instead of scraping the HTML.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..util import atomic
from .tables import Numbers

CSV_NAME = "numbers.csv"


def write_csv(numbers: Numbers, path: Path) -> None:
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(Numbers.COLUMNS)
    value = Numbers.COLUMNS.index("value")
    w.writerows(r if not isinstance(r[value], float) else
                (*r[:value], f"{r[value]:.6g}", *r[value + 1:]) for r in numbers.rows)
    atomic.write_text(path, buf.getvalue())
