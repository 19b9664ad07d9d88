"""The step-down max-statistic peer test (:mod:`placement.judgement.peers.maxt`) under two
nulls, with slow nodes and mixed kinds, beside the acceptance lines made from it and two
comparators, on partitions of 4 to 1,000 nodes resampled from recorded sessions.

The recorded sessions are the unchanged 4-node peer sets that ``benchmarks/
peer_nulls_pool.txt`` names (a fixed pool; of them, the sessions holding the most common
set of values); each node's launches of a value are drawn again with replacement (three
launches, as recorded). Three nulls:

* **exchangeable**: one session drawn; each synthetic node's every measurement (a case's
  values together) from a node of that session drawn at random: nodes that are copies;
* **offsets**: each synthetic node is one recorded (session, node) row, distinct while
  rows last, carrying that session's offset on every value: nodes that differ as separate
  machines do;
* **quiet offsets**: as offsets, from the rows whose node the suite's load line passed
  (its tasks did not wait for a CPU half the time or more). A loaded node fails its run on
  the load line whatever the peer test says, so this null is the one whose false alarms a
  site sees; offsets, which holds the loaded rows too, stays the harder one.

Scenarios: unchanged; the first node 10, 20 or 40 % slower on the values that use every
PU, or 80 % slower (five times the time: a node far out of its peers; drawn from a random
stream of its own, so that adding it changed no other cell's partitions); one measurement
of the first node 40 % slower; mixed partitions whose other kind is 15 % faster with the
same topology (half and half, one node, a quarter) or is a quarter with another topology.
Methods: the test's decision alone (:func:`placement.judgement.peers.partition.decide`);
the partition's lines made with it (:func:`placement.judgement.peers.partition.judge`:
coverage, topology and each value's change beside, at 4 and 16 nodes only, on the first
40 sessions of a cell); a robust z over nodes of the mean log gap on the values that use every PU (Bonferroni over the nodes, one-sided);
Friedman over nodes x those measurements, then each node's rank sum against the rest
(normal approximation, Bonferroni). Each is at a nominal 5 % family-wise level, judges
within kinds, and names a node only when it is at least 10 % slower. Beside them, for the
unchanged and slow scenarios, what a test of the nodes' mean gaps would do that knew the
null exactly (:func:`knowing_the_null`): where it misses a goal too, no test of those gaps
can meet it under that null.

Sessions per cell: ``--sessions`` at 4 and 16 nodes, half at 64, a fifth at 256, a
tenth at 1,000 (a cell of 10 reads a share to within about 0.1).

Goals (exit 1 when one is missed): unchanged, no node named in >= 95 % of sessions at
every size under every null; 20 % slower named alone in >= 80 % at 16 nodes and above,
>= 50 % at 4; 40 % and 80 % slower in >= 95 % at every size; each mixed layout one
outcome in >= 95 % and a node of a kind holding a quarter of the nodes or more named in
<= 5 %; the new test at least as powerful (20 % slower) as the better comparator whose false alarms
are within the nominal level, less two standard errors; 1,000 nodes
judged in <= 2 s (median). Writes ``benchmarks/results/peer_nulls.json`` and the tables of
``docs/reference/peer-nulls.md``.

    python benchmarks/peer_nulls.py [--sessions 100] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from placement.judgement import peers, reading  # noqa: E402
from placement.judgement.peers.partition import PeerValue  # noqa: E402
from placement.judgement.verdict import node_load  # noqa: E402
from placement.util import atomic  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "peer_nulls.json"
PAGE = ROOT / "docs" / "reference" / "peer-nulls.md"
BEGIN, END = "<!-- peer-nulls: benchmarks/peer_nulls.py -->", "<!-- /peer-nulls -->"
#: the recorded sessions drawn from, one run report per line
POOL = ROOT / "benchmarks" / "peer_nulls_pool.txt"
SIZES = (4, 16, 64, 256, 1000)
NULLS = ("exchangeable", "offsets", "quiet offsets")
#: sessions per cell at each size, as a share of --sessions (the largest cost most)
SHARE = {4: 1.0, 16: 1.0, 64: 0.5, 256: 0.2, 1000: 0.1}
CURRENT_SIZES = (4, 16)
#: sessions per cell the lines are made for (their values' description costs more than
#: the decision)
CURRENT_SESSIONS = 40
ALPHA, EFFECT, OTHER_KIND = 0.05, 0.10, 0.15
FP = {"packages": 1, "cores": 2, "pus": 2, "pus_allowed": 2, "numa_nodes": 1}
FP_OTHER = {**FP, "cores": 4, "pus": 4, "pus_allowed": 4}
SCENARIOS = ("unchanged", "slow10", "slow20", "slow40", "slow80", "value40",
             "mixed-half", "mixed-one", "mixed-quarter", "mixed-topology")
METHODS = ("maxt", "lines", "robust_z", "friedman")
#: the methods' columns on the page: theirs, then a test that knew the null
SHOWN = METHODS + ("knowing",)


def pool_files() -> list[Path]:
    """The run reports :data:`POOL` names: a fixed pool, so that recording more sessions
    moves no figure until the pool is extended on purpose (and the page says so)."""
    names = [ln.strip() for ln in POOL.read_text().splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    missing = [n for n in names if not (ROOT / n).is_file()]
    if missing or not names:
        raise SystemExit(f"peer_nulls: {POOL.name} names {len(missing)} missing run "
                         f"report(s) (first: {missing[0]})" if missing
                         else f"peer_nulls: {POOL.name} names no run report")
    return [ROOT / n for n in names]


class Recorded:
    """The recorded sessions: launches (sessions x nodes x values x launches), each value's
    name, side, measurement and whether it uses every PU, and whether the suite's load line
    passed each (session, node) row (:mod:`placement.judgement.verdict.node_load`)."""

    def __init__(self) -> None:
        by_names: dict[tuple, list] = {}
        for p in pool_files():
            report = reading.run_report.load(p)
            load = node_load.of_cases([c.raw for c in report.cases])
            loaded = {x.node for x in load.nodes if x.loaded} if load else set()
            for values, _ in peers.cases.partitions(report).values():
                by_names.setdefault(tuple(v.name for v in values), []).append(
                    (values, loaded))
        commonest = max(by_names.values(), key=len)
        sessions = [v for v, _ in commonest]
        loads = [ld for _, ld in commonest]
        first = sessions[0]
        self.values = first
        self.nodes = sorted(first[0].launches)
        self.launches = np.asarray([[[v.launches[n][:3] for v in s] for n in self.nodes]
                                    for s in sessions], float)
        self.groups = peers.partition.group_numbers(first)
        self.every_pu = np.asarray([v.all_pus for v in first], bool)
        self.higher = np.asarray([v.higher_is_better for v in first], bool)
        #: sessions x nodes: the load line passed the node (its tasks did not wait for a
        #: CPU half the time or more)
        self.quiet = np.asarray([[n not in ld for n in self.nodes] for ld in loads], bool)


def synthetic(rec: Recorded, n: int, null: str, rng: np.random.Generator) -> np.ndarray:
    """``n`` nodes x values x launches drawn from the recorded sessions under ``null``."""
    s_count, k_count, v_count, l_count = rec.launches.shape
    groups = np.unique(rec.groups)
    if null == "exchangeable":
        s = rng.integers(s_count)
        pick = rng.integers(k_count, size=(n, len(groups)))[:, rec.groups]
        rows = rec.launches[s][pick, np.arange(v_count)[None, :]]
    else:
        ok = np.arange(s_count * k_count) if null == "offsets" else \
            np.flatnonzero(rec.quiet.ravel())
        idx = ok[rng.permutation(len(ok))[:n] if n <= len(ok) else rng.integers(len(ok), size=n)]
        rows = rec.launches.reshape(s_count * k_count, v_count, l_count)[idx]
    boot = rng.integers(l_count, size=(n, len(groups), l_count))[:, rec.groups]
    return np.take_along_axis(rows, boot, axis=2)


def scenario(rec: Recorded, x: np.ndarray, name: str) -> tuple[np.ndarray, list[dict], set]:
    """The scenario applied to launches ``x``: launches, fingerprints, the nodes made slow."""
    n = x.shape[0]
    x = x.copy()
    fps = [FP] * n
    slow: set = set()

    def slower(rows, cols, by):
        f = np.where(rec.higher[cols], 1 - by, 1 / (1 - by))
        x[np.ix_(rows, cols)] *= f[None, :, None]

    if name.startswith("slow"):
        slower([0], np.flatnonzero(rec.every_pu), int(name[4:]) / 100)
        slow = {0}
    elif name == "value40":
        g = rec.groups[np.flatnonzero(rec.every_pu)[0]]
        slower([0], np.flatnonzero(rec.groups == g), 0.4)
        slow = {0}
    elif name.startswith("mixed"):
        k = {"mixed-half": n // 2, "mixed-one": 1}.get(name, max(1, n // 4))
        other = list(range(n - k, n))
        slower(other, np.arange(x.shape[1]), -OTHER_KIND)      # 15 % faster
        if name == "mixed-topology":
            fps = [FP] * (n - k) + [FP_OTHER] * k
    return x, fps, slow


def values_of(rec: Recorded, x: np.ndarray) -> list[PeerValue]:
    names = [f"n{i + 1}" for i in range(x.shape[0])]
    return [PeerValue(v.name, v.higher_is_better, dict(zip(names, x[:, j].tolist())),
                      group=v.group, all_pus=v.all_pus) for j, v in enumerate(rec.values)]


def kinds(fps: list[dict]) -> list[np.ndarray]:
    """Rows of each kind (fingerprint)."""
    keys = [tuple(sorted(f.items())) for f in fps]
    return [np.flatnonzero([k == u for k in keys]) for u in dict.fromkeys(keys)]


def pu_matrix(rec: Recorded, x: np.ndarray) -> np.ndarray:
    """Nodes x measurements that use every PU: mean over a measurement's values of the log
    median launch, worse positive."""
    sign = np.where(rec.higher, -1.0, 1.0)
    m = sign * np.log(np.median(x, axis=2))
    cols = [np.flatnonzero((rec.groups == g) & rec.every_pu) for g in np.unique(rec.groups)]
    return np.stack([m[:, c].mean(axis=1) for c in cols if len(c)], axis=1)


def mean_gaps(m: np.ndarray) -> np.ndarray:
    """Each node's mean log gap from the nodes' median over the measurements (worse
    positive)."""
    return (m - np.median(m, axis=0)).mean(axis=1)


def robust_z(m: np.ndarray) -> set:
    """A node's mean log gap over the measurements, as a robust z over the nodes."""
    x = mean_gaps(m)
    mad = 1.4826 * np.median(np.abs(x - np.median(x)))
    z = (x - np.median(x)) / max(mad, 1e-9)
    cut = stats.norm.isf(ALPHA / len(x))
    return {int(i) for i in np.flatnonzero((z > cut) & (x - np.median(x) >= math.log1p(EFFECT)))}


