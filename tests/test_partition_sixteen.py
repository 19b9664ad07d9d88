"""A 16-node partition, live: the node-health family as one Slurm job per node.

The 4-node partition (``test_partition_live.py``) shows what the lines say; this one shows
that the family, the peer verdict and the summary keep their shape at four times the nodes:
sessions of ``--distribute=all -t nodes`` on a real 16-node Slurm (``slurm_nodes.py``,
16 slurmd on this host) submit exactly one family job per node each, counted from the
scheduler's own list (``squeue -t all``: the test Slurm keeps an ended job listed for
``MinJobAge``), beside the one topology capture per node of a first session, every
node keeps its own values, the capped node is the slowest on the values that use every
PU, and no other node stands in the run's answer. Both partitions run with the
confirmation session on, as a site runs them: one session's peer verdict names a healthy
node at its level by construction (:data:`~placement.judgement.rules.PEER_ALPHA`), and
more often here, where the 16 nodes run one after the other on two shared cores and a
node whose job met a busy moment of the host is slower on every value of that session
(a healthy node 35 % slower on 14 of 20 values was named so); the confirmation session,
which did not choose it, dismisses it (``UNCONFIRMED``), and only what it names again
fails the run.

Whether the peer verdict names the capped node here is a detection figure, measured where
such figures are (``benchmarks/peer_nulls.py``, its far-out scenario), not asserted: the
nodes differ as separate machines do (by tens of per cent), and among such nodes the one
test, with its far-out rule, names a node five times slower in nine of ten 16-node
partitions (a capped node went unnamed so, beside 15 nodes spread over a factor of two,
before that rule). A session takes about four minutes here (the nodes share this host's
two cores and run one job at a time), its confirmation as long again where it runs; both
are ``make test-nodes`` (marker ``nodes``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from placement.judgement import peers, reading
from test_partition_live import acceptance, verdict_of

ROOT = Path(__file__).resolve().parents[1]
N = 16
NODES = [f'n{i}' for i in range(1, N + 1)]
#: the capped node and its share of its CPUs' time: its every-PU values take about twice as long
SLOW_NODE, SLOW = 'n7', 0.5

pytestmark = [pytest.mark.slurm, pytest.mark.reframe, pytest.mark.nodes]


def session(cluster, tmp: Path, confirm: bool) -> tuple[subprocess.CompletedProcess,
                                                         reading.run_report.RunReport]:
    """One acceptance session of the family on every node; its output and run report."""
    return acceptance(cluster, tmp, confirm=confirm, timeout=1800)


#: the name of the job that captures a node's topology (:mod:`placement.testlib.node_topology`):
#: once per node, in the first session of a results folder, cached for the next ones
CAPTURE = 'placement-topology'


def jobs(cluster) -> list[tuple[int, str, str]]:
    """Every job the scheduler ran, (job id, its node, its name), in the order submitted."""
    out = subprocess.run(['squeue', '-h', '-t', 'all', '-o', '%i %N %j'],
                         env={**os.environ, **cluster.env}, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return sorted((int(i), node, name)
                  for i, node, name in (ln.split() for ln in out.splitlines()))


def family_jobs(ran: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """The node-health family's jobs (ReFrame names a job ``rfm_<test>_<hash>``)."""
    return [j for j in ran if j[2].startswith('rfm_NodeHealthCheck')]


def said(proc: subprocess.CompletedProcess) -> str:
    return '\n'.join(ln for ln in proc.stdout.splitlines()
                     if ln.startswith(('NODES', 'ACCEPTANCE', 'CONFIRMED', 'UNCONFIRMED')))


@pytest.fixture(scope='module')
def capped_run(slurm_nodes, tmp_path_factory):
    """16 nodes, one capped at half its CPUs' time; one session and its confirmation."""
    cluster = slurm_nodes(N, slow={SLOW_NODE: SLOW})
    proc, report = session(cluster, tmp_path_factory.mktemp('sixteen'), confirm=True)
    print(said(proc))
    return cluster, proc, report


