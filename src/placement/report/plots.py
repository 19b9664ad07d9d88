"""PNG figures of a report (matplotlib, headless Agg backend).

Every function writes one file and returns its name relative to the report
folder, so the HTML can link it with a relative path and open from disk.
matplotlib is the ``reports`` extra: without it :func:`available` is False
and the report keeps its tables and CSV.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TypeVar

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.ticker
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover - reports without plots
    plt = None

DPI = 100
Series = dict[str, list[tuple[float, float, float | None]]]  # label -> [(x, y, yerr)]
K = TypeVar("K", bound=Hashable)

#: the most figures of one kind a section draws (one per series, per node, per case):
#: a partition's session holds hundreds of nodes and 100k values, and matplotlib takes
#: about a second a figure; what is not drawn stays in the tables and ``numbers.csv``
MAX_ITEM_FIGURES = 12


def available() -> bool:
    return plt is not None


def chosen(keys: Sequence[K], look: Callable[[K], bool], limit: int | None = None) -> set[K]:
    """The items a section draws: those that need a look first (failed, changed,
    undecided), then the others in their order, ``limit`` in all (default
    :data:`MAX_ITEM_FIGURES`)."""
    limit = MAX_ITEM_FIGURES if limit is None else limit
    first = [k for k in keys if look(k)]
    picked = set(first[:limit])
    for k in keys:
        if len(picked) >= limit:
            break
        picked.add(k)
    return picked


def _save(fig, out: Path, name: str, tight: bool = True) -> str:
    """Write through a temporary file and a rename: a full disk leaves no truncated PNG.
    ``tight``: fit the layout (slow with dozens of panels, which set their own margins)."""
    import os
    import tempfile
    if tight:
        fig.tight_layout()
    # made exclusively beside the figure (mkstemp: O_EXCL, a name no one can plant first)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
    try:
        with os.fdopen(fd, "wb") as fp:
            fig.savefig(fp, dpi=DPI, format="png")
        os.chmod(tmp, 0o644)        # a figure is read by others, as the pages are
        os.replace(tmp, out / name)
    finally:
        plt.close(fig)
        Path(tmp).unlink(missing_ok=True)
    return name


def lines(out: Path, name: str, panels: Sequence[tuple[str, str, Series]], xlabel: str,
          title: str, logx: bool = False, ideal: Sequence[str | None] = ()) -> str:
    """One row of panels, each a line per series with optional error bars.

    ``panels``: (y label, panel title, series). ``ideal`` names, per panel,
    a reference line: ``"linear"`` (y = x) or ``"one"`` (y = 1).
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    for i, (ax, (ylabel, ptitle, series)) in enumerate(zip(axes[0], panels)):
        xs_all: set[float] = set()
        for label, pts in series.items():
            pts = sorted(pts)
            xs = [p[0] for p in pts]
            xs_all.update(xs)
            errs = [p[2] if p[2] is not None else 0 for p in pts]
            ax.errorbar(xs, [p[1] for p in pts], yerr=errs if any(errs) else None,
                        marker="o", ms=4, capsize=3, label=label)
        kind = ideal[i] if i < len(ideal) else None
        if kind and xs_all:
            lo, hi = min(xs_all), max(xs_all)
            ax.plot([lo, hi], [lo, hi] if kind == "linear" else [1, 1], "k:", lw=1,
                    label="ideal" if kind == "linear" else None)
        if logx:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(ptitle, fontsize=10)
        ax.grid(alpha=0.3)
        if series:
            ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    return _save(fig, out, name)


def boxplot(out: Path, name: str, groups: dict[str, list[float]], ylabel: str, title: str) -> str:
    """Per-run values of several cases side by side (the studies' matmul figures)."""
    labels = list(groups)
    many = len(labels) > 8
    fig, ax = plt.subplots(figsize=(min(24.0, max(5.0, 1.1 * len(labels) + 2)), 4.6))
    ax.boxplot([groups[k] for k in labels])
    # one parameter per line keeps labels of a few boxes apart; many boxes: slanted
    ticks = labels if many else [k.replace(" ", "\n") for k in labels]
    ax.set_xticks(range(1, len(labels) + 1), ticks, rotation=30 if many else 0,
                  ha="right" if many else "center", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, out, name)


def heatmap(out: Path, name: str, matrix: list[list[float | None]], rows: Sequence[str],
            cols: Sequence[str], label: str, title: str) -> str:
    """A matrix with its values written in the cells (the NUMA copy matrix)."""
    import math
    data = [[math.nan if v is None else v for v in r] for r in matrix]
    fig, ax = plt.subplots(figsize=(1.1 * len(cols) + 2.5, 0.9 * len(rows) + 1.8))
    im = ax.imshow(data, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("destination node")
    ax.set_ylabel("source node (thread runs here)")
    finite = [v for r in data for v in r if not math.isnan(v)]
    mid = (min(finite) + max(finite)) / 2 if finite else 0
    for i, r in enumerate(data):
        for j, v in enumerate(r):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=9,
                        color="white" if v < mid else "black")
    fig.colorbar(im, ax=ax, label=label)
    ax.set_title(title, fontsize=10)
    return _save(fig, out, name)


