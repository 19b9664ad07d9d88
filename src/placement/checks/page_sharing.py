"""The threads' sharing matrix and the data-mapping study's rule, from a page CSV.

The page CSV is numalize's (Pin) or pagesample's (page protection, no Pin:
``src/kernels/pagesample.c``), read by :func:`numa_pages.read_page_csv`. With
pagesample the per-thread numbers are samples, not every access: shares and
exclusivity are ratios, so they estimate numalize's; the matrix counts pages.

The rule is the study's (Trindade et al.): data mapping pays off when the
threads' pages are used mostly from one node (a regular pattern, high page
exclusivity): first-touch with the arrays initialised on the compute loop's
schedule. With many low-exclusivity pages no node placement is local, and
interleave spreads their traffic over every node's memory controller.
"""

from __future__ import annotations

from dataclasses import dataclass

from .numa_pages import PageAccesses, application_exclusivity


def sharing_matrix(pages: list[PageAccesses]) -> list[list[int]]:
    """``S[i][j]``: pages accessed by both thread i and thread j (``S[i][i]``: by thread i)."""
    n = len(pages[0].accesses) if pages else 0
    s = [[0] * n for _ in range(n)]
    for p in pages:
        users = [t for t, a in enumerate(p.accesses) if a > 0]
        for i in users:
            for j in users:
                s[i][j] += 1
    return s


def thread_shares(pages: list[PageAccesses]) -> list[float]:
    """Each thread's share (0..1) of all the accesses (or samples) of the run."""
    n = len(pages[0].accesses) if pages else 0
    per = [sum(p.accesses[t] for p in pages) for t in range(n)]
    total = sum(per)
    if total == 0:
        raise ValueError("no page was accessed: no thread shares")
    return [a / total for a in per]


def exclusivity_threshold(nodes: int) -> float:
    """Midway between pages spread evenly over the nodes (``100/K``) and fully exclusive (100)."""
    if nodes < 1:
        raise ValueError(f"need at least one NUMA node, got {nodes}")
    return (100.0 + 100.0 / nodes) / 2


@dataclass(frozen=True)
class MappingAdvice:
    """The study's rule applied to one run: exclusivity, the threshold and the mapping."""

    exclusivity: float
    threshold: float
    mapping: str

    def line(self) -> str:
        """One line for a log or a report."""
        return (f"page exclusivity {self.exclusivity:.1f}% "
                f"{'>=' if self.mapping == 'first-touch' else '<'} {self.threshold:.1f}%: "
                f"{self.mapping} recommended")


def recommend_mapping(pages: list[PageAccesses], nodes: int,
                      threads_per_node: int | None = None) -> MappingAdvice:
    """First-touch (parallel initialisation) when exclusivity reaches the threshold, else interleave."""
    e = application_exclusivity(pages, nodes, threads_per_node)
    t = exclusivity_threshold(nodes)
    return MappingAdvice(e, t, "first-touch" if e >= t else "interleave")
