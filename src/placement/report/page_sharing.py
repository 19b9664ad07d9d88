"""The report's data-mapping section: page exclusivity, the sharing matrix and the advice.

From each ``DataMapPageSampleCheck`` case, the page CSV kept in its output
folder: the study's rule
(:mod:`placement.checks.page_sharing`) beside the measured first-touch vs
interleave throughput of ``DataMapCheck`` with the same initialisation, and
the threads' sharing matrix as a heatmap.
"""

from __future__ import annotations

from pathlib import Path

from ..checks import numa_pages, page_sharing
from ..judgement import Case
from . import plots
from .document import Section
from .tables import Numbers, Table, slug

#: The checks that leave a page CSV in their output folder, and its name.
PAGE_CHECKS = {"DataMapPageSampleCheck": "datamap.full.page.csv"}


def _pages(case: Case) -> list[numa_pages.PageAccesses] | None:
    outdir = case.raw.get("outputdir")
    if not outdir:
        return None
    path = Path(outdir, PAGE_CHECKS[case.test])
    try:
        return numa_pages.read_page_csv(path)
    except (OSError, ValueError):
        return None


def _mlups(cases: list[Case], sysenv: str, init: str, policy: str) -> str:
    for c in cases:
        if (c.test == "DataMapCheck" and c.sysenv == sysenv and c.params.get("init") == init
                and c.params.get("policy") == policy and "mlups" in c.perf):
            v = c.perf["mlups"].value
            return "" if v is None else f"{v:.3g}"
    return ""


def _heatmap(out: Path, name: str, matrix: list[list[int]], title: str) -> str:
    plt = plots.plt
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(0.5 * n + 3, 0.45 * n + 2))
    im = ax.imshow(matrix, cmap="viridis")
    ticks = [f"T{t}" for t in range(n)]
    ax.set_xticks(range(n), ticks)
    ax.set_yticks(range(n), ticks)
    fig.colorbar(im, ax=ax, label="pages used by both threads")
    ax.set_title(title, fontsize=10)
    return plots._save(fig, out, name)


def page_sharing_section(cases: list[Case], out: Path, numbers: Numbers) -> Section | None:
    """Exclusivity, threshold, advice and the measured policies; one heatmap per case."""
    sampled = [(c, p) for c in cases if c.test in PAGE_CHECKS and (p := _pages(c))]
    if not sampled:
        return None
    sec = Section("page-sharing", "Data mapping: page exclusivity and sharing",
                  "Per page, the share of its accesses made from the node that uses it most "
                  "(threads placed compactly), over all pages: the application's exclusivity. "
                  "The study's rule: first-touch with parallel initialisation when exclusivity "
                  "reaches the threshold (midway between 100/K and 100 for K nodes), else "
                  "interleave. Beside it DataMapCheck's measured MLUP/s under each policy. "
                  "DataMapPageSampleCheck samples accesses by page protection (no Pin).")
    t = Table("page-sharing", "Page exclusivity and the advised mapping",
              ["check", "system", "init", "threads", "pages", "exclusivity %", "threshold %",
               "advised", "MLUP/s first-touch", "MLUP/s interleave"])
    for c, pages in sampled:
        init = str(c.params.get("init", ""))
        nodes = _nodes_from(c.perf.get("threshold"))
        advice = page_sharing.recommend_mapping(pages, nodes)
        t.add([c.test, c.sysenv, init, str(len(pages[0].accesses)), str(len(pages)),
               f"{advice.exclusivity:.1f}", f"{advice.threshold:.1f}", advice.mapping,
               _mlups(cases, c.sysenv, init, "first-touch"), _mlups(cases, c.sysenv, init, "interleave")])
        if plots.available():
            name = f"sharing-{slug(c.test)}-{slug(init)}-{slug(c.sysenv)}.png"
            _heatmap(out, name, page_sharing.sharing_matrix(pages), f"{c.test} init={init} ({c.sysenv})")
            sec.images.append((name, f"pages shared by each pair of threads, init={init}"))
    sec.tables.append(t)
    return sec


def _nodes_from(thr) -> int:
    """K from the check's threshold ``(100 + 100/K) / 2``; 1 when it is missing."""
    if thr is None or thr.value is None or thr.value >= 100:
        return 1
    return max(1, round(100 / (2 * thr.value - 100)))