def sessions_strip(out: Path, name: str, title: str, sessions: Sequence[Sequence[float]],
                   new: Sequence[float], unit: str = "") -> str:
    """A value's launches per baseline session (grey) beside the new session's (red), each
    session's median as a bar: what the verdict compares, one draw per session."""
    fig, ax = plt.subplots(figsize=(0.5 * len(sessions) + 2.6, 3.0))
    groups = [list(s) for s in sessions] + [list(new)]
    for i, runs in enumerate(groups):
        colour = "tab:red" if i == len(groups) - 1 else "0.45"
        ax.plot([i] * len(runs), runs, "o", ms=3.5, color=colour, alpha=0.8)
        med = sorted(runs)[len(runs) // 2] if len(runs) % 2 else \
            sum(sorted(runs)[len(runs) // 2 - 1:len(runs) // 2 + 1]) / 2
        ax.plot([i - 0.3, i + 0.3], [med, med], "-", color=colour, lw=2)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([str(i + 1) for i in range(len(sessions))] + ["new"], fontsize=7)
    ax.set_xlabel("baseline session")
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=8)
    return _save(fig, out, name)


#: the verdict's outcomes in a summary histogram's stack, with their colours
OUTCOME_COLOURS = (("regressed", "tab:red"), ("undecided", "tab:orange"),
                   ("improved", "tab:green"), ("unchanged", "0.6"))


def changes(out: Path, name: str, worse: Sequence[tuple[float, str]], title: str) -> str:
    """Every judged value in one figure: how much worse each got (%), stacked by its
    verdict. One figure for any number of values: the summary beside the few drawn alone.
    Values beyond the 99th percentile of the sizes sit in the outermost bins."""
    import numpy as np
    x = np.array([w for w, _ in worse], dtype=float)
    lim = max(5.0, float(np.percentile(np.abs(x), 99))) if len(x) else 5.0
    bins = np.linspace(-lim, lim, 41)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    stack = [(label, colour, np.clip([w for w, o in worse if o == label], -lim, lim))
             for label, colour in OUTCOME_COLOURS]
    stack = [s for s in stack if len(s[2])]
    ax.hist([s[2] for s in stack], bins=bins, stacked=True, color=[s[1] for s in stack],
            label=[f"{s[0]} ({len(s[2])})" for s in stack])
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("worse by (%): slower, or a lower rate, positive")
    ax.set_ylabel("values")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, out, name)


#: value panels per row of a history figure
HISTORY_COLUMNS = 3


def history(out: Path, name: str, title: str, node: dict, panels: Sequence[dict]) -> str:
    """A system's sessions over time: the node's shift on top, then one small panel per
    judged value, dates on every axis.

    ``node``: ``dates``, ``shift`` (%, slower positive, None where not judged), ``flagged``
    (a NODE line), ``confirmations`` (dates), ``baseline`` (the first and last date of the
    baseline's stored sessions, or None). ``panels``: per value ``title``, ``unit``,
    ``dates``, ``values`` (session medians), ``baseline`` (per point: one of the
    baseline's sessions), ``band`` (lowest and highest baseline session median, or None).
    """
    import datetime as dt
    import matplotlib.dates as mdates
    rows = 1 + -(-len(panels) // HISTORY_COLUMNS)
    height = 2.6 * rows
    fig = plt.figure(figsize=(5.0 * HISTORY_COLUMNS, height))
    # margins in inches, so that they stay the same for any number of rows (no tight layout:
    # it takes seconds over dozens of panels)
    grid = fig.add_gridspec(rows, HISTORY_COLUMNS, left=0.06, right=0.98, top=1 - 0.5 / height,
                            bottom=0.5 / height, hspace=0.55, wspace=0.25)
    ax = fig.add_subplot(grid[0, :])
    dates = node["dates"]
    ticks = _date_ticks(dates)    # one set for every value panel, computed once
    formatter = mdates.DateFormatter(
        "%Y-%m-%d" if dates and max(dates) - min(dates) > dt.timedelta(days=4) else "%m-%d %H:%M")
    pts = [(d, s, f) for d, s, f in zip(node["dates"], node["shift"], node["flagged"])
           if s is not None]
    ax.axhline(0, color="0.6", lw=0.8)
    if node.get("baseline"):
        ax.axvspan(*node["baseline"], color="0.85", label="baseline's sessions")
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", ms=3, color="tab:blue",
            label="node's shift")
    bad = [p for p in pts if p[2]]
    if bad:
        ax.plot([p[0] for p in bad], [p[1] for p in bad], "o", ms=9, mfc="none",
                mec="tab:red", mew=2, label="NODE line")
    for i, d in enumerate(node["confirmations"]):
        ax.axvline(d, color="tab:orange", ls=":", lw=1.2,
                   label="confirmation session" if i == 0 else None)
    ax.set_ylabel("node shift (%)\nslower positive")
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    for i, p in enumerate(panels):
        ax = fig.add_subplot(grid[1 + i // HISTORY_COLUMNS, i % HISTORY_COLUMNS])
        if p["band"] is not None:
            ax.axhspan(*p["band"], color="0.88")
        ax.plot(p["dates"], p["values"], "-", lw=0.8, color="tab:blue")
        base = [(d, v) for d, v, b in zip(p["dates"], p["values"], p["baseline"]) if b]
        rest = [(d, v) for d, v, b in zip(p["dates"], p["values"], p["baseline"]) if not b]
        ax.plot([x[0] for x in rest], [x[1] for x in rest], "o", ms=2.5, color="tab:blue")
        ax.plot([x[0] for x in base], [x[1] for x in base], "s", ms=3.5, color="black")
        ax.set_title(p["title"], fontsize=8)
        ax.set_ylabel(p["unit"], fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(formatter)
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
    return _save(fig, out, name, tight=False)


def _date_ticks(dates: Sequence) -> list:
    """Four dates evenly spread over ``dates``' span (the first and last among them)."""
    if not dates:
        return []
    lo, hi = min(dates), max(dates)
    return [lo + (hi - lo) * i / 3 for i in range(4)] if hi > lo else [lo]
