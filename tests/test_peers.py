"""The peer verdict on fixed samples, its numbers checked against NumPy and SciPy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from placement.judgement import verdict, peers

WHERE = "testnodes:batch"


def _fixed(n_nodes: int = 6, n_vals: int = 7, seed: int = 3) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(n_nodes, n_vals))
    m[2, 1] = np.nan            # a node that lacks a value
    m[:, 5] = np.nan            # a value no node has
    m[:4, 6] = np.nan           # a value on two nodes only
    return m


def _peers_of(m: np.ndarray, i: int, j: int) -> list[float]:
    return [m[r, j] for r in range(m.shape[0]) if r != i and np.isfinite(m[r, j])]


def test_leave_one_out_median_and_variance_match_numpy():
    m = _fixed()
    med = peers.leave_one_out.loo_median(m)
    var, df = peers.leave_one_out.loo_variance(m)
    for i, j in itertools.product(range(m.shape[0]), range(m.shape[1])):
        col = _peers_of(m, i, j)
        if not np.isfinite(m[i, j]) or len(col) < 2:
            assert np.isnan(med[i, j]) and np.isnan(var[i, j]), (i, j)
            continue
        assert med[i, j] == pytest.approx(np.median(col), abs=1e-12)
        assert var[i, j] == pytest.approx(np.var(col, ddof=1), abs=1e-12)
        assert df[i, j] == len(col) - 1


def test_value_test_is_the_moderated_leave_one_out_t():
    rng = np.random.default_rng(5)
    # values of unlike spreads: a finite prior degrees of freedom
    m = rng.normal(size=(5, 12)) * np.geomspace(0.005, 0.3, 12)[None, :]
    w, n = np.zeros(m.shape), np.ones(m.shape)
    d, p = peers.partition.value_tests(m, w, n, np.ones(5, bool))
    i, j = 1, 4
    col = _peers_of(m, i, j)
    s2, dfs = peers.leave_one_out.loo_variance(m)
    s0, d0 = verdict.moderation.fit_f_dist(s2[i], dfs[i])
    assert math.isfinite(d0)
    post = (d0 * s0 + 3 * np.var(col, ddof=1)) / (d0 + 3)
    t = (m[i, j] - np.median(col)) / math.sqrt(post * (1 + math.pi / 8))
    assert d[i, j] == pytest.approx(m[i, j] - np.median(col))
    assert p[i, j] == pytest.approx(2 * stats.t.sf(abs(t), d0 + 3), rel=1e-9)


def _session(slow=(), factor=1.0, nodes=4, values=16, seed=0):
    """Times (lower is better) of ``values`` values on ``nodes`` nodes, 3 launches each,
    nodes 3 % apart per value, launches 1 %; the ``slow`` nodes ``factor`` times slower."""
    rng = np.random.default_rng(seed)
    out = []
    for j in range(values):
        base = rng.uniform(1, 100)
        launches = {}
        for i in range(1, nodes + 1):
            f = factor if f"n{i}" in slow else 1.0
            launches[f"n{i}"] = list(base * f * np.exp(rng.normal(0, 0.03)
                                                       + rng.normal(0, 0.01, 3)))
        out.append(peers.partition.PeerValue(f"v{j}", False, launches))
    return out


def test_an_unchanged_partition_names_no_node():
    j = peers.partition.judge(_session(), WHERE)
    assert not j.fails
    assert j.lines() == [f"NODES {WHERE}: 4 nodes alike on 16 values (no node stands apart)"]


def test_a_slow_node_is_named_in_one_line():
    j = peers.partition.judge(_session(slow=("n3",), factor=1 / 0.7), WHERE)
    assert j.named == ["n3"] and j.fails and not j.no_majority
    assert j.lines() == [f"NODES {WHERE}: n3 slower than its 3 peers on 16 of 16 values "
                         "(median -30%)"]
    assert j.change[2].max() < -0.2 and (j.called[2] == 1).all()


def test_a_node_slower_on_a_few_values_only_is_marked_on_those_values():
    """A node twice as slow on 4 values of 12 and middling on the rest, none of them
    marked as using every PU: the test of nodes weighs every measurement alike and names
    no node for a third of its values; the values themselves are marked (the partition
    page shows them)."""
    vals = _session(values=12, seed=5)
    few = []
    for j, v in enumerate(vals):
        runs = dict(v.launches)
        if j < 4:
            runs["n3"] = [x * 2.0 for x in runs["n3"]]
        few.append(peers.partition.PeerValue(v.name, False, runs))
    j = peers.partition.judge(few, WHERE)
    assert not j.named and not j.fails, j.lines()
    assert list(np.flatnonzero(j.called[2] == 1)) == [0, 1, 2, 3]


def test_values_alone_need_three_peers():
    """Once n3 is named, the three left judge each other with two peers each: a node
    faster on 2 values of 12 is not named by its values alone there."""
    vals = _session(values=12, seed=5)
    out = []
    for j, v in enumerate(vals):
        runs = {n: list(r) for n, r in v.launches.items()}
        runs["n3"] = [x * 2.0 for x in runs["n3"]]
        if j < 2:
            runs["n1"] = [x / 2.0 for x in runs["n1"]]
        out.append(peers.partition.PeerValue(v.name, False, runs))
    j = peers.partition.judge(out, WHERE)
    assert j.named == ["n3"] and not j.no_majority, j.lines()


def test_one_value_alone_names_no_node():
    """One called value is not enough without the rank test (PEER_VALUES_ALONE is 2)."""
    vals = _session(values=12, seed=5)
    one = [peers.partition.PeerValue(v.name, False, {**v.launches, "n3": [x * 2.0 for x in
                                                                  v.launches["n3"]]})
           if j == 0 else v for j, v in enumerate(vals)]
    assert not peers.partition.judge(one, WHERE).fails


def test_a_faster_rate_is_better():
    vals = [peers.partition.PeerValue(v.name, True, {n: [1 / x for x in r] for n, r in
                                           v.launches.items()})
            for v in _session(slow=("n2",), factor=2.0)]
    assert peers.partition.judge(vals, WHERE).lines()[0].startswith(
        f"NODES {WHERE}: n2 slower than its 3 peers on 16 of 16 values (median -50%)")


def test_two_odd_nodes_of_four_have_no_majority():
    j = peers.partition.judge(_session(slow=("n3", "n4"), factor=1.43), WHERE)
    assert j.fails and j.no_majority
    assert f"NODES {WHERE}: no majority to judge by: n3, n4 slower than n1, n2 (no " \
           "group of more than half of the 4 nodes)" in j.lines()


def test_two_nodes_slower_on_most_values_are_no_majority():
    """Two odd nodes of four, slower on 9 values of 12: each one's peers hold the other, so
    neither stands apart alone; the half they make does."""
    vals = _session(values=12, seed=2)
    two = [peers.partition.PeerValue(v.name, False, {n: [x * (2.0 if n in ("n3", "n4") and j < 9
                                                    else 1.0) for x in r]
                                           for n, r in v.launches.items()})
           for j, v in enumerate(vals)]
    j = peers.partition.judge(two, WHERE)
    assert j.fails and j.no_majority, j.lines()
    assert f"NODES {WHERE}: no majority to judge by: n3, n4 slower than n1, n2 (no group of " \
           "more than half of the 4 nodes)" in j.lines(), j.lines()


def test_a_topology_that_differs_gets_its_line():
    fp = {n: {"pus": 2, "pus_allowed": 2, "numa_nodes": 1} for n in ("n1", "n2", "n3", "n4")}
    fp["n2"] = {**fp["n2"], "pus_allowed": 1}
    j = peers.partition.judge(_session(), WHERE, fp)
    assert j.named == ["n2"] and j.fails
    assert j.lines() == [f"NODES {WHERE}: n2 topology differs from its 3 peers: "
                         "1 PU allowed of 2"]


def test_two_nodes_are_too_few():
    j = peers.partition.judge(_session(nodes=2), WHERE)
    assert not j.fails and j.lines()[0].startswith(f"NOTE {WHERE}: 2 node(s)")


def test_false_alarms_stay_under_the_level():
    """Exchangeable nodes: the share of unchanged partitions with any node named stays
    under PEER_ALPHA (it follows from the rank test's construction)."""
    named = sum(peers.partition.judge(_session(seed=s), WHERE).fails for s in range(100))
    assert named <= 100 * peers.partition.PEER_ALPHA


def test_memory_rounded_near_a_half_is_the_same_topology():
    """Alike nodes whose memory, in whole GiB, flips between 8 and 9 are alike; a node with
    half of it is not."""
    fp = {n: {"pus": 2, "numa_memory_gib": m} for n, m in
          (("n1", 9), ("n2", 9), ("n3", 8), ("n4", 8))}
    assert peers.topology.topology_diffs(fp, list(fp)) == ([], False)
    fp["n4"] = {"pus": 2, "numa_memory_gib": 4}
    (diff,), split = peers.topology.topology_diffs(fp, list(fp))
    assert diff.node == "n4" and not split


# ---- the values that use every PU (a node short of CPU time) ----

def _every_pu_session(gap: float, all_pus: bool = True, values: int = 8) -> list:
    """``values`` values that use every PU on which n3 is the slowest node, ``gap`` above
    the slowest of its peers, which sit 1.0, 1.3 and 1.6 apart (too wide for any value to
    be called); then as many single-thread values where n3 is one of the middle nodes."""
    out = []
    for j in range(values):
        base = 10.0 + j
        peers_at = [1.0, 1.3, 1.6][j % 3:] + [1.0, 1.3, 1.6][:j % 3]
        at = dict(zip(("n1", "n2", "n4"), peers_at)) | {"n3": 1.6 * (1 + gap)}
        out.append(peers.partition.PeerValue(f"pu{j}", False, {n: [base * f] * 3 for n, f in at.items()},
                                   all_pus=all_pus))
    for j in range(values):
        spread = [1.0, 1.3, 1.6][j % 3:] + [1.0, 1.3, 1.6][:j % 3]
        at = dict(zip(("n1", "n2", "n4"), spread)) | {"n3": 1.2 + 0.2 * (j % 2)}
        out.append(peers.partition.PeerValue(f"one{j}", False, {n: [5.0 * f] * 3 for n, f in at.items()}))
    return out


def test_a_node_slowest_where_every_pu_is_busy_is_named_on_those_values():
    """A CPU-capped node: slowest on every value that uses every PU, middling on the
    single-thread ones, no value called: named on its ranks over the first alone."""
    j = peers.partition.judge(_every_pu_session(gap=0.1), WHERE)
    assert j.named == ["n3"] and j.fails and not j.no_majority, j.lines()
    assert j.lines() == [f"NODES {WHERE}: n3 slower than its 3 peers on 8 of 8 values that "
                         "use every PU (median -26%)"]


def test_slowest_on_half_its_values_is_named_over_all_values():
    """Without knowing which values use every PU, a node a third slower on half its values
    and middling on the rest is still named, over all values."""
    j = peers.partition.judge(_every_pu_session(gap=0.1, all_pus=False), WHERE)
    assert j.named == ["n3"] and j.odd[0].scope == "", j.lines()


def test_slowest_by_less_than_the_effect_is_not_named():
    """Slowest on every value that uses every PU, by 2 % in the median against its peers'
    median: a real but small difference (PEER_EFFECT), not named."""
    vals = [peers.partition.PeerValue(v.name, False, {n: [x * (1.02 / 1.6 * 1.3 if n == "n3" else 1)
                                                for x in r] for n, r in v.launches.items()},
                            all_pus=v.all_pus) if v.all_pus else v
            for v in _every_pu_session(gap=0.001)]
    assert not peers.partition.judge(vals, WHERE).fails


def test_false_alarms_stay_under_the_level_with_values_that_use_every_pu():
    """Exchangeable nodes, half the values using every PU: the extra rank tests share the
    level, so an unchanged partition is still named at most PEER_ALPHA of the time."""
    named = 0
    for s in range(100):
        vals = [peers.partition.PeerValue(v.name, False, v.launches, all_pus=k % 2 == 0)
                for k, v in enumerate(_session(seed=s))]
        named += peers.partition.judge(vals, WHERE).fails
    assert named <= 100 * peers.partition.PEER_ALPHA


def test_two_nodes_apart_by_a_hair_are_no_half():
    """Two unchanged nodes that rank 3rd and 4th on every value, 1 % from the others: their
    half's ranks stand apart, its change does not reach PEER_EFFECT: no line."""
    out = []
    for j in range(12):
        at = {"n1": 1.0, "n2": 1.001, "n3": 1.01, "n4": 1.011}
        if j % 2:
            at = {"n1": 1.001, "n2": 1.0, "n3": 1.011, "n4": 1.01}
        out.append(peers.partition.PeerValue(f"v{j}", False, {n: [3.0 * f] * 3 for n, f in at.items()}))
    assert not peers.partition.judge(out, WHERE).fails


def test_a_recorded_session_knows_which_values_use_every_pu():
    """From the run report: OMP_NUM_THREADS against the node's PUs allowed. A capped-node
    session: the matmul cases, the write at full and NPB use both PUs of each node."""
    vals = _recorded("capped70-20261202T1226/run-20261202T122637")
    every = {v.name.split()[0] + " " + v.name.split()[1] for v in vals if v.all_pus}
    assert every == {"NodeMatmulCheck affinity=compact", "NodeMatmulCheck affinity=none",
                     "NodeMatmulCheck affinity=scatter", "NodeMemWriteCheck affinity=scatter",
                     "NodeNpbCheck benchmark=CG", "NodeNpbCheck benchmark=EP"}
    assert not any(v.all_pus for v in vals if "threads=1 " in v.name)


# ---- the summed values' permutation test (a node slower where every PU is busy) ----

def _recorded(session: str) -> list:
    """The values of one recorded session, ``SET/run-START``."""
    from pathlib import Path

    from placement.judgement import peers, reading
    run = Path(__file__).parent / "fixtures/peers" / f"{session}+0000.json"
    ((vals, _),) = peers.cases.partitions(reading.run_report.load(run)).values()
    return vals


def test_a_capped_node_second_on_one_value_is_named_by_its_scores():
    """A recorded session (n3 capped at 70 %): fourth of four on 6 of the 8 values that use
    every PU, second and third on two, -37 %. A rank sum over those values (p 0.0025)
    missed the level; its score, weighing how far behind, stands out of every dealing."""
    vals = _recorded("capped70-20261202T1527/run-20261202T153108")
    j = peers.partition.judge(vals, WHERE)
    assert j.named == ["n3"] and j.odd[0].slower, j.lines()
    assert j.odd[0].p <= peers.partition.PEER_ALPHA


def test_an_unchanged_node_a_little_behind_everywhere_is_not_named():
    """A recorded unchanged session: n4 behind its peers on 7 of 8 values that use every
    PU by a few percent (a rank test over those values called it): under the margin."""
    vals = _recorded("unchanged-20261202T1521/run-20261202T152123")
    j = peers.partition.judge(vals, WHERE)
    assert not j.fails, j.lines()


# ---- coverage: a node judged on its usable values only ----

def _with(vals: list, node: str, f) -> list:
    """``vals`` with every launch of ``node`` replaced by ``f(launch, value index)``."""
    return [peers.partition.PeerValue(v.name, v.higher_is_better,
                                      {**v.launches, node: [f(x, k) for x in v.launches[node]]},
                                      v.group, v.all_pus) for k, v in enumerate(vals)]


@pytest.mark.parametrize("bad", [math.nan, math.inf, 0.0, -1.0])
def test_a_node_with_no_usable_value_is_named_not_judged_and_no_peer(bad):
    """NaN, inf, 0 or negative everywhere: no value to judge the node on. It is named on its
    own line, leaves a gap (the run is incomplete), and is no peer of the node named."""
    vals = _with(_session(slow=("n3",), factor=1 / 0.7, values=12), "n4", lambda x, k: bad)
    j = peers.partition.judge(vals, WHERE)
    assert j.judged == ["n1", "n2", "n3"] and j.measured == ["n1", "n2", "n3"]
    assert j.lines()[0] == f"NODES {WHERE}: n4 not judged: 0 usable values of 12 its peers had"
    assert j.lines()[1].startswith(f"NODES {WHERE}: n3 slower than its 2 peers on 12 of 12 "
                                   "values"), j.lines()
    assert j.gaps == [f"n4 of {WHERE} not judged by its peers (0 usable values)"]
    alike = peers.partition.judge(_with(_session(values=12), "n4", lambda x, k: bad), WHERE)
    assert alike.lines() == [
        f"NODES {WHERE}: n4 not judged: 0 usable values of 12 its peers had",
        f"NODES {WHERE}: 3 nodes alike on 12 values (no node stands apart)"]
    assert alike.gaps and not alike.fails


def test_every_node_unusable_is_judged_by_none():
    vals = _session(values=12)
    for node in ("n1", "n2", "n3", "n4"):
        vals = _with(vals, node, lambda x, k: math.nan)
    j = peers.partition.judge(vals, WHERE)
    assert j.judged == [] and len(j.gaps) == 4 and not j.measured
    assert j.lines()[-1] == (f"NOTE {WHERE}: 0 of 4 nodes judged: the peer verdict needs 3 or "
                             "more measured in one session")
    assert not any("alike" in ln for ln in j.lines())


def test_a_node_with_under_half_of_its_peers_values_is_not_judged():
    """5 usable values of the 12 its peers had: not judged; 8 of 12: judged on its 8, and
    the line says so."""
    vals = _session(values=12)
    j = peers.partition.judge(_with(vals, "n4", lambda x, k: x if k < 5 else math.nan), WHERE)
    assert j.lines()[0] == f"NODES {WHERE}: n4 not judged: 5 usable values of 12 its peers had"
    assert j.gaps
    j = peers.partition.judge(_with(vals, "n4", lambda x, k: x if k < 8 else math.nan), WHERE)
    assert j.lines() == [f"NODES {WHERE}: 4 nodes alike on 12 values, n4 on 8 (no node stands "
                         "apart)"] and not j.gaps


def test_a_node_known_by_its_fingerprint_alone_is_not_judged():
    fp = {n: {"pus": 2, "pus_allowed": 2} for n in ("n1", "n2", "n3", "n4", "n5")}
    j = peers.partition.judge(_session(), WHERE, fp)
    assert j.nodes[-1] == "n5" and [x.node for x in j.not_judged] == ["n5"]
    assert j.lines()[0] == f"NODES {WHERE}: n5 not judged: 0 usable values of 16 its peers had"
    assert j.lines()[1] == f"NODES {WHERE}: 4 nodes alike on 16 values (no node stands apart)"


def test_two_nodes_apart_by_more_than_the_margin_get_a_line():
    """Which of two is odd cannot be told: a line, a gap (incomplete), no node named."""
    j = peers.partition.judge(_session(nodes=2, slow=("n2",), factor=10.0), WHERE)
    assert j.lines() == [f"NODES {WHERE}: n1 and n2 differ: n2 -90% against n1 in the median "
                         "of 16 values; which one is odd cannot be told from two"]
    assert not j.fails and not j.named and j.undecided == ["n1", "n2"] and j.gaps


def test_two_nodes_within_the_margin_are_the_note():
    j = peers.partition.judge(_session(nodes=2), WHERE)
    assert j.lines() == [f"NOTE {WHERE}: 2 node(s): the peer verdict needs 3 or more "
                         "measured in one session; the two are within 10% of each other in "
                         "the median of 16 values"]
    assert not j.gaps and not j.undecided and j.measured == ["n1", "n2"]


def test_one_odd_node_of_three_leaves_a_majority_of_two():
    j = peers.partition.judge(_session(nodes=3, slow=("n3",), factor=1 / 0.7), WHERE)
    assert j.named == ["n3"] and j.fails and not j.no_majority and not j.undecided
    assert j.lines() == [f"NODES {WHERE}: n3 slower than its 2 peers on 16 of 16 values "
                         "(median -31%)"]


def test_one_odd_node_of_three_whose_two_peers_differ_is_no_majority():
    """n3 three times slower; n2 20 % slower than n1 on 10 values of 16, 3 % faster on the
    rest: n3 named, and the two left differ by more than the margin."""
    rng = np.random.default_rng(0)
    vals = []
    for j in range(16):
        base = rng.uniform(1, 100)
        at = {"n1": 1.0, "n2": 1.2 if j < 10 else 0.97, "n3": 3.0}
        vals.append(peers.partition.PeerValue(f"v{j}", False, {
            n: list(base * f * np.exp(rng.normal(0, 0.01, 3))) for n, f in at.items()}))
    j = peers.partition.judge(vals, WHERE)
    assert j.named == ["n3"] and j.no_majority and j.undecided == ["n1", "n2"], j.lines()
    assert j.lines()[1].startswith(f"NODES {WHERE}: n1 and n2 differ: n2 -")
    assert j.lines()[2] == (f"NODES {WHERE}: no majority to judge by: n3 slower than n1, n2, "
                            "which differ from each other (no group of more than half of the "
                            "3 nodes)")


# ---- a value counts only when measured on two nodes or more ----

UNCHANGED = "unchanged-20261202T1521/run-20261202T152123"
PLAIN_NOTE = (f"NOTE {WHERE}: no value was measured on two nodes (a run without "
              "--distribute): no peer verdict")


def _on_one_node(vals: list, shared=lambda k: False) -> list:
    """``vals`` with value ``k`` left on one node alone (``n1`` .. ``n4`` in turn, as a
    run without ``--distribute`` lands its cases), unless ``shared(k)``."""
    out = []
    for k, v in enumerate(vals):
        node = f"n{k % 4 + 1}"
        runs = v.launches if shared(k) else {node: v.launches[node]}
        out.append(peers.partition.PeerValue(v.name, v.higher_is_better, runs, v.group,
                                             v.all_pus))
    return out


def test_no_value_on_two_nodes_is_no_verdict_but_a_note():
    """A recorded session with each value on one node: nothing to compare, so no node is
    alike, odd or not judged, and nothing fails or leaves a gap; one node slowed twice
    changes nothing, its fingerprint differing neither."""
    vals = _on_one_node(_recorded(UNCHANGED))
    j = peers.partition.judge(vals, WHERE)
    assert j.lines() == [PLAIN_NOTE]
    assert j.unshared and not j.fails and not j.gaps and j.judged == [] and not j.measured
    slow = _on_one_node(_with(_recorded(UNCHANGED), "n3", lambda x, k: 2 * x))
    fps = {n: {"pus": 2, "pus_allowed": 2} for n in ("n1", "n2", "n3", "n4")}
    fps["n2"] = {"pus": 2, "pus_allowed": 1}
    assert peers.partition.judge(slow, WHERE, fps).lines() == [PLAIN_NOTE]
    (part,) = peers.partition.judge(vals, WHERE).parts()
    assert part.kind == "NOTE" and part.data == {"what": "no value on two nodes", "nodes": 4}


def test_values_of_one_node_are_left_out_of_the_count():
    """The first 12 of the session's 20 values on every node, the other 8 on one node each:
    judged on the 12 shared ones, as the session cut to those 12 is."""
    vals = _recorded(UNCHANGED)
    j = peers.partition.judge(_on_one_node(vals, shared=lambda k: k < 12), WHERE)
    assert j.values == [v.name for v in vals[:12]]
    assert j.lines() == peers.partition.judge(vals[:12], WHERE).lines() == [
        f"NODES {WHERE}: 4 nodes alike on 12 values (no node stands apart)"]


def test_what_the_peers_had_is_a_whole_number_the_rule_compares_with():
    """Five nodes: n1 and n2 with 11 usable values, n3 and n4 with 10, so n5's peers had
    10.5 in the median, printed and compared as 10: 5 values is half of it (judged), 4 is
    fewer (not judged). Peers with 12, 12, 11 and 11 had 11: 5 is fewer than half."""
    def cut(vals, at):
        for node, n in at.items():
            vals = _with(vals, node, lambda x, k, n=n: x if k < n else math.nan)
        return vals
    vals = _session(nodes=5, values=12)
    j = peers.partition.judge(cut(vals, {"n1": 11, "n2": 11, "n3": 10, "n4": 10, "n5": 5}),
                              WHERE)
    assert not j.not_judged and j.lines() == [
        f"NODES {WHERE}: 5 nodes alike on 11 values, n3 on 10, n4 on 10, n5 on 5 (no node "
        "stands apart)"]
    j = peers.partition.judge(cut(vals, {"n1": 11, "n2": 11, "n3": 10, "n4": 10, "n5": 4}),
                              WHERE)
    assert j.lines()[0] == f"NODES {WHERE}: n5 not judged: 4 usable values of 10 its peers had"
    j = peers.partition.judge(cut(vals, {"n1": 12, "n2": 12, "n3": 11, "n4": 11, "n5": 5}),
                              WHERE)
    assert j.lines()[0] == f"NODES {WHERE}: n5 not judged: 5 usable values of 11 its peers had"
    assert j.parts()[0].data["peers_had"] == 11 and type(j.not_judged[0].peers_had) is int
