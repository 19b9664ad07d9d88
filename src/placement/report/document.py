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


@dataclass
class Report:
    title: str
    subtitle: str
    sections: list[Section] = field(default_factory=list)
    provenance: list[tuple[str, str]] = field(default_factory=list)
    numbers: Numbers = field(default_factory=Numbers)
