"""The peer verdict's one test (:mod:`placement.judgement.peers.maxt`) on every stored
session of the live 4-node test cluster: its decision alone
(:func:`~placement.judgement.peers.partition.decide`) and the NODES lines made with it
(:func:`~placement.judgement.peers.partition.judge`, with coverage and topology).

Each session under ``tests/fixtures/peers/`` is judged by both; per condition, how often
each gives the line the condition expects: ``unchanged``, no node named (and, for the new
test, none left unjudged); ``capped70`` / ``capped50``, the capped node named and no
other; ``pu1of2``, the topology line naming the node given 1 PU of 2 (the fingerprint
comparison, shared by both) and no other node named; ``twoodd``, the two capped nodes
named (alone or as a half) or, for the lines, their no-majority line. The
lines' goal as ``benchmarks/partition_goals.py`` counts it (:func:`partition_goals.met`,
which allows another node named beside the odd one) is shown as well. Validation sessions (started after the peer rules were
fixed, :data:`provenance.PEERS_FIXED`, on nodes with the largest CPU weight) apart from
in-sample ones; and each capped validation session the test left unnamed, with how far out
the capped node measured (:func:`odd_shape`). Writes
``benchmarks/results/peer_sessions_maxt.json``.

    python benchmarks/peer_sessions_maxt.py
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import partition_goals  # noqa: E402
import provenance  # noqa: E402
from placement.judgement import peers  # noqa: E402
from placement.judgement.peers import maxt  # noqa: E402
from placement.util import atomic  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "peer_sessions_maxt.json"
WHERE = partition_goals.WHERE


def expected_maxt(cond: partition_goals.Condition, v: maxt.PartitionVerdict,
                  topology_nodes: set[str]) -> bool:
    """Whether the new test's verdict is the line ``cond`` expects."""
    named = set(v.named)
    if cond.name == "unchanged":
        return not v.fails
    if cond.topology:
        return bool(topology_nodes & set(cond.odd)) and not (named - set(cond.odd))
    return named == set(cond.odd)


def expected_current(cond: partition_goals.Condition, j: peers.partition.PeerJudgement
                     ) -> bool:
    """Whether the NODES lines give the line ``cond`` expects (another node named
    beside the odd one is a wrong line)."""
    if not partition_goals.met(cond, j):
        return False
    return cond.name == "unchanged" or len(cond.odd) > 1 or not (set(j.named) - set(cond.odd))


def every_pu_gaps(values: list) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The nodes, their matrix over the values that use every PU (nodes x values, the log
    of each median launch, worse positive: the peer test's own) and each node's log gap to
    its peers' median on each of those values (slower positive)."""
    every_pu = [v for v in values if v.all_pus]
    nodes = sorted({n for v in every_pu for n in v.launches})
    if not every_pu or len(nodes) < 2:
        return nodes, np.zeros((len(nodes), 0)), np.zeros((len(nodes), 0))
    m, _, _ = peers.partition.matrix(every_pu, nodes)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        gaps = np.stack([m[i] - np.nanmedian(np.delete(m, i, axis=0), axis=0)
                         for i in range(len(nodes))])
    return nodes, m, gaps


def odd_shape(values: list, odd: str) -> dict:
    """How far out the odd node measured on the values that use every PU: on how many it
    was the slowest node, and its rate against its peers' median (the median over those
    values, and the range). Why: a capped node left unnamed either measured like its peers
    (the cap did not hold) or far out of them (the test's far-out weakness,
    ``benchmarks/peer_nulls.py``)."""
    nodes, m, gaps = every_pu_gaps([v for v in values if odd in v.launches])
    if not m.size or odd not in nodes:
        return {"slowest_on": 0, "of": 0, "rate": None, "range": None}
    i = nodes.index(odd)
    ratio = np.exp(-gaps[i])
    worst = int((np.nanargmax(m, axis=0) == i).sum())
    return {"slowest_on": worst, "of": m.shape[1], "rate": float(np.median(ratio)),
            "range": [float(ratio.min()), float(ratio.max())]}


def judge_all() -> list[dict]:
    """Every stored session judged by the NODES lines and by the test alone."""
    out = []
    for st in partition_goals.all_sessions():
        cond = st.cond
        values, fps = st.partition()
        cur = peers.partition.judge(values, WHERE, fps)
        t0 = time.perf_counter()
        new = peers.partition.decide(values, fps)
        sec = time.perf_counter() - t0
        topo = {t.node for t in cur.topology}
        out.append({"set": st.set, "file": st.path.name, "condition": cond.name,
                    "role": ("validation" if st.validation else "in-sample") if st.weighted
                    else "unweighted nodes",
                    "current_goal": partition_goals.met(cond, cur),
                    "current": expected_current(cond, cur),
                    "maxt": expected_maxt(cond, new, topo),
                    "current_named": sorted(cur.named),
                    "maxt_named": sorted(new.named), "maxt_lines": new.lines(WHERE),
                    "odd_shape": odd_shape(values, cond.odd[0])
                    if cond.slow and len(cond.odd) == 1 else None,
                    "seconds": sec})
    return out


def table(rows: list[dict]) -> dict:
    out: dict = defaultdict(lambda: defaultdict(lambda: {"sessions": 0, "current_goal": 0,
                                                         "current": 0, "maxt": 0}))
    for r in rows:
        c = out[r["condition"]][r["role"]]
        c["sessions"] += 1
        for k in ("current_goal", "current", "maxt"):
            c[k] += r[k]
    return {k: dict(v) for k, v in out.items()}


def main() -> int:
    rows = judge_all()
    tab = table(rows)
    print("| condition | sessions | lines, their goal | lines, expected line | the test "
          "alone, expected line |")
    print("|---|---|---|---|---|")
    for cond in partition_goals.CONDITIONS:
        for role in ("validation", "in-sample", "unweighted nodes"):
            c = tab.get(cond, {}).get(role)
            if c:
                n = c["sessions"]
                print(f"| {cond} ({role}) | {n} | {c['current_goal']} | {c['current']} | "
                      f"{c['maxt']} |")
    atomic.write_text(RESULTS, json.dumps({"peers_fixed": provenance.PEERS_FIXED,
                                           "table": tab, "sessions": rows}, indent=1) + "\n")
    for r in rows:
        if r["odd_shape"] and r["role"] == "validation" and not r["maxt"]:
            o = r["odd_shape"]
            print(f"left unnamed: {r['set']}/{r['file']}: the capped node slowest on "
                  f"{o['slowest_on']} of {o['of']} values that use every PU, at "
                  f"{o['rate']:.2f} of its peers' median rate ({o['range'][0]:.2f}-"
                  f"{o['range'][1]:.2f})")
    print(f"{len(rows)} sessions; wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
