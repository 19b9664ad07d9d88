"""The acceptance-mode NPB matrix on the emulated two-socket node, for what fits its speed.

Why a separate target (``make test-numa-npb``, about 14 minutes here): under QEMU's TCG on a
2-core host the node's eight PUs run NPB class A 9x (one thread) to 40x (eight threads) slower
than the host runs it serially, so the acceptance mode's class A cases outlast the budgets
written for a slow real core (:mod:`placement.npb.budget`). The node runs what its speed
allows: CG and IS class A at the full count (pinned and not, first-touch and interleave), IS
class A also at one thread and oversubscribed (2xfull, with its full-count run), two runs each,
every budget
longer by the scale the node's partition gives (``extras['npb_budget_scale']``,
``EMULATED_BUDGET_SCALE`` in config/common.py), no option on the command line. Classes B and
C, the other benchmarks and the counts between 1 and the full one are left to real nodes; the
docs (docs/howto/numa-node.md) give the times.

Needs the NPB tarball (``../shared/npb/NPB3.4.1.tar.gz``, as ``make test``): CG and IS
class A are built once into ``~/.cache/placement`` beside the S/W binaries.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from placement.checks import probe
from placement import npb

import live_reframe

pytestmark = [pytest.mark.numa, pytest.mark.reframe]

SELECT = (r'NpbAcceptanceCheck.*%benchmark=CG.*%npb_class=A.*%threads=full\b'
          r'.*%affinity=(none|scatter)'
          r'|NpbAcceptanceCheck.*%benchmark=IS.*%npb_class=A.*%threads=(1|full|2xfull)\b'
          r'.*%affinity=(none|scatter)')
TARBALL = Path(__file__).resolve().parents[2] / 'shared' / 'npb' / 'NPB3.4.1.tar.gz'
SCATTER_8 = [0, 4, 2, 6, 1, 5, 3, 7]       # as tests/test_numa_live.py: packages first


def _why_not() -> str:
    if os.environ.get('PLACEMENT_TEST_NUMA_NPB') != '1':
        return ('the acceptance-mode NPB cases on the emulated node take about 14 minutes: '
                '`make test-numa-npb` runs them')
    if not TARBALL.is_file() and not os.environ.get('NPB_ACCEPTANCE_DIR'):
        return (f'no NPB tarball at {TARBALL} and no NPB_ACCEPTANCE_DIR (a folder with '
                'cg.A.x and is.A.x)')
    return ''


_WHY_NOT = _why_not()
pytestmark.append(pytest.mark.skipif(bool(_WHY_NOT), reason=_WHY_NOT or 'runs'))


@pytest.fixture(scope='module')
def npb_a(root) -> Path:
    """CG and IS class A: NPB_ACCEPTANCE_DIR, else built once from the tarball."""
    given = os.environ.get('NPB_ACCEPTANCE_DIR')
    if given:
        return Path(given)
    prefix = Path.home() / '.cache' / 'placement' / 'npb-class-A-cg-is'
    proc = subprocess.run([str(root / '.venv' / 'bin' / 'placement'), 'npb', 'build',
                           '--tarball', str(TARBALL), '--classes', 'A', '--benchmarks', 'cg,is',
                           '--prefix', str(prefix), '--print-dir'],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return Path(proc.stdout.strip())


@pytest.fixture(scope='module')
def run(numa_node, reframe_bin, root, npb_a):
    """One ReFrame run of the selection on the node: (process, cases by display name)."""
    share = numa_node.share
    report = share / 'npb-acceptance.json'
    proc = live_reframe.reframe(
        reframe_bin, root, ['reframe_tests/npb.py'], '--system', 'testnuma:node', '-n', SELECT,
        '-p', 'gnu', '-S', f'npb_dir={npb_a}', '-S', 'repeats=2',
        # TCG's timing is the emulator's, not a node's: stability is judged on real nodes
        '-S', 'cv_limit=1000',
        '--prefix', str(share / 'rfm-npb'), '--report-file', str(report), '-r', timeout=3000,
        env={**numa_node.env, 'PLACEMENT_RESULTS': str(share / 'npb-results')})
    # the NPB cases alone (the binding probe's build is a fixture case of its own)
    cases = {name: tc for name, tc in live_reframe.last_attempts(report, proc).items()
             if name.startswith('NpbAcceptanceCheck')}
    return proc, cases


def _out(tc) -> str:
    return Path(tc['outputdir'], 'rfm_job.out').read_text()


def _runs(text: str) -> list[tuple[int, float, float]]:
    """Each run's exit status, watchdog limit and wall seconds (the job's own parser)."""
    return [(r.rc, r.limit_s, r.wall_s) for r in npb.output.parse_runs(text)]


def test_the_selection_is_the_matrix_that_fits(run):
    """CG at the full count x 2 maps x 2 policies, IS at 1, full and 2xfull x the same: 16."""
    _, cases = run
    got = sorted(cases)
    assert len(got) == 16, got
    assert sum('%benchmark=CG' in n for n in got) == 4
    assert sum('%threads=2xfull' in n for n in got) == 4
    assert sum('%threads=1 ' in n for n in got) == 4


def test_every_case_ran_verified_within_the_scaled_budgets(run):
    """Every case passed: NPB verified, class and threads as asked, no run stopped."""
    proc, cases = run
    bad = [f"{n}: {tc['result']}: {tc['fail_reason']}" for n, tc in cases.items()
           if tc['result'] != 'pass']
    assert not bad, '\n'.join(bad) + proc.stdout[-2000:]
    for name, tc in cases.items():
        text = _out(tc)
        assert text.count('Verification    =               SUCCESSFUL') >= 2, name
        runs = _runs(text)
        assert len(runs) == 2 and all(rc == 0 and wall < limit for rc, limit, wall in runs), \
            (name, runs)


def test_scatter_binds_across_the_packages_and_none_leaves_it_to_the_os(run):
    """The binding happened: scatter's probe shows one thread per PU, packages alternating
    (one thread: PU 0); with none the probe still reports every thread, wherever it ran."""
    _, cases = run
    for name, tc in cases.items():
        if '%threads=2xfull' in name:
            continue
        threads = 1 if '%threads=1 ' in name else 8
        seen = probe.parse(_out(tc)).cpu        # the checks' own reading of the probe
        cpus = [seen[t] for t in sorted(seen)]
        assert len(cpus) == threads, (name, cpus)
        if '%affinity=scatter' in name:
            assert cpus == SCATTER_8[:threads], (name, cpus)


def test_the_budgets_were_scaled(run, reframe_bin, root):
    """Each job's watchdog is the reference budget times the scale the node's partition gives
    (its extras as ReFrame reads them; no ``-S`` given), at the full count; oversubscribed runs
    get ten times their full-count run, measured in the job."""
    _, cases = run
    scale = live_reframe.partition_extras(reframe_bin, root, 'testnuma:node')['npb_budget_scale']
    for name, tc in cases.items():
        bench = 'CG' if '%benchmark=CG' in name else 'IS'
        threads = 16 if '2xfull' in name else 1 if '%threads=1 ' in name else 8
        budget = npb.budget.run_budget(bench, 'A', threads, 8, scale)
        script = Path(tc['outputdir'], 'rfm_job.sh').read_text()
        assert f'npb_limit={budget:.0f}' in script, name
        if threads <= 8:
            assert {limit for _rc, limit, _w in _runs(_out(tc))} == {round(budget)}, name


def test_interleave_runs_under_numactl_and_first_touch_without(run):
    """The memory policy reached the program: numactl --interleave for interleave only."""
    _, cases = run
    for name, tc in cases.items():
        script = Path(tc['outputdir'], 'rfm_job.sh').read_text()
        assert ('numactl --interleave=' in script) == ('%policy=interleave' in name), name
