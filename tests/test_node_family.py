"""The node-health family as one test per node (``NodeHealthCheck``).

Its case in a run report is read as its members' cases (``reading.family``): a stored
4-node session, each node's 14 cases packed as the family writes them, reads as the same
cases with the same values and the same peer verdict. Live on this host (the ``generic``
system, ``-S node=HOST`` in place of ``--distribute``): one job runs every member, and a
member whose program crashes fails that member and the node's case, every other member
keeping its values.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from placement.judgement import peers, reading

ROOT = Path(__file__).resolve().parents[1]
SESSION = sorted((ROOT / 'tests' / 'fixtures' / 'peers' / 'capped50-20261202T0154')
                 .glob('run-*.json'))[0]
#: a live session of the family, one job per node (the family writes its case per node)
STORED_FAMILY = sorted((ROOT / 'tests' / 'fixtures' / 'peers' / 'unchanged-20261207T0114')
                       .glob('run-*.json'))[-1]
#: every member's own field, as the family keeps it (never the family's job or session)
_JOB = ('system', 'partition', 'environ', 'session_uuid', 'job_nodelist', 'jobid', 'fixture')


def pack(data: dict) -> dict:
    """A run report with each node's node-health cases as one family case per node, as
    ``NodeHealthCheck`` writes it: the member's fields under ``family``, its values as
    ``<member>.<var>``."""
    out = copy.deepcopy(data)
    for run in out['runs']:
        kept, families = [], {}
        for tc in run['testcases']:
            node = tc.get('node')
            if tc.get('fixture') or not node:
                kept.append(tc)
                continue
            fam = families.setdefault(node, {
                **{k: tc[k] for k in _JOB if k in tc}, 'name': 'NodeHealthCheck %scale=small',
                'display_name': f'NodeHealthCheck %scale=small %.part=testnodes:batch %.nid={node}',
                'result': 'pass', 'fail_phase': None, 'node': node, 'perfvalues': {},
                'family': {}})
            key = tc['unique_name']
            prefix = f"{tc['system']}:{tc['partition']}:"
            for k, v in (tc.get('perfvalues') or {}).items():
                fam['perfvalues'][f'{prefix}{key}.{k[len(prefix):]}'] = v
            fields = {k: v for k, v in tc.items() if k not in _JOB and k != 'perfvalues'}
            fields['display_name'] = tc['name']
            fam['family'][key] = fields
            if tc['result'] != 'pass':
                fam['result'], fam['fail_phase'] = 'fail', 'performance'
        run['testcases'] = kept + list(families.values())
    return out


def _identity(case: reading.run_report.Case) -> tuple:
    return (case.key, case.result, case.fail_phase, sorted(case.perf.items()),
            sorted(case.launches.items()), case.raw.get('fingerprint'),
            case.raw.get('env_vars'), case.raw.get('job_host'))


def test_a_stored_session_packed_as_one_family_case_per_node_reads_the_same():
    data = json.loads(SESSION.read_text())
    plain = reading.run_report.from_data(data, SESSION)
    packed_data = pack(data)
    assert sum(1 for r in packed_data['runs'] for tc in r['testcases']
               if reading.family.is_family(tc)) == 4
    packed = reading.run_report.from_data(packed_data, SESSION)
    assert sorted(map(_identity, packed.cases)) == sorted(map(_identity, plain.cases))
    assert ({c.raw['display_name'] for c in packed.cases}
            == {c.raw['display_name'] for c in plain.cases})
    assert repr(peers.cases.judge_report(packed)) == repr(peers.cases.judge_report(plain))


def test_the_declared_node_the_fingerprint_member_records_is_judged_the_same():
    """SMT off on every node against a declared node with SMT: the fingerprint member's
    ``declared_fingerprint`` reaches the peer verdict through the family's case."""
    data = json.loads(SESSION.read_text())
    for tc in (tc for r in data['runs'] for tc in r['testcases']
               if tc['name'].startswith('NodeTopologyCheck')):
        tc['declared_fingerprint'] = {**tc['fingerprint'], 'pus': 4, 'smt': 2}
        tc['declared_topology'] = 'topologies/testnodes.xml'
    plain = reading.run_report.from_data(data, SESSION)
    packed = reading.run_report.from_data(pack(data), SESSION)
    said = [j.lines() for j in peers.cases.judge_report(packed)]
    assert said == [j.lines() for j in peers.cases.judge_report(plain)]
    assert any('from the declared node (topologies/testnodes.xml): pus 2 (declared 4)' in ln
               for lines in said for ln in lines), said


