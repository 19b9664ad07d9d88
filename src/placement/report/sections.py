"""Assembling a report from cases: which sections exist follows which tests ran.

A :class:`~.document.Report` is a list of :class:`~.document.Section` (text, tables,
figures) plus provenance and the numbers CSV; :mod:`.files` writes it out.
"""

from __future__ import annotations

import math
import re
from functools import partial
from collections.abc import Container, Iterable
from typing import Any
from pathlib import Path

from ..judgement import Case, Summary, fmt, number, two_modes
from ..util import size_bytes
from . import plots
from .document import Report, Section
from .page_sharing import page_sharing_section
from .partition_page import partition_sections
from .tables import (Numbers, Table, all_values_table, guards_table, npb_groups, npb_tables,
                     regression_table, scaling, scaling_table, slug)


def npb_sections(cases: list[Case], out: Path, numbers: Numbers, figures: bool = True
                 ) -> list[Section]:
    """The studies' tables per class, then speedup/efficiency curves."""
    groups = npb_groups(cases)
    if not groups:
        return []
    tables = Section("npb-tables", "NPB: the studies' tables",
                     "Rows: benchmark × placement (affinity map, and memory policy when "
                     "several ran); columns: threads. Cells: mean time of the repeats with "
                     "its 95% confidence interval (Student t). Speedup rows divide the time "
                     "without affinity by the time with it, as the studies' “Desempenho” row.",
                     npb_tables(groups, numbers))
    scal = Section("npb-scaling", "NPB: speedup and parallel efficiency",
                   "Speedup T(1)/T(p) against the same placement's one-thread time; "
                   "efficiency = speedup / p (1 is perfect scaling; the dotted line is ideal).")
    for g in groups:
        sc = scaling(g)
        t = scaling_table(g, sc, numbers)
        if t.rows:
            scal.tables.append(t)
        if not (figures and plots.available()):
            continue
        for b in g.benchmarks:
            sp = {p: [(n, s, None) for n, s, _ in pts] for (bb, p), pts in sc.items() if bb == b}
            ef = {p: [(n, e, None) for n, _, e in pts] for (bb, p), pts in sc.items() if bb == b}
            if not sp:
                continue
            name = f"scaling-{slug(g.npb_class)}-{slug(b)}-{slug(g.sysenv)}.png"
            plots.lines(out, name, [("speedup", "speedup T(1)/T(p)", sp),
                                    ("efficiency", "parallel efficiency", ef)],
                        "threads", f"NPB {b} class {g.npb_class} ({g.sysenv})",
                        logx=True, ideal=("linear", "one"))
            scal.images.append((name, f"{b} class {g.npb_class}: speedup and efficiency "
                                      "vs threads, one line per placement"))
    if not scal.tables:
        scal.text = ("No speedup here: it needs each benchmark's one-thread time, and no case "
                     "of these runs had one thread (the acceptance family's threads=1 cases).")
    return [tables, scal]


#: Parameters that get a figure of their own (one NPB benchmark and class per figure).
_FIGURE_PARAMS = ("benchmark", "npb_class")


#: the most boxes one boxplot draws (a partition's case has one per node); the rest are
#: in ``numbers.csv``
MAX_BOXES = 60


