"""Every acceptance run ends with its one ACCEPTANCE line and a documented exit status.

Live runs of scripts/acceptance.sh on throw-away checks: a baseline the summary cannot
judge (cut mid-line, a NaN or negative reference, runs of 5e-324) makes the run
INCOMPLETE with the cause named once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from held_lock import is_held
from stuck_run import end_run, run_processes, running as _running, stuck_report
from stuck_run import sigint_default as _sigint_default
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


def _start(root: Path, env: dict, checks: Path, prefix: Path, *args: str,
           opts: tuple[str, ...] = ()) -> subprocess.Popen:
    """scripts/acceptance.sh started as a terminal starts it: the leader of its own process
    group, SIGINT not ignored (Ctrl-C reaches the whole group)."""
    return subprocess.Popen(
        [str(root / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s', 'generic', *opts, '--',
         '-c', str(checks), '--prefix', str(prefix), *args], cwd=root, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=_sigint_default)


def _wait_for_file(path: Path, proc: subprocess.Popen, seconds: float = 120) -> int:
    """The pid ``path`` holds once written (the run still going)."""
    for _ in range(int(seconds * 5)):
        if path.is_file() and path.read_text().strip():
            return int(path.read_text())
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise AssertionError(f'{path} never written')


def _finish(proc: subprocess.Popen, results: Path, timeout: int = 120) -> tuple[str, str]:
    """The run's output once it has ended; a run still going after ``timeout`` fails the test
    with what its processes were doing (they are then killed)."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        report = run_processes(proc.pid)
        end_run(report)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:     # a pipe still held open by one of them
            out, err = '', '(not read: the pipes stayed open)'
        pytest.fail(f'the run had not ended {timeout}s after the signal\n'
                    f'{stuck_report(report, results, out, err)}', pytrace=False)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()


@pytest.mark.parametrize('sig,whom', [
    pytest.param(signal.SIGINT, 'group', id='ctrl-c-to-the-group'),
    pytest.param(signal.SIGTERM, 'script', id='sigterm-to-the-script'),
])
def test_a_signal_stops_reframe_and_its_jobs_and_the_run_ends_unfinished(root, hang, sig,
                                                                         whom):
    """Ctrl-C reaches the script's group but not ReFrame's (the time box's timeout has its
    own): the script passes it on; ReFrame cancels its job, the job's detached child ends
    with the run, and the run is UNFINISHED (exit 3), its part kept for --resume."""
    _, pids = hang
    tmp = pids.parent
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'PLACEMENT_BASELINES': str(tmp / 'baselines')}
    proc = _start(root, env, tmp / 'hang_cases.py', tmp / 'rfm', '-S', f'pids={pids}',
                  '-n', '%case=(ok|unlimited)')
    detached = _wait_for_file(pids / 'unlimited', proc)
    job = _ppid(detached)
    time.sleep(1)
    started = time.monotonic()
    if whom == 'group':
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    out, err = _finish(proc, tmp / 'results')
    lines = out.rstrip().splitlines()
    assert proc.returncode == 3, out[-3000:] + err[-2000:]
    assert time.monotonic() - started < 60
    name = signal.Signals(sig).name
    assert lines[-1].startswith('ACCEPTANCE generic quick: UNFINISHED '), lines[-1]
    assert f'stopped by {name}: continue with --resume' in lines[-1]
    assert sum(ln.startswith('ACCEPTANCE ') for ln in lines) == 1
    # a user's stop is no hang: the case is interrupted, neither HUNG nor failed
    assert not [ln for ln in lines if ln.startswith('HUNG ')], out[-3000:]
    assert lines[-1].startswith('ACCEPTANCE generic quick: UNFINISHED 1 passed, 0 failed ')
    assert not _alive(detached) and not _running(job)
    assert not is_held(tmp / 'results' / '.acceptance.lock')
    runs = tmp / 'results' / 'runs'
    listed = (runs / 'unfinished-acceptance-generic-quick.run').read_text().split()
    assert len(listed) == 1 and (runs / listed[0]).is_file()     # resumable
    assert not list(runs.glob('acceptance-generic-quick-*.run'))
    assert 'Traceback' not in out + err
    # ReFrame's last lines, written after the interrupt, reach the terminal and its .out file
    ran = 'Ran 1/2 test case(s) from 2 check(s)'
    assert ran in out and ran in (runs / listed[0]).with_suffix('.out').read_text(), out[-3000:]


