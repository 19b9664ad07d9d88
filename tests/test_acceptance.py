"""scripts/acceptance.sh end to end on this host, with throw-away checks that fail on purpose.

Proves: a crash, a missing tool, a failed verification and a time limit are
each a FAIL with the stage directory (job script, stdout, stderr) kept while the
rest of the run goes on; the summary line and exit status; the comparison with
the previous run flags a slowdown; ``--restore-session REPORT --failed -r``
re-runs exactly the failures; a time box leaves the run unfinished and
``--resume`` runs only what had not finished.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from placement import cli
from held_lock import held_lock
from rate_checks import RATE_CASE
from placement.judgement import reading
from placement.report.escape import markdown

pytestmark = pytest.mark.reframe

CHECKS = '''
import shlex
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_before, sanity_function, variable

COMMANDS = {
    'pass': 'echo rate={rate}',
    'verify': 'echo rate={rate}; echo binding not as requested',
    'crash': 'echo rate={rate}; kill -SEGV $$',
    'missing_tool': 'no-such-tool-placement-test --run',
    'timeout': 'sleep 60',
    'slow': 'sleep 12; echo rate={rate}',
}


@rfm.simple_test
class AcceptanceCase(rfm.RunOnlyRegressionTest):
    case = parameter(list(COMMANDS))
    rate = variable(float, value=100.0)
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    tags = {'quick', 'acceptance', 'full'}
    time_limit = '5s'
    executable = 'bash'

    @run_before('run')
    def command(self):
        self.executable_opts = ['-c', shlex.quote(COMMANDS[self.case].format(rate=self.rate))]
        if self.case == 'slow':
            self.time_limit = '60s'

    @sanity_function
    def validate(self):
        return sn.all([sn.assert_found(r'^rate=', self.stdout),
                       sn.assert_not_found(r'not as requested', self.stdout),
                       sn.assert_eq(self.job.exitcode, 0)])

    @performance_function('MB/s')
    def rate_seen(self):
        return sn.extractsingle(r'^rate=(\\S+)', self.stdout, 1, float)
'''

SUMMARY = re.compile(r'^ACCEPTANCE generic quick: (PASS|FAIL|UNFINISHED) (\d+) passed, (\d+) failed '
                     r'\((\d+) perf regressions\) report=(\S+)', re.M)


@pytest.fixture
def acceptance(acceptance_sh, tmp_path):
    """Run scripts/acceptance.sh on the throw-away checks; returns (status, summary match)."""
    checks = tmp_path / 'acceptance_cases.py'
    checks.write_text(CHECKS)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports')}

    def run(*args: str, opts: tuple[str, ...] = ()):
        proc = acceptance_sh(env, checks, *args, opts=opts, prefix=tmp_path / 'rfm')
        m = SUMMARY.search(proc.stdout)
        assert m, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert proc.stdout.rstrip().splitlines()[-1].startswith('ACCEPTANCE ')
        return proc, m
    run.env = env
    return run


def test_failures_are_kept_and_the_run_goes_on(acceptance, root, reframe_bin, tmp_path):
    proc, m = acceptance()
    assert proc.returncode == 1
    assert m.group(1, 2, 3) == ('FAIL', '2', '4'), proc.stdout[-2000:]
    report = json.loads(Path(m.group(5)).read_text())
    failed = {tc['display_name']: tc for tc in report['runs'][0]['testcases']
              if tc['result'] == 'fail'}
    assert {n.split('=')[-1] for n in failed} == {'verify', 'crash', 'missing_tool', 'timeout'}
    assert failed['AcceptanceCase %case=timeout']['fail_phase'] == 'run'
    for tc in failed.values():          # logs kept where the FAIL line points
        for f in ('rfm_job.sh', 'rfm_job.out', 'rfm_job.err'):
            assert (Path(tc['stagedir']) / f).exists(), (tc['display_name'], f)
        assert f"stage={tc['stagedir']}" in proc.stdout

    # re-run only the failures: the documented command
    rerun = tmp_path / 'rerun.json'
    again = subprocess.run(
        [reframe_bin, '-C', str(root / 'config' / 'settings.py'), '--restore-session',
         m.group(5), '--failed', '-r', '--prefix', str(tmp_path / 'rfm'),
         '--report-file', str(rerun)],
        cwd=root, env=acceptance.env, capture_output=True, text=True, timeout=600)
    assert again.returncode != 0
    names = {tc['display_name'] for r in json.loads(rerun.read_text())['runs']
             for tc in r['testcases']}
    assert names == set(failed)


def test_slowdown_against_the_previous_run_is_information_only(acceptance):
    # two sessions are one draw each of the node's state: the baseline's sessions judge
    only_pass = ('-n', '%case=pass')
    proc, m = acceptance(*only_pass)
    assert (proc.returncode, m.group(1)) == (0, 'PASS')
    assert 'confirmation session' not in proc.stdout + proc.stderr     # nothing to confirm
    proc, m = acceptance(*only_pass, '-S', 'rate=50')         # half the previous rate
    assert (proc.returncode, m.group(1, 3, 4)) == (0, ('PASS', '0', '0')), proc.stdout[-2000:]
    assert ('INFO 1 value(s) worse than the previous run by more than 10% (information only'
            in proc.stdout)
    assert 'AcceptanceCase %case=pass rate_seen -50.0%' in proc.stdout
    proc, m = acceptance(*only_pass, '-S', 'rate=100')        # better than the last: fine
    assert (proc.returncode, m.group(1, 4)) == (0, ('PASS', '0'))
    assert 'INFO' not in proc.stdout


def test_time_box_then_resume(acceptance, root, tmp_path, monkeypatch):
    """A maintenance window cuts the run; --resume runs only what had not finished."""
    runs = Path(acceptance.env['PLACEMENT_RESULTS']) / 'runs'
    unfinished = runs / 'unfinished-acceptance-generic-quick.run'
    select = ('-n', '%case=(pass|slow)')
    proc, m = acceptance(*select, opts=('-t', '10'))          # 'slow' needs 12 s
    assert (proc.returncode, m.group(1)) == (3, 'UNFINISHED'), proc.stdout[-3000:]
    assert 'continue with --resume' in proc.stdout and m.group(3) == '0'
    # run lists name their reports relative to the runs folder (a moved checkout keeps them)
    first = [str(runs / ln) for ln in unfinished.read_text().splitlines() if ln]
    assert first == [m.group(5)]
    done_first = {tc['display_name'] for r in json.loads(Path(first[0]).read_text())['runs']
                  for tc in r['testcases'] if tc['result'] == 'pass'}

    proc, m = acceptance(*select, opts=('--resume',))
    assert (proc.returncode, m.group(1, 2, 3)) == (0, ('PASS', '2', '0')), proc.stdout[-3000:]
    assert 'parts=2' in proc.stdout and not unfinished.exists()
    ran_now = {tc['display_name'] for r in json.loads(Path(m.group(5)).read_text())['runs']
               for tc in r['testcases'] if not tc.get('fixture')}
    assert 'AcceptanceCase %case=slow' in ran_now and not (ran_now & done_first)
    (whole,) = runs.glob('acceptance-generic-quick-*.run')
    assert [str(runs / n) for n in whole.read_text().split()] == first + [m.group(5)]

    # the run list records one baseline from every part
    monkeypatch.setenv('PLACEMENT_BASELINES', str(tmp_path / 'baselines'))
    assert cli.main(['baseline', 'record', '--system', 'generic', '--from', str(whole)]) == 0
    data = yaml.safe_load((tmp_path / 'baselines' / 'generic.yaml').read_text())
    uuids = [json.loads(Path(p).read_text())['session_info']['uuid'] for p in first + [m.group(5)]]
    assert data['_provenance']['run_parts'] == uuids
    assert data['AcceptanceCase']['$index'] == ['case']
    assert {'pass', 'slow'} <= set(data['AcceptanceCase'])      # one from each part

    again = subprocess.run([str(root / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s',
                            'generic', '--resume'], cwd=root, env=acceptance.env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and 'nothing to resume' in again.stderr
    bad = subprocess.run([str(root / 'scripts' / 'acceptance.sh'), '-t', '0'], cwd=root,
                         env=acceptance.env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and 'bad time box' in bad.stderr


def test_resume_with_a_corrupt_earlier_part(acceptance, tmp_path):
    """The earlier part is cut off (a full disk, a kill): dropped with one line, summary written."""
    runs = Path(acceptance.env['PLACEMENT_RESULTS']) / 'runs'
    select = ('-n', '%case=(pass|slow)')
    proc, m = acceptance(*select, opts=('-t', '10'))
    assert (proc.returncode, m.group(1)) == (3, 'UNFINISHED'), proc.stdout[-3000:]
    first = Path(m.group(5))
    first.write_text(first.read_text()[:200])
    proc, m = acceptance(*select, opts=('--resume',))
    assert 'Traceback' not in proc.stdout + proc.stderr
    dropped = [ln for ln in proc.stderr.splitlines() if 'dropped part' in ln]
    assert len(dropped) == 1 and str(first) in dropped[0]
    assert m.group(1) == 'PASS' and 'parts=' not in proc.stdout.splitlines()[-1]
    (whole,) = runs.glob('acceptance-generic-quick-*.run')
    assert first.name not in whole.read_text()


@pytest.mark.parametrize('args,message', [
    (['-m'], 'option -m needs a value'),
    (['-s'], 'option -s needs a value'),
    (['-m', '-s', 'generic'], 'option -m needs a value'),
    (['--bogus'], "unknown option '--bogus'"),
    (['-s', 'nosuch'], "unknown system 'nosuch'"),
    (['-m', 'nope'], "unknown mode 'nope'"),
    (['--time-box='], 'option --time-box needs a value'),   # was the default box
    (['--system='], 'option --system needs a value'),       # was the system detected
    (['--mode='], 'option --mode needs a value'),
    # what the script sets itself, given again to ReFrame: the last value would win
    (['-m', 'quick', '--', '--mode', 'full'], "'--mode' after --: acceptance.sh sets it"),
    (['--', '--system=testnodes'], "'--system' after --: acceptance.sh sets it"),
    (['--', '-x', 'Npb', '--report-file', 'x.json'], "'--report-file' after --"),
    (['--', '--syst=testnodes'], "'--syst' after --"),      # ReFrame takes a prefix
    (['--', '-C/dev/null'], "'-C/dev/null' after --"),
])
def test_usage_errors_exit_2(root, args, message):
    proc = subprocess.run([str(root / 'scripts' / 'acceptance.sh'), *args], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize('case', ['reports under a file', 'list is a folder',
                                  'configuration does not load'])
def test_what_would_fail_after_the_run_is_refused_before_it(root, tmp_path, case):
    """Each was found only after ReFrame had run (a report folder that cannot be made:
    PASS with "placement report failed"), or ran ReFrame anyway (a run list that is a
    folder), or named the system "unknown" and failed without a word of why (a system
    file with an error, no -s given): now one line, exit 2, before ReFrame starts."""
    results = tmp_path / 'results'
    env = {**os.environ, 'PLACEMENT_RESULTS': str(results)}
    (tmp_path / 'afile').write_text('')
    if case == 'reports under a file':
        env['PLACEMENT_REPORTS'] = str(tmp_path / 'afile' / 'reports')
        said = f"PLACEMENT_REPORTS '{tmp_path}/afile/reports' cannot be made: '{tmp_path}/afile' is not a folder"
    elif case == 'list is a folder':
        (results / 'runs' / 'unfinished-acceptance-generic-quick.run').mkdir(parents=True)
        said = 'unfinished-acceptance-generic-quick.run\' is not a file'
    else:
        (tmp_path / 'systems').mkdir()
        (tmp_path / 'systems' / 'broken.py').write_text('x(\n')
        env['PLACEMENT_SYSTEMS'] = str(tmp_path / 'systems')
        said = 'the configuration does not load ('
    args = ['-m', 'quick'] + (['-s', 'generic'] if case == 'list is a folder' else [])
    proc = subprocess.run([str(root / 'scripts' / 'acceptance.sh'), *args], cwd=root,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 2 and said in proc.stderr, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert 'Traceback' not in proc.stdout + proc.stderr
    assert not list(results.glob('runs/run-report-*')), 'ReFrame ran'


def test_a_second_run_on_the_same_results_folder_is_refused(root, tmp_path):
    results = tmp_path / 'results'
    (results / 'runs').mkdir(parents=True)
    lock = results / '.acceptance.lock'
    (results / '.acceptance.lock.pid').write_text('pid 4242, started 2026-11-23T10:00:00Z\n')
    # a run in progress holds the lock (flock, as acceptance.sh takes it)
    with held_lock(lock):
        proc = subprocess.run([str(root / 'scripts' / 'acceptance.sh'), '-m', 'quick'],
                              cwd=root, capture_output=True, text=True, timeout=120,
                              env={**os.environ, 'PLACEMENT_RESULTS': str(results)})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f'acceptance.sh: another acceptance run is using {results} (pid 4242, started '
        '2026-11-23T10:00:00Z): wait for it, or give this one its own PLACEMENT_RESULTS']
    assert not list((results / 'runs').iterdir())      # nothing started, nothing written


@pytest.mark.parametrize('script', ['acceptance.sh', 'scheduled.sh'])
def test_a_relative_results_folder_is_the_callers(root, tmp_path, script):
    """Both scripts run in the checkout; PLACEMENT_RESULTS=results given from elsewhere is
    still the caller's results/ (here shown by the lock of a run in progress there, and by
    where a scheduled run's log goes)."""
    results = tmp_path.resolve() / 'results'
    (results / 'runs').mkdir(parents=True)
    (results / '.acceptance.lock.pid').write_text('pid 4242, started 2026-11-23T10:00:00Z\n')
    with held_lock(results / '.acceptance.lock'):
        proc = subprocess.run([str(root / 'scripts' / script), '-m', 'quick'],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={**os.environ, 'PLACEMENT_RESULTS': 'results'})
    assert proc.returncode == 2
    refused = (f'acceptance.sh: another acceptance run is using {results} (pid 4242, '
               'started 2026-11-23T10:00:00Z): wait for it, or give this one its own '
               'PLACEMENT_RESULTS')
    if script == 'acceptance.sh':
        assert proc.stderr.strip().splitlines() == [refused]
    else:
        logs = list((results / 'runs').glob('scheduled-*.log'))
        assert len(logs) == 1 and refused in logs[0].read_text()
        assert f'its whole output: {logs[0]}' in proc.stdout