def test_one_job_per_node(capped_run):
    """The family's one job on each node per session (the first; the confirmation's, where
    one ran, runs every check again on every node); beside them only the topology capture
    of each node, which a first session runs once (the results folder is new here)."""
    cluster, proc, _ = capped_run
    ran = jobs(cluster)
    family = family_jobs(ran)
    assert sorted(node for _, node, _ in family[:N]) == sorted(NODES), (ran, said(proc))
    again = family[N:]
    assert not again or sorted(node for _, node, _ in again) == sorted(NODES), \
        (ran, said(proc))
    others = [j for j in ran if j not in family]
    assert all(name == CAPTURE for _, _, name in others), ran
    assert sorted(node for _, node, _ in others) == sorted(NODES), ran


def test_every_node_keeps_its_values(capped_run):
    _, proc, report = capped_run
    measured = [c for c in report.cases if c.measured]
    by_test: dict[str, set[str]] = {}
    for c in measured:
        assert c.raw['job_host'] == c.node, c.raw['display_name']
        by_test.setdefault(c.test, set()).add(c.node)
    assert by_test, said(proc)
    for test, nodes in by_test.items():
        assert nodes == set(NODES), f'{test} measured on {sorted(nodes)} only'


def test_the_cap_shows_on_the_values_that_use_every_pu(capped_run):
    """The capped node measured slowest of the 16 on most values that use every PU: the
    partition the verdict read holds one node far out of its peers."""
    _, proc, report = capped_run
    (values, _), = peers.cases.partitions(report).values()
    every_pu = [v for v in values if v.all_pus]
    assert every_pu, said(proc)
    # nodes x values, the log of each median launch, worse positive: the peer test's own matrix
    m, _, _ = peers.partition.matrix(every_pu, NODES)
    slowest = [NODES[i] for i in m.argmax(axis=0)]
    assert slowest.count(SLOW_NODE) >= 0.75 * len(every_pu), (slowest, said(proc))


def test_no_node_but_the_capped_one_is_named(capped_run):
    """No healthy node stands in the run's answer, read from its verdict record: one the
    first session named is dismissed by the confirmation session (module docstring). Where
    the capped node stands (a detection figure, module docstring) the acceptance line FAILs
    naming it."""
    _, proc, _ = capped_run
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith('ACCEPTANCE ')][-1]
    rec = verdict_of(line)
    assert rec.nodes and rec.nodes['judged'] == N, said(proc)
    stands = (set(rec.nodes['odd']) | set(rec.nodes['undecided'])
              | set(rec.nodes['not_judged']) | {o.node for o in rec.odd_nodes})
    assert stands <= {SLOW_NODE}, said(proc)
    for entry in rec.confirmation.get('nodes', []):
        assert entry['node'] == SLOW_NODE or entry['outcome'] == 'dismissed', said(proc)
    others = [n for n in NODES if n != SLOW_NODE]
    assert not any(re.search(rf'\b{n}\b', line) for n in others), line
    if stands:
        assert ' FAIL ' in line and re.search(rf'\b{SLOW_NODE}\b', line), line
    print(f'{SLOW_NODE} stands: {bool(stands)}')


@pytest.mark.skipif(os.environ.get('PLACEMENT_TEST_PARTITION_PASS') != '1',
                    reason='a second 16-node session (about four minutes): make test-nodes')
def test_an_unchanged_partition_names_no_node(slurm_nodes, tmp_path):
    cluster = slurm_nodes(N)
    proc, report = session(cluster, tmp_path, confirm=True)
    print(said(proc))
    first = family_jobs(jobs(cluster))[:N]      # the confirmation session's come after
    assert sorted(node for _, node, _ in first) == sorted(NODES), first
    assert {c.node for c in report.cases if c.measured} == set(NODES), said(proc)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith('ACCEPTANCE')][-1]
    assert not any(re.search(rf'\b{n}\b', line) for n in NODES), said(proc)