def _stopped_once_hung(proc: subprocess.Popen, pids: Path, sig: int) -> tuple[str, str]:
    """The output of the run ``proc`` once ``sig`` was sent to its whole process group while
    the ``unlimited`` case hung (its pid written)."""
    _wait_for_file(pids / 'unlimited', proc)
    time.sleep(1)
    os.killpg(proc.pid, sig)
    return _finish(proc, pids.parent / 'results')


def test_resume_runs_again_a_case_a_ctrl_c_stopped(root, hang):
    """A Ctrl-C stops a case with no time limit as the time box does (ReFrame records both
    alike), but it is no hang: --resume runs it again (it writes its pid again)."""
    _, pids = hang
    tmp = pids.parent
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'PLACEMENT_BASELINES': str(tmp / 'baselines')}
    select = ('-S', f'pids={pids}', '-n', '%case=(ok|unlimited)')
    for n, opts in enumerate(((), ('--resume',))):
        proc = _start(root, env, tmp / 'hang_cases.py', tmp / 'rfm', *select, opts=opts)
        out, err = _stopped_once_hung(proc, pids, signal.SIGINT)
        lines = out.rstrip().splitlines()
        assert proc.returncode == 3, out[-3000:] + err[-2000:]
        assert not [ln for ln in lines if ln.startswith('HUNG ')], out[-3000:]
        assert 'stopped by SIGINT: continue with --resume' in lines[-1], lines[-1]
        (pids / 'unlimited').rename(pids / f'unlimited.{n}')    # the next run writes it anew
    assert '== resuming: 1 earlier part(s), 1 check(s) already finished\n' in out, out[-3000:]
    assert lines[-1].startswith('ACCEPTANCE generic quick: UNFINISHED 1 passed, 0 failed '), \
        lines[-1]
    assert ' parts=2 ' in lines[-1]


def _scheduled(root: Path, env: dict, checks: Path, *args: str,
               opts: tuple[str, ...] = ()) -> subprocess.Popen:
    """scripts/scheduled.sh started as systemd, Slurm or ``timeout`` start it: the leader of
    its own process group, which a stop signals as a whole."""
    return subprocess.Popen(
        [str(root / 'scripts' / 'scheduled.sh'), '-m', 'quick', '-s', 'generic', *opts, '--',
         '-c', str(checks), *args], cwd=root, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_sigint_default)


