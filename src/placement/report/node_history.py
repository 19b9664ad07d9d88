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

from ..judgement import RunReport, baseline_samples, baselines, peer_cases, peers
from ..util import PlacementError
from . import files, history_page, history_points
from .folder import claimed
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
        with claimed(target, reports):      # no link at history/ or below it is followed
            rep = history_page.build(system, old, str(path), only,
                                     [of_node(r, node) for r in confirmations], target,
                                     report_link,
                                     history_points.cache_key(f"{system} node {node}", version))
            rep.title = f"History: {system} node {node}"
            files.write(rep, target)
        out[node] = target
    return out