def boxplot_section(cases: list[Case], out: Path, numbers: Numbers,
                    look: Container[tuple] = frozenset()) -> Section | None:
    """Per-run values of every test that has repeats: one figure per test, perfvar and,
    for NPB, benchmark and class; one box per remaining case (threads, placement).

    Where a case has per-run ``time``, only ``time`` is drawn (its Mop/s and wall time
    are other views of the same runs); every per-run value still goes to the CSV.
    ``look``: the cases (:attr:`Case.key`) drawn first when not every figure or box is.
    """
    by: dict[tuple, list[Case]] = {}
    for c in cases:
        vars_ = [v for v, vals in c.samples.items() if len(vals) >= 2]
        for var in vars_:
            split = tuple(str(c.params[k]) for k in _FIGURE_PARAMS if k in c.params)
            by.setdefault((c.test, var, c.sysenv, split), []).append(c)
    if not by:
        return None
    sec = Section("runs", "Per-run values (boxplots)",
                  "Each box: the runs of one case (median, quartiles, whiskers at 1.5 IQR, "
                  "outliers as points). The studies showed matmul this way (50 runs per cell).")
    drawable = [k for k in sorted(by) if "time" not in by[k][0].samples or k[1] == "time"]
    drawn = plots.chosen(drawable, lambda k: any(c.key in look for c in by[k]))
    for key, group in sorted(by.items()):
        test, var, sysenv, split = key
        unit = next(((c.perf[var].unit or "") for c in group if var in c.perf), "")
        const = _constant_params(group, test) | set(_FIGURE_PARAMS)
        for c in group:
            const |= _thread_aliases(c.params)
        boxes, modes, keys = {}, [], {}
        for c in group:
            label, m = c.label(skip=const), two_modes(c.samples[var])
            if m:           # flagged in the figure and the caption, not averaged away
                label += " [two modes]"
                modes.append(f"{label}: {m.text()}")
            boxes[label] = c.samples[var]
            keys[label] = c.key
        what = " ".join([test, *split])
        for label, vals in boxes.items():
            for i, v in enumerate(vals):
                numbers.add("runs", f"{what}.{var}", label, str(i), var, v, unit)
        if not plots.available() or key not in drawn:
            continue
        shown = plots.chosen(list(boxes), lambda b: keys[b] in look, MAX_BOXES)
        name = f"runs-{slug(what)}-{slug(var)}-{slug(sysenv)}.png"
        ylabel = f"{var} ({unit})" if unit else var
        plots.boxplot(out, name, {b: v for b, v in boxes.items() if b in shown}, ylabel,
                      f"{what} ({sysenv}): {var} per run")
        sec.images.append((name, f"{what}: {var} of each run, per case"
                           + (f" ({len(shown)} of {len(boxes)} cases)"
                              if len(shown) < len(boxes) else "")
                           + (f"; {'; '.join(modes)}" if modes else "")))
    if plots.available():
        sec.figures_for(len(drawn), len(drawable), "tests and values with repeats")
    return sec


def _constants_by_test(cases: Iterable[Case]) -> dict[str, set[str]]:
    """Per test, the parameters every one of its cases gives the same value (left out of
    a series' or a box's label): one pass over the cases."""
    vals: dict[str, dict[str, set[str]]] = {}
    for c in cases:
        test = vals.setdefault(c.test, {})
        for k, v in c.params.items():
            test.setdefault(k, set()).add(str(v))
    return {t: {k for k, v in ps.items() if len(v) == 1} for t, ps in vals.items()}


def _constant_params(cases: list[Case], test: str,
                     by_test: dict[str, set[str]] | None = None) -> set[str]:
    """The parameters of ``test`` that all of ``cases`` share (``by_test``: already counted
    by :func:`_constants_by_test`, so a caller looping over cases stays linear)."""
    return (by_test if by_test is not None else _constants_by_test(cases)).get(test, set())


#: A perfvar per (source, destination) node pair: NumaCopyCheck's ``gbps_<i>_<j>``
#: (:func:`placement.testlib.kernels.pair_var`), and the spellings of other copy tests.
PAIR_VAR = re.compile(r"^(?:copy_|bw_|gbps_)?n?(?P<src>\d+)(?:_to_|_|->)n?(?P<dst>\d+)$")
_BW_VARS = ("gbps", "bw", "bandwidth", "copy_bw", "copy_gbps")