def test_a_scheduled_run_stopped_as_a_whole_mails_its_lines_and_goes_on_next_window(root,
                                                                                   hang):
    """``systemctl stop`` or ``scancel`` sends SIGTERM to every process of the run: the mail
    still gets the UNFINISHED line and exit 3, ReFrame's last lines reach the log; the next
    window's ``--resume-or-start`` goes on with it; a plain run sets it aside, saying so in
    the mail and keeping its parts' list; ``--resume-or-start`` with nothing unfinished
    starts a new run."""
    _, pids = hang
    tmp = pids.parent
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'PLACEMENT_BASELINES': str(tmp / 'baselines')}
    runs = tmp / 'results' / 'runs'
    select = ('--prefix', str(tmp / 'rfm'), '-S', f'pids={pids}', '-n', '%case=(ok|unlimited)')
    for n, opts in enumerate(((), ('--resume-or-start',))):
        proc = _scheduled(root, env, tmp / 'hang_cases.py', *select, opts=opts)
        out, err = _stopped_once_hung(proc, pids, signal.SIGTERM)
        mail = out.rstrip().splitlines()
        assert proc.returncode == 3, out[-3000:] + err[-2000:]
        assert mail[-1].startswith('ACCEPTANCE generic quick: UNFINISHED 1 passed, 0 failed ')
        assert 'stopped by SIGTERM: continue with --resume' in mail[-1]
        assert mail[-2].startswith('acceptance.sh exit status 3 (stopped by SIGTERM); ')
        log = Path(mail[-2].rsplit(' ', 1)[1]).read_text()
        ran = ('Ran 1/2 test case(s) from 2 check(s)', 'Ran 0/1 test case(s) from 1 check(s)')[n]
        assert ran in log, log[-3000:]        # ReFrame's last lines, after the stop
        (pids / 'unlimited').rename(pids / f'unlimited.{n}')    # the next run writes it anew
    assert '== resuming: 1 earlier part(s), 1 check(s) already finished' in log, log[-3000:]
    assert ' parts=2 ' in mail[-1]
    unfinished = runs / 'unfinished-acceptance-generic-quick.run'
    parts = unfinished.read_text()

    only_ok = ('--prefix', str(tmp / 'rfm'), '-S', f'pids={pids}', '-n', '%case=ok')
    for opts in ((), ('--resume-or-start',)):
        proc = _scheduled(root, env, tmp / 'hang_cases.py', *only_ok, opts=opts)
        out, err = _finish(proc, tmp / 'results')
        mail = out.rstrip().splitlines()
        assert proc.returncode == 0, out[-3000:] + err[-2000:]
        assert mail[-1].startswith('ACCEPTANCE generic quick: PASS 1 passed, 0 failed ')
        log = Path(mail[-2].rsplit(' ', 1)[1]).read_text()
        if not opts:
            (aside,) = runs.glob('set-aside-acceptance-generic-quick-*.run')
            assert aside.read_text() == parts and not unfinished.exists()
            assert mail[0] == ('== an unfinished quick run of generic is set aside: this run '
                               f'starts afresh (its parts listed in {aside}; --resume or '
                               '--resume-or-start would have continued it)'), mail
        else:
            assert ('== no unfinished quick run of generic to resume: this run starts afresh'
                    in log), log[-3000:]
            assert len(mail) == 2, mail


@pytest.mark.parametrize('sig,whom', [
    pytest.param(signal.SIGINT, 'group', id='ctrl-c-to-the-group'),
    pytest.param(signal.SIGTERM, 'script', id='sigterm-to-the-script'),
])
def test_a_signal_before_reframe_starts_leaves_it_unstarted(root, hang, sig, whom):
    """A signal while the script still looks up its system (no ReFrame to interrupt yet)
    ended nothing: ReFrame then ran the whole session (a hanging case until the time box),
    or a Ctrl-C read as an unknown system (exit 2)."""
    _, pids = hang
    tmp = pids.parent
    bindir = tmp / 'bin'
    bindir.mkdir()
    (bindir / 'placement').symlink_to(root / '.venv' / 'bin' / 'placement')
    wrapper = bindir / 'reframe'
    wrapper.write_text(
        '#!/bin/bash\n'
        'case " $* " in *" --show-config=systems/0/name "*)\n'
        f'  echo $$ > {pids}/config; sleep 3 ;; esac\n'
        f'exec {root / ".venv" / "bin" / "reframe"} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'), 'REFRAME': str(wrapper)}
    proc = _start(root, env, tmp / 'hang_cases.py', tmp / 'rfm', '-S', f'pids={pids}',
                  '-n', '%case=unlimited')
    _wait_for_file(pids / 'config', proc)
    if whom == 'group':
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    out, err = _finish(proc, tmp / 'results')
    name = signal.Signals(sig).name
    assert proc.returncode == 3, out[-3000:] + err[-2000:]
    assert out.rstrip().splitlines()[-1] == (
        f'ACCEPTANCE generic quick: UNFINISHED 0 passed, 0 failed (stopped by {name} before '
        'ReFrame ran: nothing changed, run again)'), out[-2000:]
    assert not (pids / 'unlimited').exists()          # no job ran
    assert not (tmp / 'results' / 'runs' / 'unfinished-acceptance-generic-quick.run').exists()
    assert not is_held(tmp / 'results' / '.acceptance.lock')


