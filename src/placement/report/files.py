"""Writing a report folder's text files: ``index.html``, ``README.md``, ``numbers.csv``.

Each is written atomically (temp file + rename); the figures are already in the
folder, drawn while the sections were built.
"""

from __future__ import annotations

from pathlib import Path

from ..util import atomic
from .document import Report
from .html import to_html
from .markdown import to_markdown
from .numbers_csv import CSV_NAME, write_csv


def write(rep: Report, out: Path) -> None:
    """Write the three text files (figures are already in ``out``)."""
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out / "index.html", to_html(rep))
    atomic.write_text(out / "README.md", to_markdown(rep))
    write_csv(rep.numbers, out / CSV_NAME)
