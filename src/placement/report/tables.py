"""The report's tables, built from cases: the studies' layout, scaling, regressions, all values.

Each builder returns :class:`Table` objects (text cells for HTML/Markdown)
and appends every number it shows to a :class:`Numbers` collector, which
becomes the report's CSV. Builders return nothing when the run holds no
matching tests, so sections follow the data.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..judgement import Case, Summary, fmt, verdict, reading
from ..npb import output as npb_output

#: The placement the speedup row divides by: the OS's own (the studies' "Não").
NO_AFFINITY = "none"
#: NPB's timer resolution (s): a mean time at or below it is shown as such, never divided
RESOLUTION_S = npb_output.TIME_RESOLUTION_S
#: the cell of a mean time at or below the resolution, and of a ratio it would give
AT_RESOLUTION = f"≤ {RESOLUTION_S:g}"
NO_RATIO = "—"
RESOLUTION_NOTE = (f"{AT_RESOLUTION}: a mean time at or below NPB's timer resolution (it prints "
                   f"seconds to {RESOLUTION_S:g}); {NO_RATIO}: no ratio from such a time, "
                   "whose quotient would be the timer's rounding.")


def at_resolution(seconds: float) -> bool:
    """A time at or below NPB's timer resolution: it says the run was short, not how short
    (a run of 0.004 s prints ``0.00``, one of 0.006 s ``0.01``)."""
    return seconds <= RESOLUTION_S * (1 + 1e-9)      # a mean of 0.01 s runs may round above it


def time_text(s: Summary) -> str:
    """A time cell: ``mean ± CI``, or :data:`AT_RESOLUTION`."""
    return AT_RESOLUTION if at_resolution(s.mean) else s.text(decimals=2)


@dataclass
class Table:
    """A rendered table: text cells, and a CSS class per row (e.g. ``speedup``, ``bad``)."""

    id: str
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    row_classes: list[str] = field(default_factory=list)
    note: str = ""
    #: per row, a file of the report folder its last cell links to ("" for none)
    links: list[str] = field(default_factory=list)

    def add(self, cells: list[str], cls: str = "", link: str = "") -> None:
        self.rows.append(cells)
        self.row_classes.append(cls)
        self.links.append(link)

    def link(self, i: int) -> str:
        return self.links[i] if i < len(self.links) else ""


@dataclass
class Numbers:
    """Every number shown, in long form: the CSV next to the report.

    A row is a tuple in :attr:`COLUMNS`' order (a report of 100k values holds a million
    rows: a dict each would cost several times the memory)."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    COLUMNS = ("section", "table", "row", "column", "quantity", "value", "unit")

    def add(self, section: str, table: str, row: str, column: str, quantity: str,
            value: float | None, unit: str | None = "") -> None:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return
        self.rows.append((section, table, row, column, quantity, value, unit or ""))

    def add_summary(self, section: str, table: str, row: str, column: str, quantity: str,
                    s: Summary, unit: str | None = "") -> None:
        self.add(section, table, row, column, quantity, s.mean, unit)
        if s.sd is not None:
            self.add(section, table, row, column, f"{quantity} sd", s.sd, unit)
        if s.half_width is not None:
            self.add(section, table, row, column, f"{quantity} ci95 half-width",
                     s.half_width, unit)
        if s.n > 1:
            self.add(section, table, row, column, f"{quantity} runs", s.n)


# -- the studies' layout ------------------------------------------------------------------

def npb_cases(cases: Iterable[Case]) -> list[Case]:
    """NPB cases: they carry benchmark, class and thread count, and a ``time`` perfvar."""
    return [c for c in cases
            if {"benchmark", "npb_class", "num_threads"} <= c.params.keys() and "time" in c.perf]


def placement_label(c: Case, with_policy: bool) -> str:
    aff = str(c.params.get("affinity", NO_AFFINITY))
    return f"{aff} / {c.params.get('policy')}" if with_policy else aff


