"""The report pipeline: ReFrame run reports -> cases -> sections -> HTML/Markdown/CSV/PNG.

1. **Run reports** (ReFrame's JSON, one per session) are read by
   :mod:`placement.judgement.reading.run_report` into :class:`~placement.judgement.reading.run_report.Case` objects: one
   per test case and partition, with its parameters, performance values,
   references and every run's samples (:mod:`placement.judgement.reading.summary` summarises them).
   :mod:`.reference_cases` makes the same cases from stored baselines and the
   studies' seed tables.
2. **Sections** (:mod:`.sections`) group the cases into what a reader looks at:
   NPB tables and scaling, per-run boxplots, the NUMA copy matrix, memory-write
   bandwidth, the regression summary and the guards. Each section holds
   :mod:`.tables` (which also record every number shown in
   :class:`~.tables.Numbers`) and figures drawn by :mod:`.plots` (PNG, matplotlib).
   :mod:`.previous_run` adds ReFrame's ``--performance-compare`` against the
   previous stored run of the system; :mod:`.provenance` says where it all came from.
3. **Files**: :mod:`.html` (``index.html``), :mod:`.markdown` (``README.md``) and
   :mod:`.numbers_csv` (``numbers.csv``), written together by :mod:`.files`.

:mod:`.assembly` builds the sections of the run reports (or of the stored baselines) and
writes the folder; ``placement report`` (:mod:`placement.cli.report`) picks what it reads.

The front door of :mod:`placement.report`: other groups import from here only. It reads
:mod:`placement.judgement` and the engine's topology and is used by :mod:`placement.cli`.
"""

__all__ = ["assembly", "files", "provenance", "sections", "tables"]
