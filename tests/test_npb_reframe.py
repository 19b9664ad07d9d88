"""ReFrame itself on the NPB checks: the matrix listing, dry-run job scripts, and a real quick run.

The dry-run job scripts are compared with :func:`placement.engine.launch.settings` for
the same case, so a test can never hold a map the placement engine did not make.
The real runs need NPB (``NPB_DIR``, which ``make test`` sets from the shared NPB
tarball) and are skipped without it; they check that every case of the quick family
at class S verified and was placed, and that the parsers read what they printed,
never how fast it ran.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from placement.engine import launch, topology
from placement import npb
from placement.testlib.placed import read_map_file, resolve_threads, sweep_for
from placement.util import local_jobs

pytestmark = pytest.mark.reframe

CASE = re.compile(r"(NpbAcceptanceCheck) %benchmark=(\w+) %npb_class=(\w) %threads=(\w+) "
                  r"%affinity=([\w-]+) %policy=([\w-]+) /(\w+)")


def _reframe(reframe_bin, root, tmp: Path, *args: str, env: dict | None = None,
             timeout: int = 900, configs: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
    """ReFrame on the NPB checks with the project's configuration, then ``configs`` over it
    (a site's own file, as ``-C a.py -C b.py``), results and stage under ``tmp``."""
    extra = [a for c in configs for a in ('-C', str(c))]
    cmd = [reframe_bin, '-C', str(root / 'config' / 'settings.py'), *extra,
           '-c', str(root / 'reframe_tests' / 'npb.py'), '--prefix', str(tmp), *args]
    full_env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp / 'results'), **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=full_env,
                          timeout=timeout)


@pytest.fixture(scope='module')
def listing(reframe_bin, root, tmp_path_factory):
    return _reframe(reframe_bin, root, tmp_path_factory.mktemp('npb-list'), '-l')


def test_list_shows_the_matrix(listing):
    assert listing.returncode == 0, listing.stderr
    out = listing.stdout
    # thread counts follow the selected system: here, this machine's PUs
    threads = sweep_for([len(topology.load(None).pus)])
    assert set(re.findall(r'%threads=(\w+)', out)) == {str(t) for t in threads}
    per_class = {'NpbQuickCheck': 8 * 2 * 2 * 2,
                 'NpbAcceptanceCheck': 8 * 2 * len(threads) * 4 * 2,
                 'NpbFullCheck': 8 * 2 * len(threads) * 4 * 4}
    for name, count in per_class.items():
        assert len(re.findall(rf'^- {name} ', out, re.M)) == count, name
    assert f'Found {sum(per_class.values())} check(s)' in out
    for value in ('%threads=2xfull', '%affinity=explicit', '%policy=preferred',
                  '%npb_class=C', '%benchmark=IS'):
        assert value in out


@pytest.fixture(scope='module')
def dry_run(reframe_bin, root, tmp_path_factory):
    tmp = tmp_path_factory.mktemp('npb-dry')
    # no NPB_DIR: a dry run must write job scripts on a machine without NPB
    env = {'NPB_DIR': str(tmp / 'no-npb-here'), 'PATH': os.environ.get('PATH', '')}
    proc = _reframe(reframe_bin, root, tmp, '--tag', 'acceptance', '--dry-run', env=env)
    return proc, tmp


def _exports(script: str) -> dict[str, str]:
    out = {}
    for line in script.splitlines():
        if line.startswith('export '):
            key, _, value = line[len('export '):].partition('=')
            out[key] = ' '.join(shlex.split(value))
    return out


