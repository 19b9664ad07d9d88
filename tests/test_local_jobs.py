"""The local scheduler's sweep of a job's detached processes, and ReFrame's poll loop on the
monotonic clock: each gated on its ReFrame versions, checked on and off.

Switched off (``PLACEMENT_REFRAME_WORKAROUNDS=off``), real ReFrame runs show what each works
around: the child a timed-out job detached keeps running, and a wall clock set back an hour
during a job (for ReFrame alone, through a preloaded ``clock_gettime``) stalls the run.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip('reframe')

from placement.util import local_jobs, poll_clock  # noqa: E402
from placement.util import reframe_workarounds as rw  # noqa: E402


def _detached(tag: str) -> subprocess.Popen:
    """A process in a session of its own carrying a job's tag, as a job's ``setsid`` child."""
    return subprocess.Popen(['sleep', '300'], start_new_session=True,
                            env={**os.environ, local_jobs.TAG_VAR: tag})


def test_sweep_ends_the_tagged_processes_only():
    tag, other = uuid.uuid4().hex, uuid.uuid4().hex
    mine, theirs = _detached(tag), _detached(other)
    try:
        assert local_jobs.tagged(tag) == [mine.pid]
        assert local_jobs.sweep(tag, 9) == [mine.pid]
        assert mine.wait(timeout=10) == -9
        assert theirs.poll() is None and local_jobs.tagged(other) == [theirs.pid]
        assert local_jobs.sweep(tag, 9) == []        # nothing left: nothing signalled
    finally:
        for p in (mine, theirs):
            p.kill()
            p.wait()


def test_the_local_scheduler_is_the_sweeping_one_on_this_reframe():
    from reframe.core.backends import getscheduler
    local_jobs.install()
    assert (getscheduler('local') is local_jobs.SweepingLocalScheduler) == \
        rw.LOCAL_SWEEP.applies()


def test_the_poll_loop_runs_on_the_monotonic_clock_on_this_reframe():
    from reframe.frontend.executors import policies
    poll_clock.install()
    assert (policies.time.time is time.monotonic) == rw.MONOTONIC_POLL.applies()
    assert policies.time.sleep is time.sleep


def test_both_left_alone_when_switched_off():
    code = ('from placement.util import local_jobs, poll_clock; local_jobs.install(); '
            'poll_clock.install(); import time; from reframe.core.backends import getscheduler; '
            'from reframe.frontend.executors import policies; '
            'from reframe.core.schedulers.local import LocalJobScheduler; '
            'print(getscheduler("local") is LocalJobScheduler, policies.time is time)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env={**os.environ, 'PLACEMENT_REFRAME_WORKAROUNDS': 'off'},
                         timeout=120, check=True).stdout
    assert out.split() == ['True', 'True']


CHECK = '''
import shlex
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function, variable


@rfm.simple_test
class DetachCase(rfm.RunOnlyRegressionTest):
    pidfile = variable(str, value='')
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    executable = 'bash'
    time_limit = '2s'

    @run_before('run')
    def command(self):
        self.executable_opts = ['-c', shlex.quote(
            f'setsid sleep 302 </dev/null >/dev/null 2>&1 & echo $! > {self.pidfile}; sleep 300')]

    @sanity_function
    def validate(self):
        return sn.assert_true(True)
'''


@pytest.mark.reframe
@pytest.mark.parametrize('off', [False, True], ids=['on', 'off'])
def test_a_timed_out_job_takes_its_detached_child_along(root, reframe_bin, tmp_path, off):
    checks = tmp_path / 'detach.py'
    checks.write_text(CHECK)
    pidfile = tmp_path / 'pid'
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results')}
    if off:
        env['PLACEMENT_REFRAME_WORKAROUNDS'] = 'off'
    proc = subprocess.run([reframe_bin, '-C', str(root / 'config' / 'settings.py'),
                           '--system', 'generic', '-c', str(checks), '--prefix',
                           str(tmp_path / 'rfm'), '-S', f'pidfile={pidfile}', '-r'],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and 'job timed out' in proc.stdout, proc.stdout[-2000:]
    pid = int(pidfile.read_text())
    cmdline = Path(f'/proc/{pid}/cmdline')
    alive = cmdline.exists() and cmdline.read_bytes().split(b'\0')[:2] == [b'sleep', b'302']
    if alive:
        os.kill(pid, 9)
    assert alive == (off or not rw.LOCAL_SWEEP.applies()), shlex.join(proc.args)


#: ``clock_gettime(CLOCK_REALTIME)`` of the processes it is preloaded into, offset by the
#: seconds in ``$CLOCK_STEP_FILE``: a wall clock set back for ReFrame alone, no root needed
#: and the machine's clock untouched
CLOCK_STEP = r'''
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int r = real(id, ts);
    const char *f = getenv("CLOCK_STEP_FILE");
    if (r == 0 && id == CLOCK_REALTIME && f) {
        FILE *fp = fopen(f, "r");
        long off;
        if (fp) {
            if (fscanf(fp, "%ld", &off) == 1)
                ts->tv_sec += off;
            fclose(fp);
        }
    }
    return r;
}
'''

SLEEP_CHECK = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function, variable


@rfm.simple_test
class ClockStepCase(rfm.RunOnlyRegressionTest):
    started = variable(str, value='')
    valid_systems = ['*']
    valid_prog_environs = ['gnu']
    executable = 'bash'

    @run_before('run')
    def command(self):
        self.executable_opts = ['-c', f"'touch {self.started}; sleep 8; echo done'"]

    @sanity_function
    def validate(self):
        return sn.assert_found(r'^done', self.stdout)
'''


def _run_stepped(root: Path, reframe_bin: str, check: Path, work: Path,
                 env: dict) -> tuple[int | None, str]:
    """One ReFrame run of ``check``, its clock set back an hour 2 s into the job:
    (exit status, or None when it had not ended 30 s after the step; ReFrame's output)."""
    work.mkdir()
    step, started, out = work / 'offset', work / 'started', work / 'reframe.out'
    step.write_text('0')
    with out.open('w') as sink:
        proc = subprocess.Popen(
            [reframe_bin, '-C', str(root / 'config' / 'settings.py'), '--system', 'generic',
             '-c', str(check), '--prefix', str(work / 'rfm'),
             '-S', f'started={started}', '-r'],
            cwd=root, env={**env, 'CLOCK_STEP_FILE': str(step)}, stdout=sink,
            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(600):
            if started.exists():
                break
            time.sleep(0.1)
        assert started.exists(), 'the job did not start within a minute'
        # The poll loop's intervals count from its first snooze after the job started: a
        # step before that is no step to it. Stepped 2 s into the 8 s job, a loaded
        # machine's late first snooze lies before the step and several snoozes after it.
        time.sleep(2)
        step.write_text('-3600')           # the job runs: the wall clock goes back an hour
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rc = None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    return rc, out.read_text()[-1500:]


@pytest.mark.reframe
@pytest.mark.parametrize('off', [False, True], ids=['on', 'off'])
def test_a_clock_set_back_an_hour_during_a_job_does_not_stall_the_run(
        root, reframe_bin, tmp_path, off):
    if subprocess.run(['gcc', '--version'], capture_output=True).returncode:
        pytest.skip('no gcc to build the clock-step library')
    (tmp_path / 'step.c').write_text(CLOCK_STEP)
    subprocess.run(['gcc', '-shared', '-fPIC', '-o', str(tmp_path / 'step.so'),
                    str(tmp_path / 'step.c'), '-ldl'], check=True, timeout=120)
    check = tmp_path / 'check.py'
    check.write_text(SLEEP_CHECK)
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'LD_PRELOAD': str(tmp_path / 'step.so')}
    if off:
        env['PLACEMENT_REFRAME_WORKAROUNDS'] = 'off'
    rc, out = _run_stepped(root, reframe_bin, check, tmp_path / 'run1', env)
    if off or not rw.MONOTONIC_POLL.applies():
        if rc is not None:
            # a step the loop took before its first snooze does not stall it: once more
            rc, again = _run_stepped(root, reframe_bin, check, tmp_path / 'run2', env)
            out += '\n--- the second run ---\n' + again
        assert rc is None, f'ReFrame no longer stalls on a clock step: the workaround can go\n{out}'
    else:
        assert rc == 0, out