def test_a_lock_path_that_is_a_directory_is_said_as_such(root, tmp_path):
    results = tmp_path / 'results'
    (results / 'runs').mkdir(parents=True)
    (results / '.acceptance.lock').mkdir()
    (results / '.acceptance.lock.pid').write_text('pid 4242, started 2026-11-23T10:00:00Z\n')
    proc = subprocess.run([str(root / 'scripts' / 'acceptance.sh'), '-m', 'quick'],
                          cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'PLACEMENT_RESULTS': str(results)})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f'acceptance.sh: cannot open the lock file {results}/.acceptance.lock (a directory): '
        'remove or fix it, or give this one its own PLACEMENT_RESULTS']
    assert not list((results / 'runs').iterdir())      # nothing started, nothing written


RATE_CHECKS = RATE_CASE + '''

from placement.testlib.node_load import NodeLoadMixin


@rfm.simple_test
class ConfirmCase(RateCase):
    """``flaky`` misses its reference in its first session only (a state of the node);
    ``slow`` in every session (a lasting change)."""
    case = parameter(['flaky', 'slow'])
    #: a file counting the sessions that ran the flaky case
    counter = variable(str, value='')
    reference = {'*': {'rate_seen': (100.0, -0.5, None, 'MB/s')}}

    @run_before('run')
    def command(self):
        script = ('n=$(cat {0} 2>/dev/null || echo 0); echo $((n + 1)) > {0}; '
                  '[ "$n" = 0 ] && echo rate=10 || echo rate=100').format(self.counter)
        self.executable_opts = ['-c', repr(script) if self.case == 'flaky' else "'echo rate=10'"]


@rfm.simple_test
class LoadCase(RateCase, NodeLoadMixin):
    """A job that waits a second: what its node's CPU pressure says is the node's."""
    case = parameter(range(5))
    executable_opts = ['-c', "'sleep 1; echo rate=100'"]
'''


