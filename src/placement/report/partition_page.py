"""The partition section of a report: nodes against their peers, for a run on several nodes.

A site reading an acceptance run of a partition asks which nodes differ and on what.
The section answers in that order: a table of the nodes, odd ones first, each linked
to its evidence (its values' change against its peers' median, drawn); a heatmap of
nodes x values (the change in performance against the peers' median, slower red);
and the topology fingerprint of every node beside the one most nodes share. The
numbers are the peer verdict's own (:mod:`placement.judgement.peers.partition`), and a named
node's values worse and better are its NODES line's (the verdict record's finding), so the
page and the NODES lines never disagree.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..acceptance import peer_lines
from ..judgement import Case, RunReport, peers
from . import plots
from .document import Section
from .escape import markdown as md
from .tables import Numbers, Table, slug


def partition_sections(cases: list[Case], out: Path, numbers: Numbers,
                       named: set[tuple[str, str]] | None = None,
                       answer: Any = None) -> list[Section]:
    """One section per partition that ran on several nodes with a value measured on two
    of them (none otherwise). ``named``, when given, gets each node the peer verdict
    names, as ``(SYSTEM:PART, node)``: the other sections draw their cases first.
    ``answer``: the run's verdict record, whose count of the nodes each section opens
    with."""
    report = RunReport(out, {}, cases)
    sections = []
    declared = peers.cases.declared_nodes(report)
    for where, (values, fps) in sorted(peers.cases.partitions(report).items()):
        j = peers.partition.judge(values, where, fps, declared=declared.get(where))
        if j.unshared:          # no value measured on two nodes: nothing to set side by side
            continue
        sections.append(_section(j, fps, out, numbers, node_count(j, answer),
                                 peer_lines_of(j, answer), named_numbers(j, answer)))
        if named is not None:
            named.update((where, n) for n in j.named)
    return sections


def node_count(j: peers.partition.PeerJudgement, answer: Any) -> peer_lines.NodeCount:
    """The partition's count as the run's verdict record has it (the summary's numbers,
    its loaded nodes among them); a record without one (of schema 1) is counted by the
    same function."""
    said = (getattr(answer, "nodes", None) or {}).get("partitions", {}).get(j.where)
    return peer_lines.NodeCount(**said) if said else peer_lines.NodeCount.of([j])


def peer_lines_of(j: peers.partition.PeerJudgement, answer: Any) -> list[str]:
    """The partition's lines as the run's verdict record has them (the summary's numbers);
    without a record, or one of schema 1, the peer verdict's own (the same function)."""
    if answer is not None and getattr(answer, "schema", 1) >= 2:
        said = [f.line for f in answer.findings
                if f.partition == j.where and f.kind in ("NODES", "NOTE")]
        if said:
            return said
    return j.lines()


def named_numbers(j: peers.partition.PeerJudgement, answer: Any) -> dict[str, dict]:
    """Each node a NODES line names on its values, with the line's numbers (``worse``,
    ``better``, of ``judged``, its ``scope``): the record's findings' data when the run has a
    record of schema 2 that holds them, else the peer verdict's own (the same function), so
    the page's count of a named node's values is the line's."""
    if answer is not None and getattr(answer, "schema", 1) >= 2:
        said = [f for f in answer.findings
                if f.partition == j.where and f.kind in ("NODES", "NOTE")]
        if said:
            return {f.node: f.data for f in said
                    if f.data.get("what") == "odd" and "worse" in f.data}
    return {p.node: p.data for p in j.parts() if p.data.get("what") == "odd"}


def node_rows(j: peers.partition.PeerJudgement) -> list[str]:
    """The nodes in the page's order: named ones first (as the lines name them), then the
    rest by name."""
    named = j.named
    return named + [n for n in j.nodes if n not in named]


def _section(j: peers.partition.PeerJudgement, fps: dict, out: Path, numbers: Numbers,
             count: peer_lines.NodeCount, lines: list[str], named: dict[str, dict]) -> Section:
    s = Section(f"partition-{slug(j.where)}", f"Partition {j.where}: nodes against their peers",
                _intro(j, count.text(), lines))
    order = node_rows(j)
    measured = [n for n, row in zip(j.nodes, j.change) if np.isfinite(row).any()]
    drawn = plots.chosen([n for n in order if n in set(measured)], set(j.named).__contains__) \
        if plots.available() else set()
    s.tables.append(_nodes_table(j, order, out, numbers, drawn, named, count))
    if fps:
        s.tables.append(topology_table(j, fps, order))
    if plots.available() and j.values and not j.note:
        s.images.append((_heatmap(j, order, out), "change against the peers' median, "
                                                   "nodes x values (odd nodes first)"))
        s.figures_for(len(drawn), len(measured), "nodes' values against their peers",
                      "the odd nodes first; the heatmap holds every node")
    return s


def _intro(j: peers.partition.PeerJudgement, count: str, said: list[str]) -> str:
    # as escaped text, not code spans: a backtick in a node's value (its fingerprint) would
    # end the span and let the rest of the line render as markup
    lines = "; ".join(f"*{md(ln)}*" for ln in said)
    return (f"**{md(count)}.** {len(j.nodes)} nodes measured in one session, each value of "
            f"each node against its peers' median (the peer verdict). {lines}")


def _nodes_table(j: peers.partition.PeerJudgement, order: list[str], out: Path,
                 numbers: Numbers, drawn: set[str], named: dict[str, dict],
                 count: peer_lines.NodeCount) -> Table:
    """A row per node; ``drawn``: the nodes whose values are drawn (their evidence);
    ``named``: the numbers of each node a NODES line names on its values
    (:func:`named_numbers`), which its row shows, the line's own; ``count``: the COUNT
    line's, whose loaded nodes and lack of a majority the rows say as it does (a row
    never reads "like its peers" for a node the line does not count alike)."""
    t = Table(f"nodes-{slug(j.where)}", "Nodes, odd ones first",
              ["node", "verdict", "values worse / better", "median change", "evidence"])
    odd = {o.node: o for o in j.odd}
    topo = {d.node: d for d in j.topology}
    unlike_declared = {n for d in j.declared for n in d.nodes}
    index = {n: i for i, n in enumerate(j.nodes)}
    left = {x.node for x in j.not_judged}
    for node in order:
        i = index[node]
        row = j.change[i]
        finite = row[np.isfinite(row)]
        med = float(np.median(finite)) if len(finite) else math.nan
        # no majority: no node's values were called against a majority's median
        counted = "–" if count.no_majority and node not in named else \
            worse_better(j, i, named.get(node))
        verdict = ("slower" if odd[node].slower else "faster") if node in odd else \
            "apart, no majority" if node in dict(j.apart) else \
            "differs, which one is odd untold" if node in j.undecided else \
            "not judged" if node in left else \
            "no majority to judge by" if count.no_majority else ""
        if node in count.loaded:
            verdict = ", ".join(x for x in (verdict, "under a load") if x)
        if node in topo:
            verdict = ", ".join(x for x in (verdict, "topology differs") if x)
        if node in unlike_declared:
            verdict = ", ".join(x for x in (verdict, "unlike the declared node") if x)
        if isinstance(named.get(node, {}).get("median"), (int, float)):
            med = float(named[node]["median"])      # the line's median, against its peers
        link = _evidence(j, i, out) if node in drawn else ""
        t.add([node, verdict or "like its peers", counted,
               "–" if math.isnan(med) else f"{med:+.1%}", "values" if link else "–"],
              "bad" if verdict else "", link)
        numbers.add("partition", t.id, node, "median change", "change against peers", med)
    return t


def worse_better(j: peers.partition.PeerJudgement, i: int, said: dict | None) -> str:
    """The ``values worse / better`` cell of node ``i``: a named node's line's numbers
    (``said``, with how many values they are of when the line counted a subset of them),
    else its values called against the peers' median on the page."""
    if said is None:
        return f"{int((j.called[i] == 1).sum())} / {int((j.called[i] == -1).sum())}"
    scope = f" of {said['judged']} {said['scope']}" if said.get("scope") else ""
    return f"{said['worse']} / {said['better']}{scope}"


def topology_table(j: peers.partition.PeerJudgement, fps: dict, order: list[str]) -> Table:
    """Every node's fingerprint, one column per field; a row that differs is marked."""
    fields = sorted({k for fp in fps.values() for k in fp})
    t = Table(f"topology-{slug(j.where)}", "Topology per node (hwloc)", ["node", *fields])
    differs = {d.node for d in j.topology} | {n for d in j.declared for n in d.nodes}
    for node in order:
        fp = fps.get(node, {})
        t.add([node, *(str(fp.get(k, "–")) for k in fields)],
              "bad" if node in differs else "")
    return t


#: nodes, and values, a heatmap names on its axes (beyond: the odd nodes alone, no values)
HEATMAP_LABELS = 80
#: the tallest heatmap (inches): a partition of thousands of nodes is rows of pixels
HEATMAP_HEIGHT = 16.0


def _heatmap(j: peers.partition.PeerJudgement, order: list[str], out: Path) -> str:
    """Nodes x values, the change in performance against the peers' median: every node
    and value of the partition in one figure, however many."""
    plt = plots.plt
    index = {n: k for k, n in enumerate(j.nodes)}
    rows = [index[n] for n in order]
    data = j.change[rows]
    lim = max(0.05, float(np.nanmax(np.abs(data))) if np.isfinite(data).any() else 0.05)
    fig, ax = plt.subplots(figsize=(min(0.28 * len(j.values) + 3, 30),
                                    min(0.4 * len(order) + 3, HEATMAP_HEIGHT)))
    im = ax.imshow(data, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto",
                   interpolation="nearest")
    if len(order) <= HEATMAP_LABELS:
        ax.set_yticks(range(len(order)), order)
    else:           # the named nodes come first: label them, count the rest
        named = order[:min(len(j.named), HEATMAP_LABELS)]
        ax.set_yticks(range(len(named)), named, fontsize=6)
        ax.set_ylabel(f"{len(order)} nodes (odd ones first, named)")
    if len(j.values) <= HEATMAP_LABELS:
        ax.set_xticks(range(len(j.values)), [v[:40] for v in j.values], rotation=90,
                      fontsize=6)
    else:
        ax.set_xticks([])
        ax.set_xlabel(f"{len(j.values)} values (named in the table of all values)")
    fig.colorbar(im, ax=ax, label="change vs peers' median")
    ax.set_title(f"{j.where}: each node against its peers", fontsize=10)
    return plots._save(fig, out, f"partition-{slug(j.where)}.png")


#: the values one node's evidence draws: the furthest from the peers' median, called first
EVIDENCE_VALUES = 40


def _evidence(j: peers.partition.PeerJudgement, i: int, out: Path) -> str:
    """One node's values against its peers' median, called values marked: its evidence
    (the :data:`EVIDENCE_VALUES` furthest from the median when it has more)."""
    plt = plots.plt
    node = j.nodes[i]
    row = j.change[i]
    keep = np.flatnonzero(np.isfinite(row))
    total = len(keep)
    if total > EVIDENCE_VALUES:     # called first, then the furthest; in the page's order
        rank = np.lexsort((-np.abs(row[keep]), j.called[i, keep] == 0))
        keep = np.sort(keep[rank[:EVIDENCE_VALUES]])
    colours = ["#c62828" if j.called[i, k] == 1 else "#2e7d32" if j.called[i, k] == -1
               else "#9e9e9e" for k in keep]
    fig, ax = plt.subplots(figsize=(8, 0.18 * len(keep) + 1.5))
    ax.barh(range(len(keep)), row[keep], color=colours)
    ax.set_yticks(range(len(keep)), [j.values[k][:60] for k in keep], fontsize=6)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("change in performance against the peers' median (called: red worse, "
                  "green better)")
    ax.set_title(f"{j.where} {node}" + (f": the {len(keep)} of {total} values furthest "
                                        "from the peers' median" if len(keep) < total else ""),
                 fontsize=10)
    return plots._save(fig, out, f"peers-{slug(j.where)}-{slug(node)}.png")
