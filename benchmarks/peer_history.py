"""The live 4-node partition's stored sessions judged against the partition's own earlier
unchanged sessions (those of earlier sets: :func:`judge`), beside the peer verdict's
one-session test on the same sessions.

Why: one session of a small partition cannot tell a slow node from the spread healthy
nodes show between themselves. On this host the slowest healthy node of an unchanged
session can measure as far behind its peers as a node capped at 70 % of its CPUs does
(the table's second part), and the one-session test, which must estimate that spread
from the four nodes it judges, leaves such capped nodes unnamed. The
*knowing the null* column of ``benchmarks/peer_nulls.py`` shows what a test that knew
the healthy spread would do; here the null is read from the partition's own recorded
sessions, as a site would have it after some weeks of acceptance runs.

The statistic of a session: its largest node gap ``T`` (over the values that use every
PU, the median of the node's log gap to its peers' median; slower positive). Its
p-value: ``(1 + the earlier unchanged sessions whose T is at least this one's) / (their
count + 1)``. Where the partition's healthy sets are exchangeable over time, a healthy
session gets ``p <= alpha`` with chance at most ``alpha``,
whatever the nodes' spread: a conformal p-value. A session names its largest node when
``p <= alpha`` and that node is at least 10 % slower. A session is counted when ``1 /
alpha - 1`` earlier unchanged sessions or more exist (a smaller p cannot be reached
before). Conditions as ``benchmarks/partition_goals.py`` (capped sets only where every
node had the largest CPU weight; ``pu1of2`` left out: its goal is the topology line);
``twoodd`` counts a session whose named node is one of the two capped ones.

Windows: sessions started after each fixing of the peer verdict
(``benchmarks/rules_provenance.yaml``), and before the first; the history test was fixed
after all of them, so none of its windows is a validation of it. Beside it, the chance
that a test of exactly 5 % false alarms meets the unchanged goal (19 of 20) in a window of
20, and in each window's own count of unchanged sessions: a binomial figure, the same for
any test.

Writes ``benchmarks/results/peer_history.json`` and its table in
``docs/reference/peer-nulls.md``. No goal of its own: it measures what the data allow.

    python benchmarks/peer_history.py
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import page_blocks  # noqa: E402
import partition_goals  # noqa: E402
import peer_sessions_maxt  # noqa: E402
import provenance  # noqa: E402
from placement.judgement import peers  # noqa: E402
from placement.util import atomic  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "peer_history.json"
PAGE = ROOT / "docs" / "reference" / "peer-nulls.md"
BEGIN, END = "<!-- peer-history: benchmarks/peer_history.py -->", "<!-- /peer-history -->"
ALPHAS = (0.05, 0.01)
EFFECT = 0.10
JUDGED = ("unchanged", "capped70", "capped50", "twoodd")


def sessions() -> list[dict]:
    """Every stored session of the judged conditions, oldest first: its largest node gap,
    that node, and whether the one-session test gave the expected line."""
    out = []
    for st in partition_goals.all_sessions():
        cond = st.cond
        if cond.name not in JUDGED or not st.weighted:
            continue
        values, fps = st.partition()
        nodes, _, gaps = peer_sessions_maxt.every_pu_gaps(values)
        med = np.nanmedian(gaps, axis=1) if gaps.size else np.zeros(0)
        i = int(np.nanargmax(med)) if np.isfinite(med).any() else -1
        one = peers.partition.decide(values, fps)
        odd = cond.odd[0] if len(cond.odd) == 1 and cond.odd[0] in nodes else None
        out.append({"set": st.set, "file": st.path.name, "condition": cond.name,
                    "odd": list(cond.odd), "started": st.started.isoformat(),
                    "window": st.window,
                    "T": float(med[i]) if i >= 0 else None,
                    "largest": nodes[i] if i >= 0 else None,
                    "odd_gap": float(med[nodes.index(odd)]) if odd else None,
                    "one_session": peer_sessions_maxt.expected_maxt(cond, one, set())})
    return sorted(out, key=lambda s: s["started"])


def judge(rows: list[dict], alpha: float) -> None:
    """Each session's conformal p against the unchanged sessions of earlier sets, and
    whether the history test gave the expected line (``None``: too few of them). Why
    earlier sets, not the sessions just before: a set's sessions run back to back on one
    start of the test cluster and share its state, so the set, not the session, is what is
    exchangeable over time."""
    done: list[tuple[str, float]] = []
    need = math.ceil(1 / alpha) - 1
    for s in rows:
        key = f"history_{alpha:g}"
        earlier = [t for name, t in done if name != s["set"]]
        if s["T"] is None or len(earlier) < need:
            s[key] = None
        else:
            p = (1 + sum(t >= s["T"] for t in earlier)) / (len(earlier) + 1)
            named = p <= alpha and -math.expm1(-s["T"]) >= EFFECT
            s[key] = (not named) if s["condition"] == "unchanged" else \
                bool(named and s["largest"] in s["odd"])
        if s["condition"] == "unchanged" and s["T"] is not None:
            done.append((s["set"], s["T"]))


def table(rows: list[dict]) -> dict:
    """Per condition and window: sessions counted, met by each test on the same sessions."""
    out: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    for s in rows:
        for alpha in ALPHAS:
            key = f"history_{alpha:g}"
            if s[key] is None:
                continue
            c = out[s["condition"]][str(s["window"])]
            c[f"sessions_{alpha:g}"] += 1
            c[key] += s[key]
            if alpha == ALPHAS[0]:      # the one-session test beside the first level's count
                c[f"one_session_{alpha:g}"] += s["one_session"]
    return json.loads(json.dumps(out))


def page_block(tab: dict, rows: list[dict]) -> str:
    """The page's table: per condition and window, the sessions each test met."""
    windows = ["0", *(str(i) for i in range(1, len(provenance.PEERS_FIXINGS) + 1))]
    names = ["before the first fixing", *(f"window {w}" for w in windows[1:])]
    out = ["| condition | test | " + " | ".join(names) + " |",
           "|---|---|" + "---:|" * len(windows)]
    for cond in JUDGED:
        for label, key in (("one session (the NODES lines' decision)", "one_session_0.05"),
                           ("against its history, 5 %", "history_0.05"),
                           ("against its history, 1 %", "history_0.01")):
            alpha = key.rsplit("_", 1)[1]
            cells = []
            for w in windows:
                c = tab.get(cond, {}).get(w, {})
                n = c.get(f"sessions_{alpha}", 0)
                cells.append(f"{c.get(key, 0)} of {n}" if n else "-")
            out.append(f"| {cond} | {label} | " + " | ".join(cells) + " |")
    unchanged = [s["T"] for s in rows if s["condition"] == "unchanged" and s["T"] is not None]
    out += ["", "Every session of each window, counted above or not (a node's rate against its "
            "peers' median on the values that use every PU):", "",
            "| window | unchanged: the largest node, median | its lowest | capped70: the "
            "capped node, highest | unchanged sessions | a test of exactly 5 % meets the "
            "goal in them |", "|---|---:|---:|---:|---:|---:|"]
    for w, name in zip(windows, names):
        lo = [s["T"] for s in rows if s["window"] == int(w) and s["T"] is not None
              and s["condition"] == "unchanged"]
        hi = [s["odd_gap"] for s in rows if s["window"] == int(w)
              and s["odd_gap"] is not None and s["condition"] == "capped70"]
        if lo and hi:
            out.append(f"| {name} | {math.exp(-float(np.median(lo))):.2f} | "
                       f"{math.exp(-max(lo)):.2f} | {math.exp(-min(hi)):.2f} | {len(lo)} | "
                       f"{binomial_meets(len(lo)):.0%} |")
    out += ["", f"{len(unchanged)} unchanged sessions in all; their largest node at "
            f"{math.exp(-max(unchanged)):.2f} to {math.exp(-min(unchanged)):.2f} of its "
            f"peers' rate (95 % of sessions above "
            f"{math.exp(-float(np.quantile(unchanged, 0.95))):.2f}). A test of exactly 5 % "
            f"false alarms meets the unchanged goal (19 of 20) in {binomial_meets(20):.0%} "
            "of windows of 20; one of exactly 1 % in "
            f"{binomial_meets(20, 0.01):.0%}."]
    return "\n".join(out)


def binomial_meets(n: int, alpha: float = 0.05) -> float:
    """The chance that ``n`` sessions, each a false alarm with chance ``alpha``, meet the
    unchanged goal (no node named in 95 % of them: at most ``n - ceil(0.95 n)`` false
    alarms, one of 20 or of 22, none of 19)."""
    share = partition_goals.CONDITIONS["unchanged"].share
    allowed = n - math.ceil(share * n - 1e-9)
    return sum(math.comb(n, k) * alpha ** k * (1 - alpha) ** (n - k)
               for k in range(allowed + 1))


def main() -> int:
    rows = sessions()
    for alpha in ALPHAS:
        judge(rows, alpha)
    tab = table(rows)
    block = page_block(tab, rows)
    print(block)
    atomic.write_text(RESULTS, json.dumps({"alphas": ALPHAS, "effect": EFFECT,
                                           "peers_fixings": provenance.PEERS_FIXINGS,
                                           "table": tab, "sessions": rows}, indent=1) + "\n")
    if not page_blocks.replace(PAGE, BEGIN, END, f"{BEGIN}\n{block}\n{END}"):
        print(f"{PAGE} lacks the markers {BEGIN} and {END}: its table not written")
        return 1
    print(f"{len(rows)} sessions; wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