@pytest.mark.parametrize('case,confirm', [('flaky', '1'), ('slow', '1'), ('flaky', '0')])
def test_a_performance_failure_stands_only_if_its_confirmation_session_shows_it(
        root, acceptance_sh, tmp_path, case, confirm):
    checks = tmp_path / 'rate_cases.py'
    checks.write_text(RATE_CHECKS)
    results = tmp_path / 'results'
    env = {**os.environ, 'PLACEMENT_RESULTS': str(results), 'ACCEPTANCE_CONFIRM': confirm,
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'),
           'PLACEMENT_BASELINES': str(tmp_path / 'baselines')}
    proc = acceptance_sh(env, checks, '-n', f'%case={case}', '-S', f'counter={tmp_path / "n"}',
                         timeout=600)
    last = proc.stdout.rstrip().splitlines()[-1]
    confirms = list((results / 'runs').glob('confirm-report-*.json'))
    if confirm == '0':
        assert proc.returncode == 1 and ' FAIL 0 passed, 1 failed ' in last, proc.stdout[-3000:]
        assert not confirms and 'confirmation session' not in proc.stdout
        return
    assert '== confirmation session: 1 check(s)' in proc.stdout, proc.stdout[-3000:]
    (report,) = confirms
    ran = [tc['display_name'] for r in json.loads(report.read_text())['runs']
           for tc in r['testcases']]
    assert ran == [f'ConfirmCase %case={case}']       # the failed check, nothing else
    if case == 'flaky':
        assert proc.returncode == 0 and ' PASS 1 passed, 0 failed (0 perf regressions)' in last
        assert ' confirmed 0 of 1' in last
        (un,) = [ln for ln in proc.stdout.splitlines() if ln.startswith('UNCONFIRMED ')]
        assert ('UNCONFIRMED ConfirmCase %case=flaky @generic+gnu [first session: performance: '
                'rate_seen=10.0 MB/s, expected 100.0 (l=50.0, u=inf)] passed its confirmation '
                'session') in un
        # the report answers as the summary does, the first session's failure worded as such
        (readme,) = (tmp_path / 'reports').glob('generic-*/README.md')
        text = readme.read_text()
        assert "**PASS**: the acceptance run's answer, its confirmation session included" in text
        assert ('First session (build fixtures not counted, the acceptance line counts them): '
                '0 case(s) passed, 1 failed') in text
        # as printed, each escaped for Markdown (its brackets are text, not a link)
        assert markdown(un) in text and markdown(last) in text
    else:
        assert proc.returncode == 1 and ' FAIL 0 passed, 1 failed (1 perf regressions)' in last
        assert ' confirmed 1 of 1' in last and 'UNCONFIRMED' not in proc.stdout
    # the baseline is recorded from the run, never from its confirmation
    first = reading.run_report.latest(results / 'runs')
    assert first.name.startswith('run-report-')
    if case == 'slow':
        # the next run's report compares with this run, not with its confirmation session
        # (newer, stored in the same results database, marked by a session extra)
        assert json.loads(report.read_text())['session_info']['acceptance'] == 'confirmation'
        again = subprocess.run(proc.args, cwd=root, env=env, capture_output=True, text=True,
                               timeout=600)
        assert again.returncode == 1, again.stdout[-3000:]
        (readme,) = sorted((tmp_path / 'reports').glob('generic-*/README.md'))[-1:]
        uuid = json.loads(first.read_text())['session_info']['uuid']
        assert f'Previous run: session {uuid[:8]} ' in readme.read_text(), again.stdout[-3000:]
        # and its history counts whole runs only, not the confirmation between them (ReFrame's
        # query ends at this run's end, exclusive: a run within one second is not counted)
        infos = [json.loads(p.read_text())['session_info']
                 for p in (results / 'runs').glob('run-report-*.json')]
        end = max(i['time_end'] for i in infos)
        runs = sum(i['time_start'] < end for i in infos)
        assert f'History: {runs} stored session(s) of this system' in readme.read_text()
        # no value has stored launches to judge: no history page, no link
        assert not (tmp_path / 'reports' / 'history').exists()
        assert '[history](' not in readme.read_text()