def numa_section(cases: list[Case], out: Path, numbers: Numbers,
                 look: Container[tuple] = frozenset()) -> Section | None:
    """The NUMA copy matrix: cases with src_node/dst_node, or perfvars named per pair.
    Every matrix is a table; at most :data:`plots.MAX_ITEM_FIGURES` are drawn, those of the
    cases in ``look`` first: a partition has a matrix per node, and a heatmap each would
    make the report's time grow with the nodes at half a second a node."""
    mats: dict[tuple[str, str], dict[tuple[int, int], Summary]] = {}
    #: the cases each matrix is made of, to draw those that need a look first
    keys: dict[tuple[str, str], set[tuple]] = {}

    def add(c: Case, cell: tuple[int, int], s: Summary | None) -> None:
        if s:
            mats.setdefault((c.test, c.where), {})[cell] = s
            keys.setdefault((c.test, c.where), set()).add(c.key)

    for c in cases:
        if {"src_node", "dst_node"} <= c.params.keys():
            var = next((v for v in _BW_VARS if v in c.perf), None)
            if var is not None:
                add(c, (int(c.params["src_node"]), int(c.params["dst_node"])), c.summary(var))
            continue
        for var in c.primary_vars():
            m = PAIR_VAR.match(var)
            if m and (c.perf[var].unit or "").lower().startswith(("gb", "mb")):
                add(c, (int(m.group("src")), int(m.group("dst"))), c.summary(var))
    if not mats:
        return None
    sec = Section("numa", "NUMA copy matrix",
                  "Copy bandwidth (GB/s) from a block on the source node to one on the "
                  "destination node, the thread running on the source node. The diagonal is "
                  "local copies; off-diagonal cells show the cost of remote memory.")
    drawn = plots.chosen(sorted(mats), lambda k: any(x in look for x in keys[k])) \
        if plots.available() else set()
    for (test, sysenv), cells in sorted(mats.items()):
        srcs = sorted({k[0] for k in cells})
        dsts = sorted({k[1] for k in cells})
        tid = f"numa-{slug(test)}-{slug(sysenv)}"
        t = Table(tid, f"{test} ({sysenv}): GB/s, rows source node, columns destination",
                  ["source \\ destination"] + [str(d) for d in dsts])
        for s_ in srcs:
            t.add([str(s_)] + [cells[(s_, d)].text() if (s_, d) in cells else "" for d in dsts])
            for d in dsts:
                if (s_, d) in cells:
                    numbers.add_summary("numa", tid, str(s_), str(d), "bandwidth", cells[(s_, d)], "GB/s")
        sec.tables.append(t)
        if (test, sysenv) in drawn:
            name = f"numa-{slug(test)}-{slug(sysenv)}.png"
            plots.heatmap(out, name, [[cells[(s_, d)].mean if (s_, d) in cells else None
                                       for d in dsts] for s_ in srcs],
                          [str(s_) for s_ in srcs], [str(d) for d in dsts], "GB/s",
                          f"{test} ({sysenv})")
            sec.images.append((name, "copy bandwidth per (source, destination) node pair"))
    if plots.available():
        sec.figures_for(len(drawn), len(mats), "copy matrices")
    return sec


_BLOCK_PARAMS = ("block_size", "block_bytes", "block_kb", "block")
#: A perfvar per block size: MemWriteSingleCheck's ``gbps_<block>``
#: (:func:`placement.testlib.kernels.block_var`).
BLOCK_VAR = re.compile(r"^(?:gbps|bw|bandwidth)_(?P<size>\d+(?:\.\d+)?[KMG]?)$")
_MODE_PARAMS = ("affinity", "binder", "policy", "store")


def block_bytes(text: str) -> float:
    """``512K``/``16M``/``1G``/``4096`` as bytes (a plot coordinate)."""
    return float(size_bytes(text))


#: a bandwidth series: (axis, test, context) -> mode -> [(x, y, ci half-width)]
_BwSeries = dict[tuple[str, str, str], dict[str, list]]


