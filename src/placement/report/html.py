"""A report as ``index.html``: static, no JavaScript, figures inline.

Images are referenced by relative paths so the folder can be opened from
disk, copied, or browsed on a forge.
"""

from __future__ import annotations

import html
import re

from .document import Report
from .numbers_csv import CSV_NAME
from .tables import Table

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;white-space:nowrap}
th{background:#f0f0f0}td:first-child,td:nth-child(2){text-align:left}
tr.speedup td{background:#eef6ee;font-style:italic}tr.bad td{background:#fbe9e9}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
p.note{font-size:.85em;color:#555;margin-top:-.8em}
figure{display:inline-block;margin:.5em 1em .5em 0}figcaption{font-size:.85em;color:#555}
img{max-width:100%;border:1px solid #ddd}nav a{margin-right:1em}
"""


def _table_html(t: Table) -> str:
    out = [f'<table id="{html.escape(t.id)}"><caption>{html.escape(t.title)}</caption><thead><tr>']
    out += [f"<th>{html.escape(h)}</th>" for h in t.header]
    out.append("</tr></thead><tbody>")
    for cells, cls in zip(t.rows, t.row_classes):
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        out += [f"<td>{html.escape(c)}</td>" for c in cells]
        out.append("</tr>")
    out.append("</tbody></table>")
    if t.note:
        out.append(f'<p class="note">{html.escape(t.note)}</p>')
    return "".join(out)


_STRONG = re.compile(r"\*\*(.+?)\*\*")
_EM = re.compile(r"(?<![*\w])\*([^*\s][^*]*?)\*(?![*\w])")
_CODE = re.compile(r"`([^`]+)`")


def _prose_html(text: str) -> str:
    """A discussion's Markdown as HTML: paragraphs, **bold**, *italic* and `code`."""
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        h = html.escape(" ".join(para.split()))
        h = _STRONG.sub(r"<strong>\1</strong>", h)
        h = _CODE.sub(r"<code>\1</code>", _EM.sub(r"<em>\1</em>", h))
        out.append(f"<p>{h}</p>")
    return "\n".join(out)


def to_html(rep: Report) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(rep.title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(rep.title)}</h1><p>{html.escape(rep.subtitle)}</p>",
             "<nav>" + "".join(f'<a href="#{s.id}">{html.escape(s.title)}</a>'
                               for s in rep.sections) + '<a href="#provenance">Provenance</a>'
             f'<a href="{CSV_NAME}">numbers.csv</a></nav>']
    for s in rep.sections:
        parts.append(f'<section id="{s.id}"><h2>{html.escape(s.title)}</h2>')
        if s.text:
            parts.append(f"<p>{html.escape(s.text)}</p>")
        if s.prose:
            parts.append(_prose_html(s.prose))
        parts += [_table_html(t) for t in s.tables]
        for img, cap in s.images:
            parts.append(f'<figure><img src="{html.escape(img)}" alt="{html.escape(cap)}">'
                         f"<figcaption>{html.escape(cap)}</figcaption></figure>")
        parts.append("</section>")
    parts.append('<section id="provenance"><h2>Provenance</h2><table><tbody>')
    parts += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
              for k, v in rep.provenance]
    parts.append("</tbody></table></section></body></html>")
    return "\n".join(parts)