def _order(labels: Iterable[str]) -> list[str]:
    return sorted(set(labels), key=lambda s: (not s.startswith(NO_AFFINITY), s))


@dataclass
class NpbGroup:
    """The cases of one NPB class on one system:partition+environment."""

    sysenv: str
    npb_class: str
    times: dict[tuple[str, str, int], Summary]  # (benchmark, placement, threads) -> time
    threads: list[int]
    benchmarks: list[str]
    placements: list[str]

    @property
    def name(self) -> str:
        return f"class {self.npb_class} — {self.sysenv}"

    def speedups(self) -> dict[tuple[str, str, int], Summary | None]:
        """time without affinity / time with it (the papers' "Desempenho"), per placement;
        None where either time is at the timer's resolution (no speedup from it)."""
        out: dict[tuple[str, str, int], Summary | None] = {}
        for (b, p, t), s in self.times.items():
            base = _baseline_label(p)
            if p == base:
                continue
            ref = self.times.get((b, base, t))
            if ref is None:
                continue
            out[(b, p, t)] = (None if at_resolution(ref.mean) or at_resolution(s.mean)
                              else reading.summary.ratio(ref, s))
        return out


def _baseline_label(placement: str) -> str:
    return NO_AFFINITY + (placement[placement.index(" / "):] if " / " in placement else "")


def npb_groups(cases: Iterable[Case]) -> list[NpbGroup]:
    by: dict[tuple[str, str], list[Case]] = {}
    for c in npb_cases(cases):
        by.setdefault((c.where, str(c.params["npb_class"])), []).append(c)
    groups = []
    for (sysenv, klass), cs in sorted(by.items()):
        with_policy = len({str(c.params.get("policy")) for c in cs}) > 1
        times = {}
        for c in cs:
            s = c.summary("time")
            if s is not None:
                times[(str(c.params["benchmark"]), placement_label(c, with_policy),
                       int(c.params["num_threads"]))] = s
        groups.append(NpbGroup(sysenv, klass, times,
                               sorted({k[2] for k in times}), sorted({k[0] for k in times}),
                               _order(k[1] for k in times)))
    return groups


def npb_tables(groups: list[NpbGroup], numbers: Numbers) -> list[Table]:
    """Per class: rows benchmark × placement then the speedup rows; columns: threads."""
    tables = []
    for g in groups:
        tid = f"npb-{g.npb_class}-{slug(g.sysenv)}"
        t = Table(tid, f"NPB {g.name}: mean time (s) ± 95% CI",
                  ["benchmark", "placement"] + [str(n) for n in g.threads],
                  note="speedup = time without affinity / time with it "
                       "(the studies' “Desempenho” row); > 1: the placement helps.")
        sp = g.speedups()
        if any(at_resolution(s.mean) for s in g.times.values()):
            t.note += " " + RESOLUTION_NOTE
        for b in g.benchmarks:
            for p in g.placements:
                if not any((b, p, n) in g.times for n in g.threads):
                    continue
                cells = [b, p]
                for n in g.threads:
                    s = g.times.get((b, p, n))
                    cells.append(time_text(s) if s else "")
                    if s:
                        numbers.add_summary("npb", tid, f"{b} {p}", str(n), "time", s, "s")
                t.add(cells)
            for p in g.placements:
                if not any((b, p, n) in sp for n in g.threads):
                    continue
                cells = ["", f"speedup {_baseline_label(p)} → {p}"]
                for n in g.threads:
                    s = sp.get((b, p, n))
                    cells.append(s.text(decimals=2) if s else NO_RATIO if (b, p, n) in sp else "")
                    if s:
                        numbers.add_summary("npb", tid, f"{b} speedup {p}", str(n), "speedup", s)
                t.add(cells, "speedup")
        tables.append(t)
    return tables


