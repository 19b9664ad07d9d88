"""What a report is made of: sections of text, tables and figures, and the report itself.

Kept apart from :mod:`.sections` (which decides which sections a run gets) so that
the section builders elsewhere (:mod:`.verdicts`) and the writers (:mod:`.html`,
:mod:`.markdown`, :mod:`.files`) use the shapes without importing the assembly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tables import Numbers, Table


@dataclass
class Section:
    id: str
    title: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (file, caption)
    #: Markdown written by a person (the report folder's ``discussion.md``), shown as is.
    prose: str = ""
    #: the run's answer in one word (PASS, FAIL, INCOMPLETE, UNFINISHED): the banner's class
    status: str = ""
    #: the status banner's Markdown, shown first and set apart (:mod:`.lead`)
    banner: str = ""
    #: Markdown after the tables, before the figures (the lead's undecided line)
    after: str = ""
    #: items of this section drawn in no figure (each is still in its table and the CSV)
    undrawn: int = 0

    def figures_for(self, drawn: int, total: int, what: str,
                    first: str = "those that need a look first: failed, changed or "
                                 "undecided") -> None:
        """Say, after the tables, that figures were drawn for only ``drawn`` of ``total``
        items (nothing when all were), and which came first: a figure is never left out
        silently."""
        if drawn >= total:
            return
        self.undrawn += total - drawn
        line = (f"Figures for {drawn} of the {total} {what} ({first}); every value is in "
                "the tables above and in `numbers.csv`.")
        self.after = "\n\n".join(x for x in (self.after, line) if x)


@dataclass
class Report:
    title: str
    subtitle: str
    sections: list[Section] = field(default_factory=list)
    provenance: list[tuple[str, str]] = field(default_factory=list)
    numbers: Numbers = field(default_factory=Numbers)
