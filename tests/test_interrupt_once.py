"""ReFrame's first SIGINT stops it; one more during its abort no longer leaves a job uncancelled.

Switched off (``PLACEMENT_REFRAME_WORKAROUNDS=off``), a real ReFrame run shows what the
workaround is for: a second SIGINT that comes while ReFrame cancels a hanging job (as GNU
``timeout`` sends it, once to ReFrame and once to its process group) stops the cancel, and
ReFrame then waits for the job it never cancelled. The cancel is slowed down here (by the
check file) so that the second SIGINT always comes during it, as it does now and then on a
loaded machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip('reframe')

from placement.util import reframe_workarounds as rw  # noqa: E402
from stuck_run import running as _running, sigint_default as _sigint_default  # noqa: E402


def _handler_after_install(start: str, off: bool = False) -> str:
    """The SIGINT handler's name after install(), in a Python whose SIGINT starts as
    ``start`` (``default`` or ``ignored``)."""
    code = ('import signal\n'
            f'if {start!r} == "ignored": signal.signal(signal.SIGINT, signal.SIG_IGN)\n'
            'from placement.util import interrupt_once; interrupt_once.install()\n'
            'h = signal.getsignal(signal.SIGINT)\n'
            'print("ignored" if h is signal.SIG_IGN else h.__name__)\n')
    env = {**os.environ, **({'PLACEMENT_REFRAME_WORKAROUNDS': 'off'} if off else {})}
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          env=env, timeout=120, check=True,
                          preexec_fn=_sigint_default).stdout.strip()


def test_installed_in_place_of_pythons_handler_on_this_reframe():
    expected = 'interrupt_once' if rw.INTERRUPT_ONCE.applies() else 'default_int_handler'
    assert _handler_after_install('default') == expected
    assert _handler_after_install('default', off=True) == 'default_int_handler'


def test_a_sigint_ignored_from_the_start_stays_ignored():
    assert _handler_after_install('ignored') == 'ignored'


def test_the_first_sigint_interrupts_and_the_ones_after_are_ignored():
    code = ('import os, signal, time\n'
            'from placement.util import interrupt_once; interrupt_once.install()\n'
            'try:\n'
            '    os.kill(os.getpid(), signal.SIGINT); time.sleep(5); print("not interrupted")\n'
            'except KeyboardInterrupt:\n'
            '    os.kill(os.getpid(), signal.SIGINT); os.kill(os.getpid(), signal.SIGTERM)\n'
            '    time.sleep(0.2); print("interrupted once")\n')
    if not rw.INTERRUPT_ONCE.applies():
        pytest.skip('the workaround is not meant for this ReFrame')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=120, preexec_fn=_sigint_default).stdout
    assert out.strip() == 'interrupted once'


CHECK = '''
import os
import shlex
import time

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function, variable
from reframe.core.schedulers.local import LocalJobScheduler

_cancel = LocalJobScheduler.cancel


def _slow_cancel(self, job):
    """The cancel, begun: the test's second SIGINT comes now."""
    open(os.environ['CANCEL_BEGUN'], 'w').close()
    time.sleep(2)
    return _cancel(self, job)


LocalJobScheduler.cancel = _slow_cancel


@rfm.simple_test
class HangingJob(rfm.RunOnlyRegressionTest):
    pidfile = variable(str, value='')
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    executable = 'bash'

    @run_before('run')
    def command(self):
        self.executable_opts = ['-c', shlex.quote(f'echo $$ > {self.pidfile}; sleep 300')]

    @sanity_function
    def validate(self):
        return sn.assert_true(True)
'''


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    for _ in range(int(seconds * 10)):
        if path.is_file() and path.read_text().strip() != '-':
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f'{path} never written')


@pytest.mark.reframe
@pytest.mark.parametrize('off', [False, True], ids=['on', 'off'])
def test_a_second_sigint_during_the_cancel_still_ends_the_job_and_reframe(
        root, reframe_bin, tmp_path, off):
    checks = tmp_path / 'hanging.py'
    checks.write_text(CHECK)
    pidfile, begun = tmp_path / 'pid', tmp_path / 'cancel-begun'
    begun.write_text('-')
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'CANCEL_BEGUN': str(begun)}
    if off:
        env['PLACEMENT_REFRAME_WORKAROUNDS'] = 'off'
    proc = subprocess.Popen([reframe_bin, '-C', str(root / 'config' / 'settings.py'),
                             '--system', 'generic', '-c', str(checks), '--prefix',
                             str(tmp_path / 'rfm'), '-S', f'pidfile={pidfile}', '-r'],
                            cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=_sigint_default)
    job = None
    try:
        _wait_for(pidfile, proc)
        job = int(pidfile.read_text())
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _wait_for(begun, proc, 60)        # the abort is cancelling the job
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=30)
            ended = True
        except subprocess.TimeoutExpired:
            out, ended = '', False
        assert ended == (not off and rw.INTERRUPT_ONCE.applies()), out[-3000:]
        if ended:
            assert proc.returncode == 1 and not _running(job), out[-3000:]
            assert 'run session stopped: cancelled by user' in out, out[-3000:]
        else:                              # waiting for the job it never cancelled
            assert _running(job)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if job and _running(job):
            os.killpg(os.getpgid(job), signal.SIGKILL)      # the job and its sleep