def test_a_regressed_member_value_reruns_the_family_on_its_node():
    """The verdict names a value by its member's case; the confirmation reruns the family
    case that holds it (selected by the family's hash before ``--distribute``), on its node."""
    from placement.acceptance import confirmation, distributed
    shown = 'NodeHealthCheck %scale=small %.part=c:batch %.nid=n2'
    tc = {'name': 'NodeHealthCheck %scale=small', 'display_name': shown, 'hashcode': 'a1b2c3d4',
          'system': 'c', 'partition': 'batch', 'environ': 'gnu', 'result': 'pass', 'node': 'n2',
          'family': {'NodeMatmulCheck_0': {'name': 'NodeMatmulCheck %affinity=none',
                                           'result': 'pass'}}}
    member = 'NodeMatmulCheck %affinity=none %.part=c:batch %.nid=n2'
    assert confirmation.candidate_cases({('k',): tc}, {(member, 'c:batch+gnu', 'gflops')}) \
        == [tc]
    assert confirmation.candidate_cases({('k',): tc}, {(member, 'c:other+gnu', 'gflops')}) == []
    assert distributed.selection([tc]) == ([distributed.base_hash(tc)], ['n2'])


def one_node_failing(phases: dict[str, str]) -> list[reading.run_report.Case]:
    """The stored session packed one family case per node, the first family's member of
    each class in ``phases`` failed in that phase (one failed before its performance phase
    has no values, as the family's job reports it), read back: that node's cases."""
    data = pack(json.loads(SESSION.read_text()))
    fam = next(tc for r in data['runs'] for tc in r['testcases'] if tc.get('family'))
    for cls, phase in phases.items():
        key = next(k for k in fam['family'] if k.startswith(cls))
        fam['family'][key].update(result='fail', fail_phase=phase, fail_reason=phase)
        if phase != 'performance':
            fam['perfvalues'] = {k: v for k, v in fam['perfvalues'].items()
                                 if f':{key}.' not in k}
    fam['result'], fam['fail_phase'] = 'fail', 'performance'
    return [c for c in reading.run_report.from_data(data, SESSION).cases
            if c.node == fam['node']]


def test_a_member_that_failed_has_no_values_and_the_others_keep_theirs():
    cases = one_node_failing({'NodeMatmulCheck': 'sanity'})
    failed = [c for c in cases if c.result == 'fail']
    assert [(c.test, c.fail_phase, c.perf) for c in failed] == [('NodeMatmulCheck', 'sanity', {})]
    assert all(c.perf for c in cases if c.test.startswith('NodeMem') and c.result == 'pass')


def test_a_member_outside_its_reference_keeps_its_values_and_counts_as_measured():
    """A capped node's NPB over its run-to-run spread (time_cv) fails performance: it still
    measured, and every reader of "did this node measure" counts it (a crashed one not)."""
    cases = one_node_failing({'NodeMemWriteCheck': 'performance', 'NodeMatmulCheck': 'sanity'})
    [outside] = [c for c in cases if c.test == 'NodeMemWriteCheck' and c.result == 'fail']
    assert outside.fail_phase == 'performance' and outside.measured and outside.perf
    [broken] = [c for c in cases if c.test == 'NodeMatmulCheck' and c.result == 'fail']
    assert not broken.measured and not broken.perf


def test_a_case_of_the_family_the_job_never_judged_takes_the_familys_result():
    tc = {'name': 'NodeHealthCheck %scale=small', 'system': 's', 'partition': 'p',
          'environ': 'gnu', 'result': 'fail', 'fail_phase': 'run', 'fail_reason': 'timeout',
          'family': {'NodeTopologyCheck': {'name': 'NodeTopologyCheck', 'result': ''}}}
    [member] = reading.family.expand(tc)
    assert (member['name'], member['result'], member['fail_phase']) == \
        ('NodeTopologyCheck', 'fail', 'run')
    assert reading.family.expand({'name': 'X'}) == [{'name': 'X'}]