@pytest.mark.skipif(not Path('/proc/pressure/cpu').exists(), reason='this kernel has no PSI')
def test_a_node_under_a_competing_load_fails_on_one_node_line(acceptance_sh, tmp_path):
    checks = tmp_path / 'rate_cases.py'
    checks.write_text(RATE_CHECKS)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'),
           'PLACEMENT_BASELINES': str(tmp_path / 'baselines')}
    # busy loops, two per CPU, for the whole run and its confirmation
    loops = [subprocess.Popen(['bash', '-c', 'while :; do :; done'])
             for _ in range(2 * (os.cpu_count() or 1))]
    try:
        proc = acceptance_sh(env, checks, '-n', 'LoadCase', timeout=600)
    finally:
        for p in loops:
            p.kill()
    lines = proc.stdout.rstrip().splitlines()
    assert proc.returncode == 1 and ' FAIL 5 passed, 0 failed ' in lines[-1], proc.stdout[-3000:]
    assert ' node=loaded' in lines[-1] and ' confirmed 1 of 1' in lines[-1]
    (node,) = [ln for ln in lines if ln.startswith('NODE generic: ')]
    assert 'node under a competing load: tasks waited for a CPU ' in node
    assert '== confirmation session: 5 check(s) run once more' in proc.stdout


