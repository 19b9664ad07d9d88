"""A report as ``README.md``: the same sections and tables, figures as image links.

What a forge shows when the report folder is browsed; :mod:`.html` is the same
content for a browser. Every string from results, baselines and system files is
escaped (:mod:`.escape`): a section's text was escaped where it was written.
"""

from __future__ import annotations

from .document import Report
from .escape import markdown as md
from .numbers_csv import CSV_NAME
from .tables import Table


def _cells(t: Table, i: int, cells: list[str], cls: str) -> list[str]:
    """A row's cells escaped; speedup rows in italics; the last cell a link when it has one."""
    out = [f"*{md(c)}*" if cls == "speedup" and c else md(c) for c in cells]
    if t.link(i) and out:
        out[-1] = f"[{out[-1]}](<{t.link(i)}>)"
    return out


def _table_md(t: Table) -> str:
    lines = [f"**{md(t.title)}**", "", "| " + " | ".join(md(h) for h in t.header) + " |",
             "|" + "---|" * len(t.header)]
    for i, (cells, cls) in enumerate(zip(t.rows, t.row_classes)):
        lines.append("| " + " | ".join(_cells(t, i, cells, cls)) + " |")
    if t.note:
        lines += ["", f"_{md(t.note)}_"]
    return "\n".join(lines) + "\n"


def to_markdown(rep: Report) -> str:
    out = [f"# {md(rep.title)}", "", md(rep.subtitle), "",
           f"Open `index.html` for the same content with figures inline; every number is in "
           f"`{CSV_NAME}`.", ""]
    for s in rep.sections:
        out += [f"## {md(s.title)}", ""]
        for text in (s.banner, s.text, s.prose):
            if text:
                out += [text, ""]
        out += [_table_md(t) for t in s.tables]
        if s.after:
            out += [s.after, ""]
        out += [f"![{md(cap)}](<{img}>)" + "\n" for img, cap in s.images]
    out += ["## Provenance", "", "| | |", "|---|---|"]
    out += [f"| {md(k)} | {md(v)} |" for k, v in rep.provenance]
    return "\n".join(out) + "\n"