def bandwidth_section(cases: list[Case], out: Path, numbers: Numbers,
                      look: Container[tuple] = frozenset()) -> Section | None:
    """Memory-write bandwidth vs block size and vs threads, one line per binding mode.

    Block sizes come from a block parameter or from perfvars ``gbps_<size>``
    (one run sweeping sizes); threads from the ``num_threads`` parameter. ``look``: the
    cases (:attr:`Case.key`) whose series are drawn first when not all of them are.
    """
    bw = [c for c in cases if "write" in c.test.lower() and
          any((pv.unit or "").lower().startswith("gb") for pv in c.perf.values())]
    if not bw:
        return None
    sec = Section("memwrite", "Memory-write bandwidth",
                  "Write bandwidth (GB/s, mean ± 95% CI where runs repeat) as the block size "
                  "grows (caches, then memory) and as threads are added, one line per binding "
                  "mode (affinity map or memory policy).")
    series, members = _bandwidth_series(bw)
    labels = {"block": "block size (bytes)", "num_threads": "threads"}
    lines = [k for k in sorted(series) if sum(len(v) for v in series[k].values()) >= 2]
    drawn = plots.chosen(lines, lambda k: bool(members[k] & look)) if plots.available() \
        else set()
    for key in lines:
        axis, test, ctx = key
        ser = series[key]
        tid = f"bw-{axis}-{slug(test)}-{slug(ctx)}"
        xs = sorted({p[0] for v in ser.values() for p in v})
        t = Table(tid, f"{test} {ctx}: GB/s vs {labels[axis]}",
                  ["mode"] + [_size(x) if axis == "block" else f"{x:g}" for x in xs])
        for mode, pts in sorted(ser.items()):
            by_x = {p[0]: p for p in pts}
            t.add([mode] + [Summary(by_x[x][1]).text() if x in by_x else "" for x in xs])
            for x, y, hw in pts:
                numbers.add("memwrite", tid, mode, fmt(x), "bandwidth", y, "GB/s")
                numbers.add("memwrite", tid, mode, fmt(x), "bandwidth ci95 half-width", hw, "GB/s")
        sec.tables.append(t)
        if key in drawn:
            name = f"{tid}.png"
            plots.lines(out, name, [("GB/s", f"vs {labels[axis]}", ser)], labels[axis],
                        f"{test} {ctx}", logx=True)
            sec.images.append((name, f"write bandwidth vs {labels[axis]}, per binding mode"))
    if not sec.tables:
        sec.text += (" Only single points were measured (one block size, one thread count): "
                     "see the table of all values.")
    elif plots.available():
        sec.figures_for(len(drawn), len(lines), "bandwidth series")
    return sec


def _bandwidth_series(bw: list[Case]) -> tuple[_BwSeries, dict[tuple, set[tuple]]]:
    """Each case's bandwidth points in their series (a sweep inside one run, or one point
    per block or thread parameter), and the cases (:attr:`Case.key`) in each series."""
    series: _BwSeries = {}
    members: dict[tuple, set[tuple]] = {}
    consts = _constants_by_test(bw)

    def put(key: tuple[str, str, str], c: Case, mode: str, point: tuple) -> None:
        series.setdefault(key, {}).setdefault(mode, []).append(point)
        members.setdefault(key, set()).add(c.key)

    for c in bw:
        const = consts[c.test]
        mode = " ".join(f"{k}={c.params[k]}" for k in _MODE_PARAMS if k in c.params) or "default"
        gb = [v for v in c.primary_vars() if (c.perf[v].unit or "").lower().startswith("gb")]
        for v in gb:  # a sweep inside one run
            m = BLOCK_VAR.match(v)
            s = c.summary(v)
            if m and s:
                put(("block", c.test, _context(c, set(_MODE_PARAMS) | const)), c, mode,
                    (block_bytes(m.group("size")), s.mean, s.half_width))
        plain = [v for v in gb if not BLOCK_VAR.match(v)]
        s = c.summary(plain[0]) if plain else None
        if s is None:
            continue
        for axis, keys in (("block", _BLOCK_PARAMS), ("num_threads", ("num_threads",))):
            xkey = next((k for k in keys if k in c.params), None)
            if xkey is None:
                continue
            axis_keys = {xkey} | (_thread_aliases(c.params) if axis == "num_threads" else set())
            x = block_bytes(str(c.params[xkey])) if axis == "block" else number(c.params[xkey],
                                                                             default=math.nan)
            put((axis, c.test, _context(c, set(_MODE_PARAMS) | const | axis_keys)), c, mode,
                (x, s.mean, s.half_width))
    return series, members


def _context(c: Case, skip: set[str]) -> str:
    """What a series is about beyond its axis and mode: the system, and any other parameter."""
    return f"{c.sysenv} {c.label(skip, default='')}".strip()


def _thread_aliases(params: dict) -> set[str]:
    """``threads`` (full, 2xfull, a number) names the same count as ``num_threads``."""
    return {"threads"} if "num_threads" in params else set()


def _size(x: float) -> str:
    for unit, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if x >= m and x % m == 0:
            return f"{int(x // m)}{unit}"
    return fmt(x)