GROSS_CHECKS = '''
import statistics
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, performance_function, run_before, sanity_function, variable

from placement.testlib.samples import PerfSamplesMixin


@rfm.simple_test
class GrossCase(rfm.RunOnlyRegressionTest, PerfSamplesMixin):
    """Twelve values of three launches each, the launches within about 0.3 % of each other
    and each session within about 1 % of another; ``slow_case`` runs ``factor`` times slower."""
    case = parameter(range(12))
    #: the case made slower, and by how much
    slow_case = variable(int, value=-1)
    factor = variable(float, value=1.0)
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    tags = {'quick'}
    executable = 'awk'

    @run_before('run')
    def command(self):
        level = (100.0 + 10 * self.case) / (self.factor if self.case == self.slow_case else 1)
        self.executable_opts = [
            '-v', f'level={level}', "'BEGIN { srand(); s = level * (1 + 0.01 * (rand() - 0.5)); "
            "for (i = 0; i < 3; i++) print \\"rate=\\" s * (1 + 0.006 * (rand() - 0.5)) }'"]

    @sanity_function
    def validate(self):
        return sn.assert_eq(sn.count(sn.extractall(r'^rate=', self.stdout)), 3)

    @performance_function('MB/s')
    def rate_seen(self):
        @sn.deferrable
        def median():
            runs = sn.evaluate(sn.extractall(r'^rate=(\\S+)', self.stdout, 1, float))
            self.perf_launches = {**self.perf_launches, 'rate_seen': list(runs)}
            return statistics.median(runs)
        return median()
'''


