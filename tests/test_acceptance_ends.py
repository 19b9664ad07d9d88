"""Every acceptance run ends with its one ACCEPTANCE line and a documented exit status.

Live runs of scripts/acceptance.sh on throw-away checks: a baseline the summary cannot
judge (cut mid-line, a NaN or negative reference, runs of 5e-324) makes the run
INCOMPLETE with the cause named once.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from rate_checks import RATE_CASE

pytestmark = pytest.mark.reframe

CHECKS = RATE_CASE + '''

@rfm.simple_test
class EndCase(RateCase):
    case = parameter(['a', 'b'])
    executable_opts = ['-c', "'echo rate=100'"]
'''


@pytest.fixture(scope='module')
def recorded(root, acceptance_sh, tmp_path_factory):
    """A first run of the checks and a baseline recorded from it: (env, checks, baseline)."""
    tmp = tmp_path_factory.mktemp('ends')
    checks = tmp / 'end_cases.py'
    checks.write_text(CHECKS)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'PLACEMENT_BASELINES': str(tmp / 'baselines')}
    proc = acceptance_sh(env, checks, prefix=tmp / 'results' / 'rfm')
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rec = subprocess.run([str(root / '.venv' / 'bin' / 'placement'), 'baseline', 'record',
                          '--system', 'generic', '--from', 'latest'],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert rec.returncode == 0, rec.stderr
    baseline = tmp / 'baselines' / 'generic.yaml'
    return env, checks, baseline, baseline.read_text()


def _cut_mid_line(text: str) -> str:
    at = text.index('sessions:', text.index('_samples:'))
    return text[:at + len('sess')]


@pytest.mark.parametrize('damage', [
    pytest.param(_cut_mid_line, id='cut-mid-line'),
    pytest.param(lambda t: t.replace('[100.0, -', '[.nan, -', 1), id='nan-reference'),
    pytest.param(lambda t: t.replace('[100.0, -', '[-100.0, -', 1), id='negative-reference'),
    pytest.param(lambda t: t.replace('runs: [100.0]', 'runs: [5.0e-324]'), id='subnormal-runs'),
])
def test_a_baseline_the_summary_cannot_judge_ends_the_run_incomplete(acceptance_sh, recorded,
                                                                     damage):
    env, checks, baseline, good = recorded
    baseline.write_text(damage(good))
    try:
        proc = acceptance_sh(env, checks, prefix=Path(env['PLACEMENT_RESULTS']) / 'rfm')
    finally:
        baseline.write_text(good)
    out = proc.stdout + proc.stderr
    lines = proc.stdout.rstrip().splitlines()
    accept = [ln for ln in lines if ln.startswith('ACCEPTANCE ')]
    assert len(accept) == 1 and lines[-1] == accept[0], out[-3000:]
    assert proc.returncode == 4, out[-3000:]
    head = 'ACCEPTANCE generic quick: INCOMPLETE 2 passed, 0 failed '
    assert accept[0].startswith(head), accept[0]
    # the file is refused where it is read (one NOTE line with its cause), or, should
    # anything else fail inside the summary, the line names that cause
    notes = [ln for ln in lines if ln.startswith('NOTE baseline refused: ')]
    if notes:
        assert len(notes) == 1 and 'baseline refused: nothing judged against it' in accept[0]
        cause = notes[0].split(': ', 2)[2]
    else:
        cause = accept[0][accept[0].index('(the summary could not judge the run: '):]
        cause = cause.split(': ', 1)[1]
    assert out.count(cause[:60]) == 1, out[-3000:]    # named once
    assert 'placement report failed' not in accept[0]
    assert 'Traceback' not in out and 'has no ACCEPTANCE line' not in out


HANG_CHECKS = '''
import shlex
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_before, sanity_function, variable


@rfm.simple_test
class HangCase(rfm.RunOnlyRegressionTest):
    """``limited`` and ``unlimited`` hang, each with a child it detached (``setsid``) whose
    pid it writes to ``pids``; ``limited`` has a time limit of its own."""
    case = parameter(['ok', 'limited', 'unlimited'])
    pids = variable(str, value='')
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    tags = {'quick'}
    executable = 'bash'

    @run_before('run')
    def command(self):
        if self.case == 'ok':
            self.executable_opts = ['-c', "'echo done'"]
            return
        if self.case == 'limited':
            self.time_limit = '3s'
        self.executable_opts = ['-c', shlex.quote(
            f'setsid sleep 301 </dev/null >/dev/null 2>&1 & echo $! > {self.pids}/{self.case}; '
            'sleep 300; echo done')]

    @sanity_function
    def validate(self):
        return sn.assert_found(r'^done', self.stdout)
'''


def _alive(pid: int) -> bool:
    """Whether ``pid`` is still the detached ``sleep 301`` (not a reused pid)."""
    try:
        return Path(f'/proc/{pid}/cmdline').read_bytes().split(b'\0')[:2] == [b'sleep', b'301']
    except OSError:
        return False


@pytest.fixture
def hang(acceptance_sh, tmp_path):
    """Runs scripts/acceptance.sh on the hanging checks; the detached pids' folder."""
    checks = tmp_path / 'hang_cases.py'
    checks.write_text(HANG_CHECKS)
    pids = tmp_path / 'pids'
    pids.mkdir()
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'),
           'PLACEMENT_BASELINES': str(tmp_path / 'baselines')}
    env.pop('ACCEPTANCE_TIME_BOX', None)

    def run(*args: str, opts: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
        return acceptance_sh(env, checks, '-S', f'pids={pids}', *args, opts=opts,
                             prefix=tmp_path / 'results' / 'rfm')
    yield run, pids
    for f in pids.iterdir():              # never leave one behind, whatever the test found
        pid = int(f.read_text())
        if _alive(pid):
            os.kill(pid, 9)


def test_a_hung_job_with_its_time_limit_fails_and_takes_its_detached_child(hang):
    run, pids = hang
    proc = run('-n', '%case=limited')
    lines = proc.stdout.rstrip().splitlines()
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert 'time box=3600s' in proc.stdout            # quick's default time box
    (fail,) = [ln for ln in lines if ln.startswith('FAIL HangCase %case=limited ')]
    assert 'job timed out' in fail
    assert lines[-1].startswith('ACCEPTANCE generic quick: FAIL 0 passed, 1 failed ')
    assert not _alive(int((pids / 'limited').read_text()))


def test_a_case_that_hangs_without_a_limit_is_named_and_resume_skips_it(hang):
    run, pids = hang
    proc = run('-n', '%case=(ok|unlimited)', opts=('-t', '20'))
    lines = proc.stdout.rstrip().splitlines()
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-2000:]
    (hung,) = [ln for ln in lines if ln.startswith('HUNG ')]
    assert hung.startswith('HUNG HangCase %case=unlimited @generic+gnu [no time limit of its '
                           'own, still running when the time box ended it after '), hung
    assert '--resume skips it' in hung and ' stage=' in hung
    assert lines[-1].startswith('ACCEPTANCE generic quick: UNFINISHED 1 passed, 1 failed ')
    assert not _alive(int((pids / 'unlimited').read_text()))

    (pids / 'unlimited').unlink()
    started = time.monotonic()
    proc = run('-n', '%case=(ok|unlimited)', opts=('--resume',))
    lines = proc.stdout.rstrip().splitlines()
    assert time.monotonic() - started < 120 and not (pids / 'unlimited').exists()  # not run
    assert 'or hung (skipped: HangCase %case=unlimited)' in proc.stdout, proc.stdout[-3000:]
    assert [ln for ln in lines if ln.startswith('HUNG ')] == [hung]
    assert proc.returncode == 1 and lines[-1].startswith(
        'ACCEPTANCE generic quick: FAIL 1 passed, 1 failed '), proc.stdout[-3000:]


