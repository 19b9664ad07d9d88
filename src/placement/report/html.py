"""A report as ``index.html``: static, no JavaScript, figures inline.

A section's text is Markdown (:mod:`.markdown` writes the same text to ``README.md``),
rendered by markdown-it-py with raw HTML off, so a string from a result can never
become an element; tables are written from their cells, each escaped. Images are
referenced by relative paths so the folder can be opened from disk, copied, or
browsed on a forge.
"""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

from .document import Report
from .numbers_csv import CSV_NAME
from .tables import Table, slug

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;white-space:nowrap}
th{background:#f0f0f0}td:first-child,td:nth-child(2){text-align:left}
tr.speedup td{background:#eef6ee;font-style:italic}tr.bad td{background:#fbe9e9}tr.incomplete td{background:#fdf3dc}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
p.note{font-size:.85em;color:#555;margin-top:-.8em}
figure{display:inline-block;margin:.5em 1em .5em 0}figcaption{font-size:.85em;color:#555}
img{max-width:100%;border:1px solid #ddd}nav a{margin-right:1em}
.status{font-size:1.25em;padding:.5em .8em;margin:.8em 0;border-radius:4px;border:2px solid}
.status p{margin:0}.status-pass{background:#e6f4e6;border-color:#2e7d32}
.status-fail,.status-unfinished{background:#fbe3e3;border-color:#c62828}
.status-incomplete,.status-nothing-ran{background:#fff4dc;border-color:#b7791f}
"""


def _table_html(t: Table) -> str:
    out = [f'<table id="{html.escape(t.id)}"><caption>{html.escape(t.title)}</caption><thead><tr>']
    out += [f"<th>{html.escape(h)}</th>" for h in t.header]
    out.append("</tr></thead><tbody>")
    for i, (cells, cls) in enumerate(zip(t.rows, t.row_classes)):
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        out += [f"<td>{html.escape(c)}</td>" for c in cells[:-1]]
        link = t.link(i)
        last = html.escape(cells[-1]) if cells else ""
        out.append(f'<td><a href="#{html.escape(_figure_id(link))}">{last}</a></td>' if link
                   else f"<td>{last}</td>" if cells else "")
        out.append("</tr>")
    out.append("</tbody></table>")
    if t.note:
        out.append(f'<p class="note">{html.escape(t.note)}</p>')
    return "".join(out)


#: CommonMark with tables; raw HTML in the text is shown as text, never run
_MD = MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_html(text: str) -> str:
    """Markdown (a section's text, a discussion) as HTML, by markdown-it-py."""
    return _MD.render(text.strip()) if text.strip() else ""


def _banner_html(status: str, banner: str) -> str:
    """The run's answer, set apart and coloured by its word."""
    cls = slug(status.lower()) or "none"
    return f'<div id="status" class="status status-{cls}">{markdown_html(banner)}</div>'


def _figure_id(img: str) -> str:
    """The id of a figure's element: its file's name without ``.png``."""
    return "fig-" + slug(img.rsplit(".", 1)[0])


def to_html(rep: Report) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(rep.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(rep.title)}</h1><p>{html.escape(rep.subtitle)}</p>",
             "<nav>" + "".join(f'<a href="#{s.id}">{html.escape(s.title)}</a>'
                               for s in rep.sections) + '<a href="#provenance">Provenance</a>'
             f'<a href="{CSV_NAME}">numbers.csv</a></nav>']
    for s in rep.sections:
        parts.append(f'<section id="{s.id}"><h2>{html.escape(s.title)}</h2>')
        if s.banner:
            parts.append(_banner_html(s.status, s.banner))
        parts += [markdown_html(s.text), markdown_html(s.prose)]
        parts += [_table_html(t) for t in s.tables]
        parts.append(markdown_html(s.after))
        for img, cap in s.images:
            parts.append(f'<figure id="{html.escape(_figure_id(img))}">'
                         f'<img src="{html.escape(img)}" alt="{html.escape(cap)}">'
                         f"<figcaption>{html.escape(cap)}</figcaption></figure>")
        parts.append("</section>")
    parts.append('<section id="provenance"><h2>Provenance</h2><table><tbody>')
    parts += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
              for k, v in rep.provenance]
    parts.append("</tbody></table></section></body></html>")
    return "\n".join(parts)