def test_a_lone_value_40_percent_slower_fails_from_one_baseline_session(root, acceptance_sh,
                                                                        tmp_path):
    """The workflow of a site's first week on twelve tight values: the first run, its record,
    an unchanged rerun (PASS), then one value 40 % slower in the run and its confirmation:
    FAIL on that value, regressed in two sessions (ReFrame's x2 reference passes it)."""
    checks = tmp_path / 'gross_cases.py'
    checks.write_text(GROSS_CHECKS)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'),
           'PLACEMENT_BASELINES': str(tmp_path / 'baselines')}

    def run(*opts: str) -> tuple[int, list[str]]:
        proc = acceptance_sh(env, checks, *opts, prefix=tmp_path / 'rfm')
        lines = proc.stdout.rstrip().splitlines()
        assert lines and lines[-1].startswith('ACCEPTANCE '), proc.stdout[-3000:] + proc.stderr
        return proc.returncode, lines

    status, lines = run()
    assert status == 0, lines[-5:]
    rec = subprocess.run([str(root / '.venv' / 'bin' / 'placement'), 'baseline', 'record',
                          '--system', 'generic', '--from', 'latest'],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert rec.returncode == 0, rec.stderr
    status, lines = run()
    assert status == 0 and ' PASS 12 passed, 0 failed (0 perf regressions)' in lines[-1], lines
    status, lines = run('-S', 'GrossCase.slow_case=3', '-S', 'GrossCase.factor=1.4')
    assert status == 1, lines
    assert any(ln.startswith('== confirmation session: 1 check(s)') for ln in lines), lines
    (reg,) = [ln for ln in lines if ln.startswith('regression vs baseline sessions: ')]
    # gross in both sessions, or (when the first session's three launches happen to be tight
    # enough for the test across launches) regressed outright and confirmed
    assert re.search(r'GrossCase %case=3 @generic:default\+gnu rate_seen regressed'
                     r'( gross in two sessions \(\+|: median -2\d\.\d%)', reg), reg
    assert ' FAIL 12 passed, 0 failed (1 perf regressions) ' in lines[-1]
    assert ' confirmed 1 of 1 ' in lines[-1], lines[-1]
    # the report links the system's history page, read from ReFrame's storage: the three
    # runs with the value 40% slower in the last, and the confirmation session after it
    (readme,) = sorted((tmp_path / 'reports').glob('generic-*/README.md'))[-1:]
    assert '[history](../history/generic/index.html)' in readme.read_text()
    page = (tmp_path / 'reports' / 'history' / 'generic' / 'index.html').read_text()
    assert len(re.findall(r'<tr[^>]*><td>\d{4}-\d\d-\d\d ', page)) == 3, page[-3000:]
    assert '1 confirmation session(s) in the storage' in page, page[-3000:]