def test_only_members_runs_the_named_member_classes_and_refuses_a_stranger():
    from placement.testlib import family

    class NodeA: pass
    class NodeB: pass
    assert family.chosen([NodeA, NodeB], []) == [NodeA, NodeB]
    assert family.chosen([NodeA, NodeB], ['NodeB']) == [NodeB]
    with pytest.raises(ValueError, match='NodeC is no member of the family'):
        family.chosen([NodeA, NodeB], ['NodeB', 'NodeC'])


@pytest.mark.reframe
def test_one_job_runs_the_family_and_a_crashing_member_fails_alone(tmp_path):
    """NPB CG's program crashes (a stand-in ``cg.S.x``), EP has none (skipped)."""
    npb = tmp_path / 'npb'
    npb.mkdir()
    (npb / 'cg.S.x').write_text('#!/bin/sh\necho crashed >&2\nexit 3\n')
    (npb / 'cg.S.x').chmod(0o755)
    report = tmp_path / 'report.json'
    host = socket.gethostname()
    proc = subprocess.run(
        [str(ROOT / '.venv' / 'bin' / 'reframe'), '-C', str(ROOT / 'config' / 'settings.py'),
         '-c', str(ROOT / 'reframe_tests' / 'node_health.py'), '--system', 'generic',
         '-t', 'nodes', '-t', 'quick', '-S', f'node={host}', '--prefix', str(tmp_path / 'rfm'),
         '--report-file', str(report), '-r'],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, 'NPB_DIR': str(npb), 'PLACEMENT_RESULTS': str(tmp_path / 'res')})
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-2000:]
    raw = [tc for r in json.loads(report.read_text())['runs'] for tc in r['testcases']
           if not tc.get('fixture')]
    assert [tc['name'] for tc in raw] == ['NodeHealthCheck %scale=small'], proc.stdout[-3000:]
    [family] = raw
    assert (family['result'], family['fail_phase']) == ('fail', 'performance')
    assert 'NodeNpbCheck_0 (sanity' in family['fail_reason'], family['fail_reason']
    cases = {c.raw['display_name'].split(' %.')[0]: c
             for c in reading.run_report.from_data(json.loads(report.read_text()), report).cases}
    assert len(cases) == 14 and {c.node for c in cases.values()} == {host}
    cg = [c for n, c in cases.items() if n.startswith('NodeNpbCheck %benchmark=CG')]
    ep = [c for n, c in cases.items() if n.startswith('NodeNpbCheck %benchmark=EP')]
    assert [(c.result, c.fail_phase, c.perf) for c in cg] == [('fail', 'sanity', {})]
    assert [c.result for c in ep] == ['skip']
    others = [c for c in cases.values() if c.test != 'NodeNpbCheck']
    assert all(c.result == 'pass' for c in others), [(c.test, c.raw['fail_reason'])
                                                     for c in others if c.result != 'pass']
    assert cases['NodeTopologyCheck'].raw['fingerprint']['pus'] >= 1
    assert cases['NodeTopologyCheck'].perf['pus'].unit == 'count'
    write = cases['NodeMemWriteCheck %affinity=scatter %threads=1 %scale=small']
    assert write.perf['gbps'].unit == 'GB/s' and len(write.launches['gbps']) == 3
    assert write.raw['job_host'] == host
    assert cases['NodeMatmulCheck %affinity=compact %scale=small'].perf['gflops'].value > 0


def test_a_family_whose_member_crashed_is_a_failure_not_a_missed_reference():
    from placement.acceptance import confirmation
    tc = {'name': 'NodeHealthCheck %scale=small', 'system': 's', 'partition': 'p',
          'environ': 'gnu', 'result': 'fail', 'fail_phase': 'performance',
          'family': {'NodeMatmulCheck_0': {'name': 'NodeMatmulCheck %affinity=none',
                                           'result': 'fail', 'fail_phase': 'sanity'},
                     'NodeTopologyCheck': {'name': 'NodeTopologyCheck', 'result': 'pass'}}}
    assert reading.family.failed_members(tc) == ['NodeMatmulCheck_0']
    assert not confirmation.is_reference_failure(tc)
    tc['family']['NodeMatmulCheck_0']['fail_phase'] = 'performance'
    assert confirmation.is_reference_failure(tc)


