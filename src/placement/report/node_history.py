"""A history page per node, for a system whose runs measured several nodes (``--distribute``).

The system's page (:mod:`.history_page`) draws every value and the common shift of a
whole session; on a partition the session's values come from several nodes, and a node
that drifts week after week is hidden among its peers there. So each node gets the
same page drawn from its own cases alone, judged against its own entries of the
baseline (``baseline record`` keeps a distributed run per node), in
``history/<system>-<node>/`` beside the system's. The folder's name follows from the system
and the node, so anyone can plant a link there before a run: it is claimed as the system's
page is (:func:`.folder.claimed`), never written through a link below the reports' folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..judgement import RunReport, peers
from . import files, history_page, history_points, history_read
from .folder import claimed


def nodes_of(sessions: Sequence[RunReport]) -> list[str]:
    """The nodes the sessions' cases ran on, when they ran on more than one."""
    nodes = {c.node for r in sessions for c in r.cases} - {None}
    return sorted(nodes, key=peers.partition.node_order) if len(nodes) > 1 else []


def of_node(r: RunReport, node: str) -> RunReport:
    """The session with only the cases of ``node``."""
    return RunReport(r.path, r.session, [c for c in r.cases if c.node == node])


#: the value panels a node's page draws: a partition has a page per node, and a figure of
#: every value takes seconds (a thousand nodes' pages would take hours); the rest are in
#: the page's numbers.csv
NODE_PANELS = 6


def write(system: str, sessions: Sequence[RunReport], confirmations: Sequence[RunReport],
          reports: Path, report_link: str = "") -> dict[str, Path]:
    """Each node's history page under ``reports/history/``; ``{}`` when the sessions ran on
    one node or the system has no baseline with stored sessions."""
    nodes = nodes_of(sessions)
    pages = history_page.Pages.of(system, reports) if nodes else None
    if pages is None:
        return {}
    # judged as the report judges them (history_read: each whole session once for all
    # its nodes, a distributed run's values keyed by their node, as the baseline keeps them)
    judged = history_read.node_histories(pages, sessions)
    return write_judged(pages, judged, confirmations, report_link)


def write_judged(pages: history_page.Pages, nodes: dict[str, history_points.History],
                 confirmations: Sequence[RunReport], report_link: str = "") -> dict[str, Path]:
    """Each node's page of its judged sessions (``nodes``: :class:`.history_read.Reading`'s)
    under ``pages``' reports folder, its points kept there for the next page."""
    out = {}
    for node, hist in nodes.items():
        target = pages.folder(node)
        # no link at history/ or below it is followed (the reports' folder is the root)
        with claimed(target, target.parent.parent):
            rep = history_page.page(pages, hist, [of_node(r, node) for r in confirmations],
                                    target, report_link, NODE_PANELS)
            history_points.write_cache(target / history_points.CACHE, pages.key(node), hist)
            rep.title = f"History: {pages.system} node {node}"
            files.write(rep, target)
        out[node] = target
    return out