def test_dry_run_job_scripts_match_the_placement_engine(dry_run):
    proc, tmp = dry_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    topo = topology.load(None)            # the generic partition: this machine
    pus = len(topo.pus)
    cases = {m.group(7): m.groups() for m in CASE.finditer(proc.stdout)}
    checked = 0
    for script_path in glob.glob(str(tmp / 'stage' / '*' / '*' / '*' / 'NpbAcceptanceCheck_*' /
                                     'rfm_job.sh')):
        digest = Path(script_path).parent.name.split('_')[-1]
        if digest not in cases:
            continue
        _, bench, cls, threads, affinity, policy, _ = cases[digest]
        n = resolve_threads(threads if not threads.isdigit() else int(threads), pus)
        ls = launch.settings(topo, n, affinity, policy, binder='gomp', oversubscribe=True)
        script = Path(script_path).read_text()
        # (the local scheduler's job tag, which ends the job's processes with it, aside)
        exports = {k: v for k, v in _exports(script).items() if k != local_jobs.TAG_VAR}
        assert exports == ls.env, script_path
        binary = f'{bench.lower()}.{cls}.x'
        run_line = ' '.join(ls.prefix + ['timeout', '--kill-after=10', '"$npb_limit"', binary])
        assert run_line in script.splitlines(), script_path
        # the probe runs first, in the same environment, under the same prefix
        probe = [ln for ln in script.splitlines() if ln.endswith('/bindprobe')]
        assert probe and probe[0].startswith(shlex.join(ls.prefix)), script_path
        assert 'while [ "$npb_rep" -lt 5 ]; do' in script
        if n > pus:       # oversubscribed: the full-count run comes first, from the engine too
            full = launch.settings(topo, pus, affinity, policy, binder='gomp', oversubscribe=True)
            line = next(ln for ln in script.splitlines() if ln.startswith('env '))
            assert shlex.split(line)[:len(full.env) + 1] == \
                ['env'] + [f'{k}={v}' for k, v in full.env.items()]
            assert 'npb-full threads=' in script
        checked += 1
    assert checked > 0, 'no NPB job script was written'


def test_thread_sweep_per_system(reframe_bin, root, tmp_path):
    """The study's 64-PU node gets 1 ... 32, full and 2xfull; without a system, up to 64."""
    assert sweep_for([64]) == [1, 2, 4, 8, 16, 32, 'full', '2xfull']
    assert sweep_for([16, 12], oversubscribe=False) == [1, 2, 4, 8, 'full']
    assert sweep_for([2]) == [1, 'full', '2xfull'] and sweep_for([1]) == ['full', '2xfull']
    assert sweep_for([]) == [1, 2, 4, 8, 16, 32, 64, 'full', '2xfull']
    proc = _reframe(reframe_bin, root, tmp_path, '--system', 'bulldozer', '-l', '-n',
                    r'NpbAcceptanceCheck.*%benchmark=CG.*%npb_class=A.*%affinity=none'
                    r'.*%policy=first-touch')
    assert proc.returncode == 0, proc.stderr
    assert re.findall(r'%threads=(\w+)', proc.stdout) == \
        ['1', '2', '4', '8', '16', '32', 'full', '2xfull']


def test_bulldozer_explicit_map_and_oversubscription(reframe_bin, root, tmp_path):
    """On the study's node the explicit map is the study's footnote, and 2xfull wraps round it."""
    proc = _reframe(reframe_bin, root, tmp_path, '--system', 'bulldozer', '--dry-run', '-n',
                    r'NpbAcceptanceCheck.*%benchmark=CG.*%npb_class=A.*%threads=(full|2xfull)'
                    r'.*%affinity=explicit.*%policy=first-touch',
                    env={'NPB_DIR': str(tmp_path / 'none')})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    study = ' '.join(read_map_file(str(root / 'config' / 'maps' / 'bulldozer.map')).split())
    scripts = {int(_exports(Path(p).read_text())['OMP_NUM_THREADS']): Path(p).read_text()
               for p in glob.glob(str(tmp_path / 'stage' / 'bulldozer' / 'compute' / '*' /
                                      'NpbAcceptanceCheck_*' / 'rfm_job.sh'))}
    assert sorted(scripts) == [64, 128]
    assert _exports(scripts[64])['GOMP_CPU_AFFINITY'] == study
    assert _exports(scripts[128])['GOMP_CPU_AFFINITY'] == f'{study} {study}'
    assert f"'GOMP_CPU_AFFINITY={study}'" in scripts[128]      # the full-count run: the study's map
    assert '#$ -l exclusive=true' in scripts[64]             # a whole node, never shared


NPB_DIR = os.environ.get('NPB_DIR', '')
#: Why the real NPB runs skip: ``make test`` sets NPB_DIR when ../shared/npb holds the tarball.
NO_NPB = ('NPB not available: set NPB_DIR to a folder with NPB 3.4-OMP binaries ({}; from '
          '`placement npb build --tarball NPB3.4.1.tar.gz` or `spack -e . install`), or put the '
          'tarball at ../shared/npb/NPB3.4.1.tar.gz for `make test` to build it')


