"""A report as ``README.md``: the same sections and tables, figures as image links.

What a forge shows when the report folder is browsed; :mod:`.html` is the same
content for a browser.
"""

from __future__ import annotations

from .document import Report
from .numbers_csv import CSV_NAME
from .tables import Table


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _table_md(t: Table) -> str:
    lines = [f"**{t.title}**", "", "| " + " | ".join(_md_cell(h) for h in t.header) + " |",
             "|" + "---|" * len(t.header)]
    for cells, cls in zip(t.rows, t.row_classes):
        cells = [f"*{c}*" if cls == "speedup" and c else c for c in cells]
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    if t.note:
        lines += ["", f"_{t.note}_"]
    return "\n".join(lines) + "\n"


def to_markdown(rep: Report) -> str:
    out = [f"# {rep.title}", "", rep.subtitle, "",
           f"Open `index.html` for the same content with figures inline; every number is in "
           f"`{CSV_NAME}`.", ""]
    for s in rep.sections:
        out += [f"## {s.title}", ""]
        if s.text:
            out += [s.text, ""]
        if s.prose:
            out += [s.prose, ""]
        out += [_table_md(t) for t in s.tables]
        out += [f"![{cap}]({img})" + "\n" for img, cap in s.images]
    out += ["## Provenance", "", "| | |", "|---|---|"]
    out += [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in rep.provenance]
    return "\n".join(out) + "\n"