def friedman(m: np.ndarray) -> set:
    """Friedman over nodes x measurements, then each node's rank sum against the rest."""
    n, k = m.shape
    if n < 3 or k < 2 or stats.friedmanchisquare(*m).pvalue > ALPHA:
        return set()
    r = stats.rankdata(m, axis=0).sum(axis=1)
    z = (r - k * (n + 1) / 2) / math.sqrt(k * (n * n - 1) / 12)
    gap = np.median(m - np.median(m, axis=0), axis=1)
    return {int(i) for i in np.flatnonzero((z > stats.norm.isf(ALPHA / n))
                                            & (gap >= math.log1p(EFFECT)))}


def within_kinds(method, m: np.ndarray, fps: list[dict]) -> set:
    out: set = set()
    for rows in kinds(fps):
        if len(rows) >= 3:
            out |= {int(rows[i]) for i in method(m[rows])}
    return out


def judged(rec: Recorded, n: int, null: str, name: str, rng: np.random.Generator,
           lines: bool) -> tuple[dict[str, set | None], float, np.ndarray]:
    """One synthetic session judged by every method: the nodes each named (None: not run),
    the new test's seconds, and each node's mean gap on the values that use every PU (for
    :func:`knowing_the_null`)."""
    x, fps, _ = scenario(rec, synthetic(rec, n, null, rng), name)
    values = values_of(rec, x)
    fpd = {f"n{i + 1}": f for i, f in enumerate(fps)}
    t0 = time.perf_counter()
    verdict = peers.partition.decide(values, fpd)
    seconds = time.perf_counter() - t0
    index = {f"n{i + 1}": i for i in range(n)}
    out: dict[str, set | None] = {"maxt": {index[v] for v in verdict.named}}
    if lines:
        judged_lines = peers.partition.judge(values, "sim:batch", fpd)
        out["lines"] = {index[v] for v in judged_lines.named}
    else:
        out["lines"] = None
    m = pu_matrix(rec, x)
    out["robust_z"] = within_kinds(robust_z, m, fps)
    out["friedman"] = within_kinds(friedman, m, fps)
    return out, seconds, mean_gaps(m)