@pytest.fixture(scope='module')
def quick_family(reframe_bin, root, tmp_path_factory):
    """The NPB quick family at class S, run for real: every benchmark, 1 thread and full,
    the OS's placement and scatter, three runs each."""
    tmp = tmp_path_factory.mktemp('npb-quick')
    proc = _reframe(reframe_bin, root, tmp, '--tag', 'quick', '-n',
                    r'NpbQuickCheck.*%npb_class=S', '--exec-policy=serial', '-r',
                    '-S', 'repeats=3', timeout=1800)
    reports = sorted(glob.glob(str(tmp / 'results' / 'runs' / 'run-report-*.json')))
    assert reports, proc.stdout[-3000:] + proc.stderr[-3000:]
    cases = [tc for run in json.loads(Path(reports[-1]).read_text())['runs']
             for tc in run['testcases'] if tc['name'].startswith('NpbQuickCheck')]
    return proc, cases


@pytest.mark.skipif(not (NPB_DIR and glob.glob(os.path.join(NPB_DIR, '*.S.x'))),
                    reason=NO_NPB.format('bt.S.x ...'))
def test_quick_npb_run_verifies_and_places(quick_family):
    proc, cases = quick_family
    threads = {1, len(topology.load(None).pus)}
    assert len(cases) == 8 * 2 * 2, proc.stdout[-3000:]
    assert {(tc['benchmark'], tc['num_threads'], tc['affinity']) for tc in cases} == {
        (b, t, a) for b in ('BT', 'CG', 'EP', 'FT', 'SP', 'LU', 'MG', 'IS')
        for t in threads for a in ('none', 'scatter')}
    for tc in cases:
        # timings are never asserted: only a performance verdict may differ between machines
        assert tc['result'] == 'pass' or tc['fail_phase'] == 'performance', \
            f"{tc['name']}: {tc.get('fail_reason')}"
        assert tc['num_threads'] > 0 and tc['reference_index'][0] == 'benchmark'
        perf = {k.split(':')[-1] for k in tc['perfvalues']}
        assert {'time', 'time_cv', 'mops', 'wall', 'stopped'} <= perf
        # every run's values and NPB's version go into the run report
        assert len(tc['perf_samples']['time']) == 3 and tc['npb_version'].startswith('3.')
        assert tc['npb_build'].startswith(('F77=', 'CC=')) and 'compiled' in tc['npb_build']
        assert 'npb_spec' in tc      # the Spack spec; empty for a build outside Spack
        # runs this short have states between sessions: named, so no bound and no gross call
        assert set(tc['no_bound']) == {'time', 'mops', 'wall'}
        assert tc['no_bound']['time'].startswith('runs shorter than 5 s: ')


@pytest.mark.skipif(not (NPB_DIR and glob.glob(os.path.join(NPB_DIR, '*.S.x'))),
                    reason=NO_NPB.format('bt.S.x ...'))
def test_the_parsers_read_what_the_quick_runs_printed(quick_family):
    """npb_output on each case's real job output: three verified runs of the case's benchmark,
    class and thread count, whose times are the run report's samples."""
    from placement import npb
    _, cases = quick_family
    for tc in cases:
        text = Path(tc['outputdir'], 'rfm_job.out').read_text()
        runs = npb.output.parse_runs(text)
        assert [r.rep for r in runs] == [1, 2, 3] and not any(r.stopped for r in runs)
        assert npb.output.run_problems(runs, 3, 'S', tc['num_threads']) == []
        for r in runs:
            assert r.result.benchmark == tc['benchmark'] and r.result.npb_class == 'S'
            assert r.result.total_threads == tc['num_threads'] and r.result.verified
        assert [r.result.time_s for r in runs] == tc['perf_samples']['time']
        assert [r.result.mops_total for r in runs] == tc['perf_samples']['mops']


def test_repeats_below_one_is_refused_at_setup(reframe_bin, root, tmp_path):
    """Zero runs would verify nothing: the case fails at setup with one line, never passes."""
    proc = _reframe(reframe_bin, root, tmp_path, '-n',
                    r'NpbQuickCheck.*EP.*npb_class=S.*threads=1.*affinity=none',
                    '-S', 'repeats=0', '-r', env={'NPB_DIR': str(tmp_path / 'none')})
    assert proc.returncode != 0
    assert "repeats=0 is not accepted: NPB cases run at least once" in proc.stdout
    assert 'Failing phase: setup' in proc.stdout and '1 failure(s)' in proc.stdout


