"""A history page per node, for a system whose runs measured several nodes (``--distribute``).

The system's page (:mod:`.history_page`) draws every value and the common shift of a
whole session; on a partition the session's values come from several nodes, and a node
that drifts week after week is hidden among its peers there. So each node gets the
same page drawn from its own cases alone, judged against its own entries of the
baseline (``baseline record`` keeps a distributed run per node), in
``history/<system>-<node>/`` beside the system's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..judgement import RunReport, baseline_samples, baselines, peer_cases, peers
from ..util import PlacementError
from . import files, history_page, history_points
from .tables import slug


def nodes_of(sessions: Sequence[RunReport]) -> list[str]:
    """The nodes the sessions' cases ran on, when they ran on more than one."""
    nodes = {peer_cases.node_of(c) for r in sessions for c in r.cases} - {None}
    return sorted(nodes, key=peers.node_order) if len(nodes) > 1 else []


def of_node(r: RunReport, node: str) -> RunReport:
    """The session with only the cases of ``node``."""
    return RunReport(r.path, r.session, [c for c in r.cases if peer_cases.node_of(c) == node])


def write(system: str, sessions: Sequence[RunReport], confirmations: Sequence[RunReport],
          reports: Path, report_link: str = "") -> dict[str, Path]:
    """Each node's history page under ``reports/history/``; ``{}`` when the sessions ran on
    one node or the system has no baseline with stored sessions."""
    from ..util import baseline_file
    nodes = nodes_of(sessions)
    path = baseline_file(system)
    try:
        old = baselines.load(path) if nodes else {}
    except PlacementError:
        return {}
    if not old or not baseline_samples.entries(old, str(path)):
        return {}
    out, version = {}, baselines.version(path)
    for node in nodes:
        target = reports / "history" / f"{slug(system)}-{slug(node)}"
        only = (of_node(r, node) for r in sessions)     # each read once, none kept
        target.mkdir(parents=True, exist_ok=True)
        rep = history_page.build(system, old, str(path), only,
                                 [of_node(r, node) for r in confirmations], target, report_link,
                                 history_points.cache_key(f"{system} node {node}", version))
        rep.title = f"History: {system} node {node}"
        files.write(rep, target)
        out[node] = target
    return out


def write_judged(pages: history_page.Pages, nodes: dict[str, history_points.History],
                 confirmations: Sequence[RunReport], report_link: str = "") -> dict[str, Path]:
    """Each node's page of its judged sessions (``nodes``: :class:`.history_read.Reading`'s)
    under ``pages``' reports folder, its points kept there for the next page."""
    out = {}
    for node, hist in nodes.items():
        target = pages.folder(node)
        target.mkdir(parents=True, exist_ok=True)
        rep = history_page.page(pages, hist, [of_node(r, node) for r in confirmations],
                                target, report_link)
        history_points.write_cache(target / history_points.CACHE, pages.key(node), hist)
        rep.title = f"History: {pages.system} node {node}"
        files.write(rep, target)
        out[node] = target
    return out