def cell(rec: Recorded, n: int, null: str, name: str, sessions: int,
         rng: np.random.Generator) -> dict:
    """One size x null x scenario: per method the share of sessions naming no node, the
    slow node alone, another node; for mixed layouts the commonest outcome's share and
    how often a node of a kind holding a quarter of the nodes or more was named."""
    _, fps, slow = scenario(rec, np.ones((n, len(rec.values), 1)), name)
    big = {int(i) for rows in kinds(fps) if len(rows) >= max(2, n / 4) for i in rows}
    if name == "mixed-one":
        big = set(range(n - 1))
    tallies = {m: Counter() for m in METHODS}
    outcomes = {m: Counter() for m in METHODS}
    seconds, gaps = [], []
    for k in range(sessions):
        named, sec, gap = judged(rec, n, null, name, rng,
                                 n in CURRENT_SIZES and k < CURRENT_SESSIONS)
        seconds.append(sec)
        gaps.append(gap)
        for meth, who in named.items():
            if who is None:
                continue
            t = tallies[meth]
            t["sessions"] += 1
            t["none"] += not who
            t["alone"] += bool(slow) and who == slow
            t["other"] += bool(who - slow)
            t["big_kind"] += bool(who & big)
            outcomes[meth][tuple(sorted(who))] += 1
    out = {}
    for meth, t in tallies.items():
        k = t["sessions"]
        if not k:
            continue
        out[meth] = {"sessions": k, "none": t["none"] / k, "alone": t["alone"] / k,
                     "other": t["other"] / k, "big_kind": t["big_kind"] / k,
                     "modal": outcomes[meth].most_common(1)[0][1] / k}
    out["seconds_median"] = float(np.median(seconds))
    out["_gaps"] = np.stack(gaps)
    return out