def _judged(cases: list[Case], answer: Any) -> tuple[list, Section | None]:
    """The values judged against their baselines, or none and a section saying why, when
    the run's verdict record is no PASS and already answers for the run (its line names the
    cause: a baseline the summary could not judge either). Without one, the error stands."""
    from .verdicts import judgements
    try:
        return judgements(cases, answer), None
    except Exception as exc:        # noqa: BLE001 - a damaged baseline, a value out of range
        if answer is None or answer.outcome == "PASS":
            raise
        cause = " ".join(str(exc).split())[:400] or type(exc).__name__
        return [], Section("unjudged", "Not judged",
                           f"The values were not judged against the baseline's sessions "
                           f"({type(exc).__name__}: {cause}); the acceptance line above is "
                           "the run's answer.")


def build(title: str, subtitle: str, cases: list[Case], out: Path,
          provenance: list[tuple[str, str]], compare: Table | None = None,
          compare_note: str = "", discussion: str = "",
          history: tuple[Table | None, str] | None = None,
          answer: Any = None, history_link: str = "") -> Report:
    """All sections the data allows, in reading order; a person's discussion first.
    ``answer``: the run's verdict record, which the verdict section opens with;
    ``history_link``: the system's history page, relative to the report folder."""
    rep = Report(title, subtitle, provenance=provenance)
    n = rep.numbers
    from .lead import lead_section
    from .verdicts import needs_look
    judged, unjudged = _judged(cases, answer)
    # the answer first: the run's verdict, the node's line, the regressed values drawn
    lead = lead_section(cases, judged, out, answer, history_link)
    rep.sections.append(lead)
    odd: set[tuple[str, str]] = set()
    rep.sections += partition_sections(cases, out, n, odd, answer)    # the nodes against their peers
    look = needs_look(cases, judged, odd)
    if unjudged:
        rep.sections.append(unjudged)
    if discussion.strip():
        rep.sections.append(Section("discussion", "Discussion", prose=discussion.strip()))
    rep.sections += npb_sections(cases, out, n)
    for make in (partial(boxplot_section, look=look), partial(numa_section, look=look),
                 partial(bandwidth_section, look=look), page_sharing_section):
        s = make(cases, out, n)
        if s:
            rep.sections.append(s)
    rep.sections.append(_regression_section(cases, judged, out, n, compare, compare_note,
                                            history))
    allv = all_values_table(cases, n)
    if allv:
        rep.sections.append(Section("values", "All performance values", "", [allv]))
    _say_where_values_are(lead, rep.sections, len(allv.rows) if allv else 0)
    return rep


def _regression_section(cases: list[Case], judged: list, out: Path, n: Numbers,
                        compare: Table | None, compare_note: str,
                        history: tuple[Table | None, str] | None) -> Section:
    """Each value against its baseline's sessions, its interval, the previous run and
    the history; one figure of every judged value's change."""
    from .verdicts import changes_figure, verdict_table
    reg = Section("regressions", "Regression summary",
                  "Each case against its stored baseline, then against the previous run of "
                  "the same system (ReFrame's --performance-compare on its results storage).")
    vt, vtext = verdict_table(judged, n)
    if vtext:
        reg.text += " " + vtext
    if vt:
        reg.tables.append(vt)
    t = regression_table(cases, n)
    if t:
        reg.tables.append(t)
    else:
        reg.text += " No case of this run had a baseline reference."
    if compare is not None:
        reg.tables.append(compare)
    if compare_note:
        reg.text += " " + compare_note
    if history is not None:
        reg.text += " " + history[1]
        if history[0] is not None:
            reg.tables.append(history[0])
    guard, guard_text = guards_table(cases, n)
    if guard_text:
        reg.text += " " + guard_text
    if guard:
        reg.tables.append(guard)
    fig = changes_figure(judged, out)
    if fig:
        reg.images.append(fig)
    return reg


def _say_where_values_are(lead: Section, sections: list[Section], values: int) -> None:
    """When a section drew figures for only some of its items, the lead says so once,
    and where every value is (``values``: the rows of the table of all values): a reader
    never takes the figures for the whole run."""
    if not any(s.undrawn for s in sections):
        return
    line = (f"Figures are drawn for what needs a look first (failed cases, changed or "
            f"undecided values, odd nodes), at most {plots.MAX_ITEM_FIGURES} of a kind per "
            f"section; all {values} measured values are in the table of all values and in "
            "`numbers.csv`.")
    lead.after = "\n\n".join(x for x in (lead.after, line) if x)


def cases_with(cases: Iterable[Case], test: str) -> list[Case]:
    return [c for c in cases if c.test == test]