def scaling(g: NpbGroup) -> dict[tuple[str, str], list[tuple[int, float, float]]]:
    """(benchmark, placement) -> [(threads, speedup T1/Tp, efficiency speedup/p)].

    T1 is the same placement's one-thread time (else the fastest one-thread time). A time
    at the timer's resolution gives no point (:func:`at_resolution`).
    """
    out = {}
    for b in g.benchmarks:
        ones = [s.mean for (bb, _, n), s in g.times.items() if bb == b and n == 1]
        for p in g.placements:
            t1 = g.times.get((b, p, 1))
            base = t1.mean if t1 else (min(ones) if ones else None)
            if base is None or at_resolution(base):
                continue
            pts = [(n, base / g.times[(b, p, n)].mean, base / g.times[(b, p, n)].mean / n)
                   for n in g.threads
                   if (b, p, n) in g.times and not at_resolution(g.times[(b, p, n)].mean)]
            if pts:
                out[(b, p)] = pts
    return out


def scaling_table(g: NpbGroup, points: dict[tuple[str, str], list[tuple[int, float, float]]],
                  numbers: Numbers) -> Table:
    """Speedup and efficiency rows of ``points`` (:func:`scaling` of ``g``)."""
    tid = f"scaling-{g.npb_class}-{slug(g.sysenv)}"
    t = Table(tid, f"NPB {g.name}: speedup T(1)/T(p) and parallel efficiency speedup/p",
              ["benchmark", "placement", "quantity"] + [str(n) for n in g.threads])
    for (b, p), pts in points.items():
        by_n = {n: (s, e) for n, s, e in pts}
        # a time the run has but :func:`scaling` left out sits at the timer's resolution
        gaps = {n: NO_RATIO if (b, p, n) in g.times else "" for n in g.threads}
        t.add([b, p, "speedup"] + [fmt(by_n[n][0]) if n in by_n else gaps[n]
                                   for n in g.threads])
        t.add([b, p, "efficiency"] + [fmt(by_n[n][1], 2) if n in by_n else gaps[n]
                                      for n in g.threads])
        if any(n not in by_n and gaps[n] for n in g.threads):
            t.note = RESOLUTION_NOTE
        for n, s, e in pts:
            numbers.add("scaling", tid, f"{b} {p}", str(n), "speedup", s)
            numbers.add("scaling", tid, f"{b} {p}", str(n), "efficiency", e)
    return t


# -- regressions ----------------------------------------------------------------------------

def regression_table(cases: Iterable[Case], numbers: Numbers) -> Table | None:
    """Each perfvar with a baseline reference: deviation, threshold verdict, significance.

    Guards (:mod:`placement.judgement.verdict.guards`) have fixed limits, not baselines: :func:`guards_table`.
    """
    t = Table("regressions", "Against the stored baseline (config/baselines/<system>.yaml)",
              ["test", "case", "system", "perfvar", "measured (mean ± CI)", "baseline",
               "difference", "threshold", "outside threshold", "significant (one-sample t, 95%)"],
              note="outside threshold: ReFrame's verdict (value outside "
                   "[ref·(1+lower), ref·(1+upper)]). significant: the baseline value lies "
                   "outside the 95% CI of the run's mean (one-sample t-test; p-value shown "
                   "when scipy is installed); single runs cannot be tested.")
    for c in sorted(cases, key=lambda c: (c.test, c.label())):
        for var in c.primary_vars():
            pv = c.perf[var]
            if var in verdict.guards.GUARD_VARS or pv.ref is None or pv.ref == 0 or pv.value is None:
                continue
            s = c.summary(var) or Summary(pv.value)
            diff = (s.mean - pv.ref) / abs(pv.ref)
            outside = pv.result in ("fail", "xpass") if pv.result else (
                diff < (pv.lower or -math.inf) or diff > (pv.upper or math.inf))
            v = reading.summary.against_value(s, pv.ref)
            sig = ("n/a (1 run)" if v.significant is None else
                   ("yes" if v.significant else "no") +
                   (f" (p={v.p_value:.3g})" if v.p_value is not None else ""))
            thr = f"{_pct(pv.lower)} / {_pct(pv.upper)}"
            row = f"{c.test} {c.label()}"
            t.add([c.test, c.label(), c.sysenv, var, f"{s.text()} {pv.unit or ''}",
                   f"{fmt(pv.ref)} {pv.unit or ''}", f"{diff * 100:+.1f}%", thr,
                   "yes" if outside else "no", sig], "bad" if outside else "")
            numbers.add_summary("regression", "regressions", row, var, "measured", s, pv.unit)
            numbers.add("regression", "regressions", row, var, "baseline", pv.ref, pv.unit)
            numbers.add("regression", "regressions", row, var, "difference %", diff * 100, "%")
            if v.p_value is not None:
                numbers.add("regression", "regressions", row, var, "p-value", v.p_value)
    return t if t.rows else None