def knowing_the_null(cells: dict) -> None:
    """What a test that knew the null exactly would do, into each unchanged and slow
    cell (``knowing``): name a node whose mean gap on the values that use every PU is
    beyond what the largest of the partition's healthy nodes reaches in 95 % of the
    unchanged partitions of that null and size (and at least the 10 % margin). No test
    reading the partition alone has the null's distribution, so where even this misses a
    goal, the nodes' own spread under that null is what hides the slow node."""
    healthy = cells["unchanged"]["_gaps"]
    cut = max(float(np.quantile(healthy.max(axis=1), 1 - ALPHA)), math.log1p(EFFECT))
    for name, c in cells.items():
        gaps = c.pop("_gaps")
        if name != "unchanged" and not name.startswith("slow"):
            continue
        named = gaps > cut
        k = len(gaps)
        other = named[:, 1:].any(axis=1) if name != "unchanged" else named.any(axis=1)
        alone = named[:, 0] & ~other if name != "unchanged" else np.zeros(k, bool)
        c["knowing"] = {"sessions": k, "none": float((~named.any(axis=1)).mean()),
                        "alone": float(alone.mean()), "other": float(other.mean()),
                        "cut": cut}


#: scenarios drawn from a random stream of their own: added after the others' figures were
#: published, so that adding them changes none of those partitions
OWN_STREAM = ("slow80",)