def _ppid(pid: int) -> int:
    return int(Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[1])


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs: a killed process that init has not reaped yet (a zombie,
    state ``Z``) has ended."""
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def test_a_job_left_by_a_killed_reframe_ends_with_the_run(root, hang):
    """ReFrame killed outright (``timeout -k`` after an ignored interrupt, the OOM killer)
    cancels nothing: the run still ends the processes its jobs started, detached ones too."""
    run, pids = hang
    checks = Path(pids.parent / 'hang_cases.py')
    env = {**os.environ, 'PLACEMENT_RESULTS': str(pids.parent / 'results'),
           'PLACEMENT_REPORTS': str(pids.parent / 'reports')}
    proc = subprocess.Popen(
        [str(root / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s', 'generic', '--',
         '-c', str(checks), '--prefix', str(pids.parent / 'rfm'), '-S', f'pids={pids}',
         '-n', '%case=unlimited'], cwd=root, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if (pids / 'unlimited').is_file() and (pids / 'unlimited').read_text().strip():
                break
            time.sleep(0.2)
        detached = int((pids / 'unlimited').read_text())
        job = _ppid(detached)                 # the job's command, its parent ReFrame's job script
        reframe = _ppid(_ppid(job))
        assert b'reframe' in Path(f'/proc/{reframe}/cmdline').read_bytes()
        os.kill(reframe, 9)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1 and out.rstrip().splitlines()[-1].startswith(
        'ACCEPTANCE generic quick: FAIL reframe exited 137 without a report'), out[-2000:]
    assert not _alive(detached)
    assert not _running(job) or _ppid(job) != 1, 'the job outlived the run'
