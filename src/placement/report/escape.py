"""Strings from results, baselines and system files made safe for the format they land in.

A case name, a failure reason or a parameter is data, never markup: a check named
``A|B`` must not split a Markdown table, ``**`` must not turn bold, ``[x](y)`` must not
become a link and ``<script>`` must not reach a browser as an element. HTML is
escaped with :func:`html.escape`; Markdown by :func:`markdown`, whose backslashes
CommonMark (and so markdown-it-py, which renders the HTML report's text) turns back
into the characters themselves.
"""

from __future__ import annotations

#: CommonMark's backslash-escapable characters that start or end inline markup, a table
#: cell, an entity or raw HTML, each mapped to itself behind a backslash (one
#: ``str.translate`` a cell: a report of 100k values escapes a million cells)
_MARKUP = str.maketrans({ch: "\\" + ch for ch in "\\`*_[]<>|&!#~"} | {"\n": " "})


def markdown(text: object) -> str:
    """``text`` as literal Markdown inline text (one line: newlines become blanks)."""
    return str(text).translate(_MARKUP)