def own_stream(seed: int, null: str, n: int, name: str) -> np.random.Generator | None:
    """The scenario's own random stream, or None where it shares the benchmark's."""
    if name not in OWN_STREAM:
        return None
    return np.random.default_rng([seed, NULLS.index(null), n,
                                  OWN_STREAM.index(name)])


def goals(res: dict) -> list[dict]:
    """Each goal, its figure and whether it is met."""
    out = []

    def add(what, figure, met):
        out.append({"goal": what, "figure": figure, "met": bool(met)})

    for null, by_n in res["cells"].items():
        for n, cells in by_n.items():
            n = int(n)
            mx = {s: c["maxt"] for s, c in cells.items()}
            add(f"{null} {n}: unchanged, none named >= 95%", mx["unchanged"]["none"],
                mx["unchanged"]["none"] >= 0.95)
            need = 0.8 if n >= 16 else 0.5
            add(f"{null} {n}: 20% slower named alone >= {need:.0%}", mx["slow20"]["alone"],
                mx["slow20"]["alone"] >= need)
            add(f"{null} {n}: 40% slower named alone >= 95%", mx["slow40"]["alone"],
                mx["slow40"]["alone"] >= 0.95)
            add(f"{null} {n}: 80% slower named alone >= 95%", mx["slow80"]["alone"],
                mx["slow80"]["alone"] >= 0.95)
            for s in SCENARIOS:
                if s.startswith("mixed"):
                    add(f"{null} {n}: {s} one outcome >= 95%, a well-represented kind "
                        "named <= 5%", [mx[s]["modal"], mx[s]["big_kind"]],
                        mx[s]["modal"] >= 0.95 and mx[s]["big_kind"] <= 0.05)
            best = 0.0
            for meth in ("robust_z", "friedman"):
                c = cells["unchanged"][meth]
                if 1 - c["none"] <= ALPHA:
                    best = max(best, cells["slow20"][meth]["alone"])
            k = mx["slow20"].get("sessions", 1)
            se = math.sqrt(max(best * (1 - best), 0.01) / k)
            add(f"{null} {n}: 20% slower, at least the better calibrated comparator",
                [mx["slow20"]["alone"], best], mx["slow20"]["alone"] >= best - 2 * se)
    t = res["seconds_at_1000"]
    if t is not None:
        add("1,000 nodes judged in <= 2 s (median)", t, t <= 2.0)
    return out