def test_budget_scale_lengthens_each_watchdog_and_refuses_zero(reframe_bin, root, tmp_path):
    """-S budget_scale=8 (a node 8x slower, as the emulated one): the job's watchdogs are 8x
    the reference budgets; budget_scale=0 fails at setup with one line."""
    name = r'NpbAcceptanceCheck.*%benchmark=CG.*%npb_class=A.*%threads=2xfull.*%affinity=none' \
           r'.*%policy=first-touch'
    env = {'NPB_DIR': str(tmp_path / 'none')}
    proc = _reframe(reframe_bin, root, tmp_path / 'dry', '--dry-run', '-n', name,
                    '-S', 'budget_scale=8', env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (script,) = glob.glob(str(tmp_path / 'dry' / 'stage' / '*' / '*' / '*' /
                              'NpbAcceptanceCheck_*' / 'rfm_job.sh'))
    text = Path(script).read_text()
    pus = len(topology.load(None).pus)
    assert f'npb_limit={npb.budget.run_budget("CG", "A", 2 * pus, pus, 8):.0f}' in text
    assert f'timeout --kill-after=10 {npb.budget.run_budget("CG", "A", pus, pus, 8):.0f} ' in text
    proc = _reframe(reframe_bin, root, tmp_path / 'zero', '-n', name, '-S', 'budget_scale=0',
                    '-r', env=env)
    assert proc.returncode != 0
    assert 'budget_scale=0.0: expected a finite number above 0' in proc.stdout
    assert 'Failing phase: setup' in proc.stdout


#: A site's slow partition, as a second configuration file on top of the project's: the
#: local host, its NPB budgets 8 times longer through the partition's extras
SLOW_PARTITION = """
site_configuration = {'systems': [{
    'name': 'slowsite', 'descr': 'a slow partition', 'hostnames': ['^never-matches$'],
    'modules_system': 'nomod',
    'partitions': [{'name': 'slow', 'descr': 'cores 8x slower than the budgets assume',
                    'scheduler': 'local', 'launcher': 'local', 'environs': ['gnu'],
                    'max_jobs': 1, 'extras': {'topology': None, 'npb_budget_scale': %s}}]}]}
"""


@pytest.mark.parametrize('extra', ['8', '0'])
def test_a_partitions_budget_scale_applies_without_an_option(reframe_bin, root, tmp_path, extra):
    """``extras['npb_budget_scale']`` scales every watchdog of the partition's jobs with no
    ``-S``; ``-S budget_scale`` overrides it; 0 there fails at setup naming the partition."""
    config = tmp_path / 'slow.py'
    config.write_text(SLOW_PARTITION % extra)
    name = r'NpbAcceptanceCheck.*%benchmark=CG.*%npb_class=A.*%threads=full.*%affinity=none' \
           r'.*%policy=first-touch'
    env = {'NPB_DIR': str(tmp_path / 'none')}
    pus = len(topology.load(None).pus)

    def dry(tmp: Path, *opts: str) -> subprocess.CompletedProcess:
        return _reframe(reframe_bin, root, tmp, '--system', 'slowsite:slow', '-n', name, *opts,
                        env=env, timeout=300, configs=(config,))

    if extra == '0':
        proc = dry(tmp_path / 'zero', '-r')
        assert proc.returncode != 0
        assert ("slowsite:slow: extras['npb_budget_scale']=0: expected a finite number "
                "above 0") in proc.stdout, proc.stdout[-3000:]
        assert 'Failing phase: setup' in proc.stdout
        return
    for opts, scale in (((), 8), (('-S', 'budget_scale=2'), 2)):
        tmp = tmp_path / f'scale{scale}'
        proc = dry(tmp, '--dry-run', *opts)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        (script,) = glob.glob(str(tmp / 'stage' / 'slowsite' / 'slow' / '*' /
                                  'NpbAcceptanceCheck_*' / 'rfm_job.sh'))
        budget = npb.budget.run_budget('CG', 'A', pus, pus, scale)
        assert f'npb_limit={budget:.0f}' in Path(script).read_text(), scale


def test_binary_in_a_folder_with_a_blank_and_a_command_substitution(reframe_bin, root, tmp_path):
    """Every string reaching the job script is quoted: the folder name is data, never run."""
    folder = tmp_path / 'npb bin $(touch INJECTED)'
    folder.mkdir()
    log = root / 'tests' / 'fixtures' / 'npb-logs' / 'is.S.t1.log'
    fake = folder / 'is.S.x'            # a stand-in printing a real NPB log, not NPB
    fake.write_text(f'#!/bin/sh\ncat {shlex.quote(str(log))}\n')
    fake.chmod(0o755)
    proc = _reframe(reframe_bin, root, tmp_path, '-n',
                    r'NpbQuickCheck.*IS.*npb_class=S.*threads=1.*affinity=none', '-S', 'repeats=2',
                    '-r', env={'NPB_DIR': str(folder)})
    assert not list(tmp_path.rglob('INJECTED')) and not (root / 'INJECTED').exists()
    assert proc.returncode == 0 and 'Ran 2/2 test case(s)' in proc.stdout, proc.stdout[-3000:]
    assert '(0 failure(s)' in proc.stdout and 'PASSED' in proc.stdout
    script = next(tmp_path.glob('output/*/*/*/NpbQuickCheck_*/rfm_job.sh')).read_text()
    assert shlex.quote(str(fake)) in script


@pytest.mark.parametrize('content,message', [
    (None, 'No such file or directory'),
    ('0 0\n', 'names CPU 0 twice'),
    ('0 x\n', "bad CPU entry 'x'"),
])
def test_broken_explicit_map_fails_the_case(reframe_bin, root, tmp_path, content, message):
    """A configuration mistake is an error naming the map, never a skip that reads as green."""
    map_file = tmp_path / 'node.map'
    if content is not None:
        map_file.write_text(content)
    settings = tmp_path / 'settings.py'
    settings.write_text(
        'import importlib.util\n'
        f'spec = importlib.util.spec_from_file_location("s", {str(root / "config" / "settings.py")!r})\n'
        'mod = importlib.util.module_from_spec(spec)\n'
        'spec.loader.exec_module(mod)\n'
        'site_configuration = mod.site_configuration\n'
        'for system in site_configuration["systems"]:\n'
        '    if system["name"] == "generic":\n'
        '        for part in system["partitions"]:\n'
        f'            part.setdefault("extras", {{}})["explicit_map"] = {str(map_file)!r}\n')
    cmd = [reframe_bin, '-C', str(settings), '-c', str(root / 'reframe_tests' / 'npb.py'),
           '--prefix', str(tmp_path), '--system', 'generic', '-n',
           r'NpbAcceptanceCheck.*CG.*npb_class=A.*threads=1.*affinity=explicit.*first-touch',
           '--dry-run']
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'NPB_DIR': str(tmp_path / 'none')}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env, timeout=600)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert f"extras['explicit_map'] {str(map_file)!r}: " in proc.stdout, proc.stdout[-3000:]
    assert message in proc.stdout and '1 failure(s)' in proc.stdout and '0 skipped' in proc.stdout


