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
    w = csv.DictWriter(buf, fieldnames=Numbers.COLUMNS)
    w.writeheader()
    for r in numbers.rows:
        w.writerow({**r, "value": f"{r['value']:.6g}" if isinstance(r["value"], float)
                    else r["value"]})
    atomic.write_text(path, buf.getvalue())