def page_block(res: dict) -> str:
    """The reference page's tables, generated from the results."""
    rows = [BEGIN]
    for null, by_n in res["cells"].items():
        rows += ["", f"**Null: {null}.** Share of sessions; per method: no node named / the "
                 "slow node named alone / another node named (mixed: the commonest outcome's "
                 "share / a node of a kind of a quarter or more named). Knowing the null: a node "
                 "named when its mean gap on the values that use every PU is beyond the "
                 "largest healthy node's in 95 % of this null's unchanged partitions of the "
                 "size: a test of the mean gaps that knew the null exactly, which none does; where "
                 "it misses too, the healthy nodes' own spread hides the slow node from any "
                 "test of the mean gaps).", "",
                 "| nodes | scenario | sessions (lines) | the test | its lines | robust z | "
                 "Friedman | knowing the null |", "|---:|---|---:|---|---|---|---|---|"]
        for n, cells in by_n.items():
            for s, c in cells.items():
                def fig(meth):
                    x = c.get(meth)
                    if x is None:
                        return "-"
                    if s.startswith("mixed"):
                        return f"{x['modal']:.2f} / {x['big_kind']:.2f}"
                    return f"{x['none']:.2f} / {x['alone']:.2f} / {x['other']:.2f}"
                cur = c.get("lines", {}).get("sessions", 0)
                rows.append(f"| {n} | {s} | {c['maxt']['sessions']} ({cur}) | "
                            + " | ".join(fig(m) for m in SHOWN) + " |")
    missed = [g for g in res["goals"] if not g["met"]]
    at = res["seconds_at_1000"]
    rows += ["", f"New test, 1,000 nodes: **{at if at is None else round(at, 2)} s** "
             f"median per partition; whole benchmark {res['seconds_total']:.0f} s on "
             f"{res.get('cpus', '?')} CPUs shared with other work. Goals met: "
             f"**{len(res['goals']) - len(missed)} of {len(res['goals'])}**. Cells of 20 "
             "sessions or fewer (256 and 1,000 nodes) read a share to within about 0.1.", ""]
    if missed:
        rows += ["Missed:", ""] + [f"- {g['goal']}: {g['figure']}" for g in missed]
    rows.append(END)
    return "\n".join(rows)


def _rounded(x):
    if isinstance(x, float):
        return round(x, 4)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_rounded(v) for v in x]
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=100, help="sessions per cell at 4-64 "
                    "nodes (64 nodes: half, 256: a fifth, 1,000: a tenth)")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.sessions < 5 or min(args.sizes) < 4:
        print("peer_nulls: --sessions needs 5 or more and --sizes 4 nodes or more",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    rec = Recorded()
    rng = np.random.default_rng(args.seed)
    cells: dict = {}
    for null in NULLS:
        for n in args.sizes:
            k = max(5, round(args.sessions * SHARE.get(n, 0.2)))
            cells.setdefault(null, {})[str(n)] = {
                s: cell(rec, n, null, s, k, own_stream(args.seed, null, n, s) or rng)
                for s in SCENARIOS}
            c = cells[null][str(n)]
            knowing_the_null(c)
            print(f"{null:12s} {n:5d} nodes: unchanged none {c['unchanged']['maxt']['none']:.2f}"
                  f", 20% alone {c['slow20']['maxt']['alone']:.2f}, 40% alone "
                  f"{c['slow40']['maxt']['alone']:.2f} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)
    at = [c["unchanged"]["seconds_median"] for null in cells.values()
          for n, c in null.items() if n == "1000"]
    res = {"source": str(POOL.relative_to(ROOT)), "cpus": os.cpu_count(),
           "sessions_recorded": int(rec.launches.shape[0]),
           "rows_quiet": int(rec.quiet.sum()), "rows": int(rec.quiet.size),
           "values": len(rec.values), "measurements": int(len(np.unique(rec.groups))),
           "every_pu_measurements": int(len(np.unique(rec.groups[rec.every_pu]))),
           "seconds_at_1000": float(np.median(at)) if at else None, "cells": cells}
    res["goals"] = goals(res)
    res["seconds_total"] = time.perf_counter() - t0
    atomic.write_text(RESULTS, json.dumps(_rounded(res), indent=1) + "\n")
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(res))
    missed = [g for g in res["goals"] if not g["met"]]
    for g in missed:
        print(f"MISSED {g['goal']}: {g['figure']}")
    print(f"{len(res['goals']) - len(missed)} of {len(res['goals'])} goals met in "
          f"{res['seconds_total']:.0f} s; wrote {RESULTS}, {PAGE}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