@pytest.mark.skipif(not (NPB_DIR and glob.glob(os.path.join(NPB_DIR, 'bt.W.x'))),
                    reason=NO_NPB.format('bt.W.x'))
def test_unstable_case_is_judged_by_the_verdict_once_its_runs_are_stored(
        reframe_bin, root, tmp_path):
    """Without stored runs a spread above cv_limit is a bare FAIL (the `unstable` guard); with
    them the case runs adaptively and the verdict judges it (undecided with its spread).
    The limit is below zero: NPB prints its times to 0.01 s, so three runs of BT class W may
    print the same time, and a CV of 0 is above no limit of zero or more."""
    select = ['-n', r'NpbQuickCheck.*%benchmark=BT.*%npb_class=W.*%threads=1.*%affinity=none',
              '-S', 'cv_limit=-1', '-S', 'min_judged_s=0']
    env = {'PLACEMENT_BASELINES': str(tmp_path / 'baselines')}

    def run(*extra: str) -> dict:
        before = set(glob.glob(str(tmp_path / 'results' / 'runs' / 'run-report-*.json')))
        proc = _reframe(reframe_bin, root, tmp_path, *select, *extra, '-r', env=env)
        new = set(glob.glob(str(tmp_path / 'results' / 'runs' / 'run-report-*.json'))) - before
        assert len(new) == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
        (tc,) = [tc for r in json.loads(Path(new.pop()).read_text())['runs']
                 for tc in r['testcases'] if tc['name'].startswith('NpbQuickCheck')]
        return tc

    first = run('-S', 'repeats=3')
    assert first['fail_phase'] == 'performance' and 'time_cv' in first['fail_reason']
    from placement import cli
    report = sorted(glob.glob(str(tmp_path / 'results' / 'runs' / 'run-report-*.json')))[-1]
    os.environ['PLACEMENT_BASELINES'] = env['PLACEMENT_BASELINES']
    try:
        assert cli.main(['baseline', 'record', '--system', 'generic', '--from', report]) == 0
    finally:
        del os.environ['PLACEMENT_BASELINES']
    second = run('-S', 'repeats=3', '-S', 'max_repeats=6')
    assert 'time_cv' not in (second.get('fail_reason') or '')
    assert 3 <= len(second['perf_launches']['wall']) <= 6
    job_err = Path(second['stagedir'], 'rfm_job.err')
    assert not job_err.exists() or 'Traceback' not in job_err.read_text()
