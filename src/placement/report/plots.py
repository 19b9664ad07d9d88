"""PNG figures of a report (matplotlib, headless Agg backend).

Every function writes one file and returns its name relative to the report
folder, so the HTML can link it with a relative path and open from disk.
matplotlib is the ``reports`` extra: without it :func:`available` is False
and the report keeps its tables and CSV.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.ticker
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover - reports without plots
    plt = None

DPI = 100
Series = dict[str, list[tuple[float, float, float | None]]]  # label -> [(x, y, yerr)]


def available() -> bool:
    return plt is not None


def _save(fig, out: Path, name: str) -> str:
    """Write through a temporary file and a rename: a full disk leaves no truncated PNG."""
    import os
    fig.tight_layout()
    tmp = out / f".{name}.tmp"
    try:
        fig.savefig(tmp, dpi=DPI, format="png")
        os.replace(tmp, out / name)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
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