def guards_table(cases: list[Case], numbers: Numbers) -> tuple[Table | None, str]:
    """The guards that tripped, and a sentence saying how many cases were guarded."""
    judged = verdict.guards.guarded(cases)
    if not judged:
        return None, ""
    tripped = verdict.guards.trips(judged)
    n_cases = len({id(t.case) for t in tripped})
    text = (f"{len(judged)} case(s) carried guards (fixed limits every system shares, not "
            f"baselines); {f'{n_cases} tripped at least one' if tripped else 'none tripped'}.")
    if not tripped:
        return None, text
    t = Table("guards", "Guards that tripped",
              ["test", "case", "system", "guard", "value", "limit", "meaning"],
              note="A tripped guard fails the case: its numbers are not a measurement to "
                   "compare (unstable or stopped runs) or show a collapse.")
    for tr in tripped:
        pv = tr.value
        t.add([tr.case.test, tr.case.label(), tr.case.sysenv, tr.var,
               f"{fmt(pv.value)} {pv.unit or ''}", f"{fmt(pv.ref)} {pv.unit or ''}",
               tr.meaning], "bad")
        numbers.add("guards", "guards", f"{tr.case.test} {tr.case.label()}", tr.var, "value",
                    pv.value, pv.unit)
        numbers.add("guards", "guards", f"{tr.case.test} {tr.case.label()}", tr.var, "limit",
                    pv.ref, pv.unit)
    return t, text


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:+.0f}%"


# -- every value ------------------------------------------------------------------------

def all_values_table(cases: Iterable[Case], numbers: Numbers) -> Table | None:
    t = Table("all-values", "Every performance value of the run",
              ["test", "case", "system", "perfvar", "value (mean ± CI)", "unit", "runs", "result"])
    labelled = sorted((((c.test, c.sysenv, c.label()), c) for c in cases),  # a label once
                      key=lambda it: it[0])
    for (_, _, label), c in labelled:
        for var in c.primary_vars():
            s = c.summary(var)
            if s is None:
                continue
            t.add([c.test, label, c.sysenv, var, s.text(), c.perf[var].unit or "",
                   str(s.n), c.result], "" if c.result == "pass" else "bad")
            numbers.add_summary("values", "all-values", f"{c.test} {label} {c.sysenv}",
                                var, "value", s, c.perf[var].unit)
    return t if t.rows else None


#: the longest slug: a file name joins up to three (a figure of a node of a partition of a
#: system) and must stay under the file system's 255 bytes
SLUG_MAX = 60


def slug(s: str) -> str:
    """``s`` as a file name's part: letters and digits, the rest ``-``; a long one cut, with
    a digest of the whole, so two long names stay apart (a 200-character node name)."""
    out = "".join(ch if ch.isalnum() else "-" for ch in s).strip("-").lower()
    if len(out) <= SLUG_MAX:
        return out
    digest = hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{out[:SLUG_MAX - 11].rstrip('-')}-{digest}"
