"""A partition at a time, live: the node-health family on a real 4-node Slurm.

The cluster of ``slurm_nodes.py`` has one node whose CPU time is capped (a cgroup CFS
quota: ``SLOW`` of its CPUs) and one left 1 PU of 2 by a cpuset; every node's cgroup has
the largest CPU weight, so the host's other work does not hide the cap. One acceptance run with
``--distribute=all -t nodes`` must give every node its own values (the run report's
``node`` of each case and the host its job printed, the node in every case's identity), the
restricted node's fingerprint and maps must say 1 PU, and the acceptance line must FAIL
naming both odd nodes. An unchanged partition must PASS with the confirmation session on,
as a site runs it: that is the README's partition run in ``test_first_week.py``
(:func:`assert_no_node_stands`). All are ``make test-nodes`` (marker ``nodes``), which
``.ci/run`` runs after ``make test``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import node_cgroups
from placement.acceptance import record
from placement.judgement import peers, reading

ROOT = Path(__file__).resolve().parents[1]
NODES = ['n1', 'n2', 'n3', 'n4']
#: the capped node's share of its CPUs' time, the node left one PU, and that PU
#: (half its CPUs' time: the family's job there took 11 s against 5 on a peer, and the peer
#: test named every node so capped in the stored validation sessions; at a quarter it took 81 s)
SLOW, SLOW_NODE, SMALL_NODE, SMALL_CPUS = 0.5, 'n2', 'n3', '1'

pytestmark = [pytest.mark.slurm, pytest.mark.reframe, pytest.mark.nodes]


def acceptance(cluster, tmp: Path, confirm: bool = False, timeout: int = 900
               ) -> tuple[subprocess.CompletedProcess, reading.run_report.RunReport]:
    """``scripts/acceptance.sh -m quick -s testnodes:batch -- --distribute=all -t nodes``;
    ``confirm``: with the confirmation session, as a site runs it."""
    env = {**os.environ, **cluster.env, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'ACCEPTANCE_CONFIRM': '1' if confirm else '0'}
    proc = subprocess.run([str(ROOT / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s',
                           'testnodes:batch', '--', '--distribute=all', '-t', 'nodes'],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    reports = sorted((tmp / 'results' / 'runs').glob('run-report-acceptance-*.json'))
    assert reports, proc.stdout[-3000:] + proc.stderr[-2000:]
    return proc, reading.run_report.load(reports[-1])


def lines(proc: subprocess.CompletedProcess, head: str) -> list[str]:
    return [ln for ln in proc.stdout.splitlines() if ln.startswith(head)]


def report_of(line: str) -> Path:
    """The run report an ACCEPTANCE line names (``report=``)."""
    return Path(re.search(r' report=(\S+)', line).group(1))


def verdict_of(line: str) -> record.VerdictRecord:
    """The verdict record of the run an ACCEPTANCE line names."""
    return record.read(record.path_for(report_of(line)))


def assert_no_node_stands(out: list[str]) -> None:
    """An unchanged partition's answer, with the confirmation session on, read from the run's
    verdict record (the ACCEPTANCE line, last, names its report): no odd node, and each node
    the first session named (a node, a half) dismissed by the confirmation session."""
    line = [ln for ln in out if ln.startswith('ACCEPTANCE ')][-1]
    rec = verdict_of(line)
    said = '\n'.join(ln for ln in out if 'NODES' in ln.split(':')[0]) + '\n' + line
    assert rec.nodes and rec.nodes['odd'] == [] and not rec.odd_nodes, said
    assert all(e['outcome'] == 'dismissed' for e in rec.confirmation.get('nodes', [])), said


@pytest.fixture(scope='module')
def odd_run(slurm_nodes, tmp_path_factory):
    """The 4-node partition with one capped and one cpuset-restricted node, and its run."""
    cluster = slurm_nodes(4, slow={SLOW_NODE: SLOW}, cpus={SMALL_NODE: SMALL_CPUS})
    proc, report = acceptance(cluster, tmp_path_factory.mktemp('odd-run'))
    print('\n'.join(lines(proc, 'NODES') + lines(proc, 'ACCEPTANCE')))
    return cluster, proc, report


def test_the_odd_nodes_jobs_run_in_their_cgroups(odd_run):
    cluster = odd_run[0]
    env = {**os.environ, **cluster.env}
    seen = {}
    for node in (SLOW_NODE, SMALL_NODE, 'n1'):
        out = subprocess.run(['srun', '-w', node, '--exclusive', '-n1', '--cpus-per-task=2',
                              'sh', '-c', 'hostname; cat /proc/self/cgroup; '
                              'grep Cpus_allowed_list /proc/self/status'],
                             env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr + cluster.logs()
        seen[node] = out.stdout
    for node, text in seen.items():
        assert text.splitlines()[0] == node, text         # its own UTS namespace
        if node_cgroups.version() == 1:
            for d in cluster.cgroup(node).dirs():
                assert f':/{d.name}\n' in text, text       # the slurmd's cgroup, inherited
        else:       # the step's scope, in the cgroup namespace rooted at the node's group
            assert f'0::/{node_cgroups.SLICE}/{node}_slurmstepd.scope/' in text, text
    assert seen[SMALL_NODE].split()[-1] == SMALL_CPUS, seen[SMALL_NODE]
    assert seen['n1'].split()[-1] == '0-1', seen['n1']


def test_every_node_is_served_before_the_hosts_other_work(odd_run):
    """An unchanged node has only its weight; the capped one its weight and its quota."""
    cluster = odd_run[0]
    plain, capped = cluster.cgroup('n1'), cluster.cgroup(SLOW_NODE)
    assert plain.cpu_fraction is None and plain.cpus is None and plain.first
    if node_cgroups.version() == 1:
        cpu = [d for d in plain.dirs() if d.parent.name == 'cpu'][0]
        assert (cpu / 'cpu.shares').read_text().strip() == str(node_cgroups.SHARES_V1)
        assert (cpu / 'cpu.cfs_quota_us').read_text().strip() == '-1'
        cpu = [d for d in capped.dirs() if d.parent.name == 'cpu'][0]
        assert (cpu / 'cpu.cfs_quota_us').read_text().strip() == str(capped.quota_us)
    else:
        d = plain.dirs()[0]
        assert (d / 'cpu.weight').read_text().strip() == str(node_cgroups.WEIGHT_V2)
        assert (d / 'cpu.max').read_text().split()[0] == 'max'


def test_every_node_keeps_its_values(odd_run):
    _, proc, report = odd_run
    # a case with values: the capped node's NPB may fail its run-to-run spread (time_cv)
    measured = [c for c in report.cases if c.measured]
    assert {c.node for c in measured} == set(NODES), proc.stdout[-3000:]
    for c in measured:
        # the job's own hostname (the squeue backend leaves job_nodelist ['None'])
        assert c.raw['job_host'] == c.raw['node'] == c.node, c.raw['display_name']
        assert f'node={c.node}' in c.label()
    by_test = {}
    for c in measured:
        by_test.setdefault(c.test, set()).add(c.node)
    for test, nodes in by_test.items():
        assert nodes == set(NODES), f'{test} measured on {sorted(nodes)} only'


def test_the_restricted_node_is_placed_on_its_one_pu(odd_run):
    report = odd_run[2]
    prints = {c.node: c.raw['fingerprint'] for c in report.cases
              if c.test == 'NodeTopologyCheck' and c.result == 'pass'}
    assert prints[SMALL_NODE]['pus_allowed'] == 1 and prints[SMALL_NODE]['pus'] == 2
    assert all(prints[n]['pus_allowed'] == 2 for n in NODES if n != SMALL_NODE), prints
    binding = [c for c in report.cases if c.test == 'NodeBindingCheck' and c.node == SMALL_NODE]
    assert binding and all(c.result == 'pass' for c in binding), binding
    assert all('1 PUs' in c.raw['node_topology'] for c in binding), binding[0].raw['node_topology']


def test_the_acceptance_line_fails_naming_the_restricted_node(odd_run):
    _, proc, _ = odd_run
    nodes_lines = lines(proc, 'NODES testnodes:batch:')
    assert any(re.search(rf'\b{SMALL_NODE} topology differs from its 3 peers: 1 PU allowed '
                         'of 2', ln) for ln in nodes_lines), \
        '\n'.join(nodes_lines) or proc.stdout[-3000:]
    line = lines(proc, 'ACCEPTANCE')[-1]
    assert ' FAIL ' in line and re.search(rf'\b{SMALL_NODE}\b', line), line
    assert proc.returncode == 1, line


def far_out(report: reading.run_report.RunReport) -> str:
    """How far out of its kind the capped node measured, where it was the slowest of its
    kind on at least three quarters of the values that use every PU (the cap showed), else
    "". Its kind: the nodes but the one left 1 PU, which the peer test judges apart."""
    (values, _), = peers.cases.partitions(report).values()
    every_pu = [v for v in values if v.all_pus]
    kind = [n for n in NODES if n != SMALL_NODE]
    # nodes x values, the log of each median launch, worse positive: the peer test's own matrix
    m, _, _ = peers.partition.matrix(every_pu, NODES)
    m = m[[NODES.index(n) for n in kind]]
    ok = np.isfinite(m).all(axis=0)
    if not ok.any():
        return ''
    m = m[:, ok]
    slow = kind.index(SLOW_NODE)
    slowest = int((m.argmax(axis=0) == slow).sum())
    rate = float(np.exp(-np.median(m[slow] - np.median(np.delete(m, slow, axis=0), axis=0))))
    if slowest < 0.75 * m.shape[1]:
        return ''
    return (f'slowest of its kind on {slowest} of {m.shape[1]} values that use every PU, at '
            f'{rate:.2f} of its peers\' rate')


def test_the_acceptance_line_names_the_capped_node_slower(odd_run):
    """The capped node (half its CPU time) named slower, the run FAILing by its name.
    Where the peer test leaves it unnamed though it measured far out of its kind, the test is
    an expected failure saying so: the peer test's far-out weakness (a node far out of its
    peers deals its own gaps into the test's reference; docs/reference/peer-nulls.md),
    which its far-out rule mends only where the node is the slowest on every value that
    uses every PU (``benchmarks/peer_nulls.py`` and ``benchmarks/peer_sessions_maxt.py``
    measure both). Any other miss (the cap not showing) fails."""
    _, proc, report = odd_run
    line = lines(proc, 'ACCEPTANCE')[-1]
    assert ' FAIL ' in line, line
    nodes_lines = lines(proc, 'NODES testnodes:batch:')
    if not any(re.search(rf'\b{SLOW_NODE}\b.*slower', ln) for ln in nodes_lines):
        far = far_out(report)
        assert far, '\n'.join(nodes_lines)
        pytest.xfail(f'{SLOW_NODE} left unnamed by the peer test though {far}: its far-out '
                     'weakness')
    assert re.search(rf'\b{SLOW_NODE}\b', line), line


#: the family's members of the confirmed run: those that use every PU, where a capped node is
#: slower, and enough of them (9 measurements) for a node far out of 4 to be named well under
#: the level: with 5, few dealings give an adjusted p under 0.05, and a confirmation session
#: in CI left a node forty times slower unnamed (adjusted p 0.054)
CONFIRM_MEMBERS = ('only_members=NodeMatmulCheck,NodeMemWriteCheck,NodeMemWriteMapsCheck,'
                   'NodeNpbCheck')


def test_a_nodes_line_is_confirmed_or_dismissed_by_its_node_again(slurm_nodes, tmp_path):
    """A capped node named slower by the first session: the confirmation session runs the
    distribute set again (ReFrame selects the checks by their hash before it copies them per
    node), and its line says, for that node, whether its peers named it again; either answer
    is asserted as what it is."""
    cluster = slurm_nodes(4, slow={SLOW_NODE: SLOW})
    env = {**os.environ, **cluster.env, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'), 'ACCEPTANCE_CONFIRM': '1'}
    proc = subprocess.run([str(ROOT / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s',
                           'testnodes:batch', '--', '--distribute=all', '-t', 'nodes',
                           '-S', CONFIRM_MEMBERS],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    said = '\n'.join(lines(proc, 'NODES') + lines(proc, 'CONFIRMED') +
                     lines(proc, 'UNCONFIRMED') + lines(proc, '== confirmation') +
                     lines(proc, 'ACCEPTANCE'))
    print(said)
    assert 'left no readable report' not in proc.stdout, said
    runs = tmp_path / 'results' / 'runs'
    confirm = sorted(runs.glob('confirm-report-acceptance-*.json'))
    assert confirm, said + proc.stderr[-2000:]
    again = reading.run_report.load(confirm[-1])
    assert {c.node for c in again.cases if c.measured} == set(NODES), said
    decided = [ln for ln in lines(proc, 'CONFIRMED NODES testnodes:batch ') +
               lines(proc, 'UNCONFIRMED NODES testnodes:batch ')
               if ln.split()[3] == f'{SLOW_NODE}:']
    assert len(decided) == 1, said
    # the first session named the capped node; the line keeps what it said, either way
    assert re.search(rf'\[first session: {SLOW_NODE} slower ', decided[0]), said
    line = lines(proc, 'ACCEPTANCE')[-1]
    record = json.loads(next(runs.glob('verdict-run-report-*.json')).read_text())
    entries = [e for e in record['confirmation']['nodes'] if e['node'] == SLOW_NODE]
    assert entries and entries[0]['line'] == decided[0], record['confirmation']
    if decided[0].startswith('CONFIRMED'):
        assert entries[0]['outcome'] == 'confirmed'
        assert ' FAIL ' in line and re.search(rf'\b{SLOW_NODE}\b', line), line
    else:
        assert entries[0]['outcome'] == 'dismissed'
        assert not re.search(rf'odd nodes of testnodes:batch: [^;)]*\b{SLOW_NODE}\b', line), line
    assert re.search(r' confirmed \d+ of [1-9]', line), line