def test_members_a_family_skipped_are_counted_and_said_as_skipped_cases(tmp_path,
                                                                        monkeypatch):
    """NPB not installed: the family's NPB members skip on every node. Run as cases of
    their own they read ``SKIP 8 case(s)``; inside the family they read ``skipped=0`` with
    no word. Counted and said the same way now."""
    from placement import acceptance
    monkeypatch.setenv('PLACEMENT_BASELINES', str(tmp_path))
    data = json.loads(STORED_FAMILY.read_text())
    for tc in (tc for r in data['runs'] for tc in r['testcases'] if tc.get('family')):
        for key in ('NodeNpbCheck_0', 'NodeNpbCheck_2'):
            tc['family'][key].update(result='skip', fail_phase=None,
                                     fail_reason='NPB is not installed on this node')
            tc['perfvalues'] = {k: v for k, v in tc['perfvalues'].items()
                                if f':{key}.' not in k}
    part = tmp_path / 'run.json'
    part.write_text(json.dumps(data))
    lines, _ = acceptance.summary([part], 'testnodes', 'quick', None, 10.0, False, [])
    assert 'SKIP 8 case(s): NPB is not installed on this node' in lines, lines
    assert ' 50 passed, 0 failed ' in lines[-1] and ' skipped=8' in lines[-1], lines[-1]


def test_the_acceptance_line_counts_a_familys_members_as_cases(tmp_path, monkeypatch):
    """A 4-node session of the family read ``6 passed`` for its 56 checks and 2 builds; a
    member that failed is one failure of 58, its node's other members passed."""
    from placement import acceptance
    monkeypatch.setenv('PLACEMENT_BASELINES', str(tmp_path))
    data = json.loads(STORED_FAMILY.read_text())
    part = tmp_path / 'run.json'
    part.write_text(json.dumps(data))
    lines, status = acceptance.summary([part], 'testnodes', 'quick', None, 10.0, False, [])
    assert ' 58 passed, 0 failed ' in lines[-1], lines[-1]
    tc = next(tc for r in data['runs'] for tc in r['testcases'] if tc.get('family'))
    tc.update(result='fail', fail_phase='performance', fail_reason='a member failed')
    tc['family']['NodeMatmulCheck_0'].update(result='fail', fail_phase='sanity')
    part.write_text(json.dumps(data))
    lines, status = acceptance.summary([part], 'testnodes', 'quick', None, 10.0, False, [])
    assert status == 1 and ' FAIL 57 passed, 1 failed ' in lines[-1], lines[-1]


@pytest.mark.parametrize('result,phase,cut,line', [
    ('abort', 'run', True, ' UNFINISHED 44 passed, 0 failed '),
    ('fail', 'run', False, ' FAIL 44 passed, 1 failed '),
])
def test_a_family_whose_job_ended_before_its_members_is_one_failure(tmp_path, monkeypatch,
                                                                    result, phase, cut, line):
    """A family job the time box interrupted is one case that ``--resume`` runs again (none
    of its members passed or failed); one that failed before its members were judged prints
    one line and counts one failure, not 14 (its members took its result)."""
    from placement import acceptance
    monkeypatch.setenv('PLACEMENT_BASELINES', str(tmp_path))
    data = json.loads(STORED_FAMILY.read_text())
    tc = next(tc for r in data['runs'] for tc in r['testcases'] if tc.get('family'))
    tc.update(result=result, fail_phase=phase, fail_reason='job ended', time_limit=None)
    for member in tc['family'].values():
        member.pop('result', None)
        member.pop('fail_phase', None)
    part = tmp_path / 'run.json'
    part.write_text(json.dumps(data))
    lines, _ = acceptance.summary([part], 'testnodes', 'quick', None, 10.0, cut, [])
    assert line in lines[-1], lines[-1]