def test_sigterm_while_a_reader_blocks_leaves_nothing_holding_the_lock(root, hang):
    """A reader blocked for good (a baseline that is a FIFO, before it was refused) kept the
    script from its trap, and SIGTERM left it running with the run lock: the next run exited
    2. Every child is waited for in the background, and ended with the run."""
    _, pids = hang
    tmp = pids.parent
    fifo = tmp / 'fifo'
    os.mkfifo(fifo)
    bindir = tmp / 'bin'
    bindir.mkdir()
    (bindir / 'reframe').symlink_to(root / '.venv' / 'bin' / 'reframe')
    wrapper = bindir / 'placement'
    wrapper.write_text(
        '#!/bin/bash\n'
        f'if [ "$1 $2" = "acceptance confirm" ]; then echo $$ > {pids}/reader; '
        f'exec cat {fifo}; fi\n'
        f'exec {root / ".venv" / "bin" / "placement"} "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'PLACEMENT_BASELINES': str(tmp / 'baselines'), 'REFRAME': str(bindir / 'reframe')}
    proc = _start(root, env, tmp / 'hang_cases.py', tmp / 'rfm', '-S', f'pids={pids}',
                  '-n', '%case=ok')
    reader = _wait_for_file(pids / 'reader', proc)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGTERM)
    out, err = _finish(proc, tmp / 'results')
    try:
        assert proc.returncode == 3, out[-3000:] + err[-2000:]
        assert out.rstrip().splitlines()[-1].startswith(
            'ACCEPTANCE generic quick: UNFINISHED 1 passed, 0 failed '), out[-2000:]
        assert 'stopped by SIGTERM: continue with --resume' in out
        assert not _running(reader)
        assert not is_held(tmp / 'results' / '.acceptance.lock')
    finally:
        if _running(reader):
            os.kill(reader, 9)


SLOW_LOAD_CHECKS = '''
import time

import reframe as rfm  # noqa: F401  (ReFrame loads only a file that imports reframe)

time.sleep(120)     # ReFrame is still loading this file when the time box ends
'''


def test_a_time_box_spent_before_reframe_writes_anything_is_unfinished(root, hang,
                                                                       acceptance_sh):
    """No report at all is no failure of a case: the run is UNFINISHED (exit 3) and --resume
    starts it from the beginning."""
    _, pids = hang
    tmp = pids.parent
    slow = tmp / 'slow_load.py'
    slow.write_text(SLOW_LOAD_CHECKS)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'),
           'PLACEMENT_REPORTS': str(tmp / 'reports'),
           'PLACEMENT_BASELINES': str(tmp / 'baselines')}
    proc = acceptance_sh(env, slow, opts=('-t', '3'), prefix=tmp / 'rfm', timeout=300)
    lines = proc.stdout.rstrip().splitlines()
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert lines[-1] == ('ACCEPTANCE generic quick: UNFINISHED 0 passed, 0 failed (no case '
                         'finished: time box of 3s reached before ReFrame wrote its report; '
                         'continue with --resume)'), lines[-1]
    assert not is_held(tmp / 'results' / '.acceptance.lock')
    proc = acceptance_sh(env, tmp / 'hang_cases.py', '-S', f'pids={pids}', '-n', '%case=ok',
                         opts=('--resume',), prefix=tmp / 'rfm')
    assert '== resuming: 0 earlier part(s), 0 check(s) already finished' in proc.stdout
    assert proc.returncode == 0 and proc.stdout.rstrip().splitlines()[-1].startswith(
        'ACCEPTANCE generic quick: PASS 1 passed, 0 failed '), proc.stdout[-3000:]
