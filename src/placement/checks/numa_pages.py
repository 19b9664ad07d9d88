"""Where a run's pages are: NUMA locality from numa_maps, page exclusivity from numalize.

Two views of data mapping, as the NUMA study uses them:

* locality share: from a ``/proc/<pid>/numa_maps`` line per array (pages per
  node, ``N<k>=<pages>``) and the rows each thread of the compute loop owns, the
  share of pages that sit on the node of the thread computing on them;
* page exclusivity (Diener et al.): from numalize's ``<exe>.full.page.csv``
  (per page, accesses by each thread ``T0..Tn-1``), with threads assigned to
  nodes compactly, ``E(p) = 100 * max_k A_k(p) / sum_k A_k(p)`` and the
  application's exclusivity ``100 * sum_p max_k A_k(p) / sum_p sum_k A_k(p)``.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_NODE = re.compile(r"\bN(\d+)=(\d+)\b")
_KV = re.compile(r"(\w+)=(\S+)")


def pages_per_node(numa_maps_line: str) -> dict[int, int]:
    """``{node: pages}`` of one numa_maps line (nodes with no page are absent)."""
    return {int(n): int(p) for n, p in _NODE.findall(numa_maps_line)}


@dataclass(frozen=True)
class ThreadRows:
    """The rows ``[lo, hi)`` of the compute loop one thread owns, and its node."""

    thread: int
    node: int
    lo: int
    hi: int


def expected_share(threads: Iterable[ThreadRows]) -> dict[int, float]:
    """Share of the array each node should hold if every row were local to its thread."""
    rows: dict[int, int] = {}
    for t in threads:
        rows[t.node] = rows.get(t.node, 0) + (t.hi - t.lo)
    total = sum(rows.values())
    if total <= 0:
        raise ValueError("the threads own no rows: cannot compute a locality share")
    return {node: n / total for node, n in rows.items()}


def locality_share(pages: dict[int, int], threads: Iterable[ThreadRows]) -> float:
    """Share (0..1) of the pages on the node that computes on them.

    An array split evenly by rows is local to the extent that each node holds
    at most the share of pages its threads use: ``sum_k min(actual_k, expected_k)``.
    """
    total = sum(pages.values())
    if total <= 0:
        raise ValueError("numa_maps reports no resident page for the array")
    want = expected_share(threads)
    return sum(min(p / total, want.get(node, 0.0)) for node, p in pages.items())


def parse_datamap_output(text: str) -> tuple[dict[str, dict[int, int]], list[ThreadRows]]:
    """Pages per node of each array and the threads' rows, from the datamap kernel's output."""
    arrays: dict[str, dict[int, int]] = {}
    threads: list[ThreadRows] = []
    for line in text.splitlines():
        if line.startswith("numa_maps kernel=datamap "):
            name = dict(_KV.findall(line)).get("array", "?")
            arrays[name] = pages_per_node(line)
        elif line.startswith("thread kernel=datamap "):
            kv = dict(_KV.findall(line))
            threads.append(ThreadRows(int(kv["thread"]), int(kv["node"]),
                                      int(kv["row_lo"]), int(kv["row_hi"])))
    return arrays, threads


def datamap_locality(text: str) -> float:
    """Locality share (percent) over all arrays of one datamap run, pages weighted."""
    arrays, threads = parse_datamap_output(text)
    if not arrays or not threads:
        raise ValueError("no numa_maps or thread lines in the datamap output")
    total = sum(sum(p.values()) for p in arrays.values())
    return 100.0 * sum(locality_share(p, threads) * sum(p.values())
                       for p in arrays.values()) / total


# ---- numalize page exclusivity ----

@dataclass(frozen=True)
class PageAccesses:
    """One row of ``<exe>.full.page.csv``: a page and its accesses per thread."""

    address: str
    structure: str
    accesses: tuple[int, ...]


def read_page_csv(path: str | Path) -> list[PageAccesses]:
    """Reads numalize's page CSV; the thread columns are ``T0..Tn-1``, in order."""
    with open(path, newline="") as fp:
        reader = csv.reader(fp)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: empty file, expected a numalize page CSV header") from None
        tcols = [(i, int(h[1:])) for i, h in enumerate(header) if re.fullmatch(r"T\d+", h)]
        if "page.address" not in header or not tcols:
            raise ValueError(f"{path}: not a numalize page CSV (needs page.address and T0..Tn-1 columns)")
        if sorted(t for _i, t in tcols) != list(range(len(tcols))):
            raise ValueError(f"{path}: thread columns must be T0..T{len(tcols) - 1} without gaps")
        tcols.sort(key=lambda c: c[1])
        addr = header.index("page.address")
        struct = header.index("structure.name") if "structure.name" in header else None
        pages = []
        for lineno, row in enumerate(reader, start=2):
            if not row or all(not c.strip() for c in row):
                continue
            try:
                acc = tuple(int(row[i]) for i, _t in tcols)
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{lineno}: thread columns must hold whole numbers") from None
            if any(a < 0 for a in acc):
                raise ValueError(f"{path}:{lineno}: negative access count")
            pages.append(PageAccesses(row[addr].strip(),
                                      row[struct].strip() if struct is not None else "", acc))
    return pages


def compact_nodes(threads: int, nodes: int, threads_per_node: int | None = None) -> list[int]:
    """Node of each thread when threads fill nodes in order (``ceil(T/K)`` per node by default)."""
    if threads < 1 or nodes < 1:
        raise ValueError(f"need at least one thread and one node, got {threads} and {nodes}")
    per = threads_per_node or math.ceil(threads / nodes)
    return [min(t // per, nodes - 1) for t in range(threads)]


def node_accesses(page: PageAccesses, node_of: list[int], nodes: int) -> list[int]:
    """``A_k(p)``: the page's accesses by the threads of each node k."""
    if len(node_of) != len(page.accesses):
        raise ValueError(f"{len(page.accesses)} thread columns but {len(node_of)} threads mapped")
    out = [0] * nodes
    for t, a in enumerate(page.accesses):
        out[node_of[t]] += a
    return out


def page_exclusivity(page: PageAccesses, node_of: list[int], nodes: int) -> float | None:
    """``E(p)`` in percent; None for a page nobody accessed."""
    a = node_accesses(page, node_of, nodes)
    total = sum(a)
    return None if total == 0 else 100.0 * max(a) / total


def application_exclusivity(pages: list[PageAccesses], nodes: int,
                            threads_per_node: int | None = None) -> float:
    """``100 * sum_p max_k A_k(p) / sum_p sum_k A_k(p)`` over every accessed page."""
    if not pages:
        raise ValueError("no pages: cannot compute exclusivity")
    node_of = compact_nodes(len(pages[0].accesses), nodes, threads_per_node)
    top = total = 0
    for p in pages:
        a = node_accesses(p, node_of, nodes)
        top += max(a)
        total += sum(a)
    if total == 0:
        raise ValueError("no page was accessed: cannot compute exclusivity")
    return 100.0 * top / total
