"""``placement npb build``: NPB's OpenMP binaries from a source tarball, without Spack.

The real builds use NASA's NPB 3.4 tarball from ``../shared/npb`` (``NPB_TARBALL``
overrides) and the real gfortran; a broken source is that tarball with one file
changed, so a compile error and a failed verification are NPB's own. The bad-input
cases need no tarball: each is one line on stderr, exit 2, and nothing installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TARBALL = Path(os.environ.get('NPB_TARBALL') or ROOT.parent / 'shared' / 'npb' / 'NPB3.4.1.tar.gz')
needs_tarball = pytest.mark.skipif(
    not TARBALL.is_file() or shutil.which('gfortran') is None,
    reason=f'no NPB source to build: {TARBALL} is absent (NPB_TARBALL names another) or '
           f'gfortran is missing (scripts/ensure-system-tools.sh test)')


def _build(tmp: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, 'XDG_CACHE_HOME': str(tmp / 'cache'), **(env or {})}
    return subprocess.run([sys.executable, '-m', 'placement', 'npb', 'build', *args],
                          capture_output=True, text=True, env=full, timeout=1800)


def _one_line_error(proc: subprocess.CompletedProcess, message: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert 'Traceback' not in proc.stderr and lines[-1].startswith('placement: error: ')
    assert message in lines[-1], lines[-1]


def _not_npb(tmp: Path) -> Path:
    (tmp / 'pkg' / 'config').mkdir(parents=True)
    (tmp / 'pkg' / 'config' / 'make.def').write_text('FC = gfortran\n')
    out = tmp / 'not-npb.tar.gz'
    with tarfile.open(out, 'w:gz') as tar:
        tar.add(tmp / 'pkg', arcname='pkg')
    return out


@pytest.mark.parametrize('case,message', [
    ('missing', "not found: give the path of NASA's NPB 3.x source tarball"),
    ('fifo', "is a FIFO (named pipe), not a file: give the path of NASA's NPB 3.x"),
    ('device', "is a character device, not a file: give the path of NASA's NPB 3.x"),
    ('not-a-tar', 'is not a readable tar archive'),
    ('not-npb', 'is not NPB: it holds no NPB3.x-OMP/config/make.def.template'),
    ('class', "--classes 'S,X' not accepted: choose from S,W,A,B,C,D,E"),
    ('bench', "--benchmarks 'bt,ua' not accepted: choose from bt,cg,ep,ft,sp,lu,mg,is"),
])
def test_bad_input_is_one_line_and_installs_nothing(tmp_path, case, message):
    tarball = {'missing': tmp_path / 'none.tar.gz', 'not-a-tar': ROOT / 'README.md',
               'not-npb': _not_npb(tmp_path), 'fifo': tmp_path / 'npb.fifo',
               'device': Path('/dev/zero')}.get(case, TARBALL)
    if case == 'fifo':
        os.mkfifo(tarball)       # said "not found"
    extra = {'class': ['--classes', 'S,X'], 'bench': ['--benchmarks', 'bt,ua']}.get(case, [])
    proc = _build(tmp_path, '--tarball', str(tarball), '--prefix', str(tmp_path / 'npb'), *extra)
    _one_line_error(proc, message)
    assert not (tmp_path / 'npb').exists()


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which('setpriv') is None,
                    reason='root reads any file, and setpriv (util-linux) is missing')
def test_a_tarball_the_user_cannot_read_is_said_so_not_called_no_archive(tmp_path):
    """Without read permission the archive was "not a readable tar archive", which sent a
    site looking at the file's contents. Root reads any file: the override is dropped."""
    tarball = _not_npb(tmp_path)
    tarball.chmod(0)
    drop = ['setpriv', '--inh-caps=-dac_override,-dac_read_search',
            '--bounding-set=-dac_override,-dac_read_search'] if os.geteuid() == 0 else []
    proc = subprocess.run(drop + [sys.executable, '-m', 'placement', 'npb', 'build',
                                  '--tarball', str(tarball), '--prefix', str(tmp_path / 'npb')],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'XDG_CACHE_HOME': str(tmp_path / 'cache')})
    _one_line_error(proc, f"NPB tarball {str(tarball)!r} cannot be read (Permission denied)")
    assert not (tmp_path / 'npb').exists()


@needs_tarball
def test_a_missing_compiler_is_named(tmp_path):
    proc = _build(tmp_path, '--tarball', str(TARBALL), '--prefix', str(tmp_path / 'npb'),
                  env={'FC': 'gfortran-none'})
    _one_line_error(proc, "the Fortran compiler 'gfortran-none' is not on PATH: install it")
    assert not (tmp_path / 'npb').exists()


def _changed_tarball(tmp: Path, member: str, change) -> Path:
    """NPB's tarball with one source file changed (only the OpenMP folder is kept)."""
    src = tmp / 'src'
    with tarfile.open(TARBALL) as tar:
        keep = [m for m in tar.getmembers() if '/NPB3.4-OMP/' in m.name + '/']
        tar.extractall(src, members=keep, filter='data')
    (path,) = src.glob(f'*/NPB3.4-OMP/{member}')
    path.write_text(change(path.read_text()))
    out = tmp / 'changed.tar.gz'
    with tarfile.open(out, 'w:gz') as tar:
        for top in src.iterdir():
            tar.add(top, arcname=top.name)
    return out


@needs_tarball
def test_a_compile_error_names_the_binary_and_keeps_the_log(tmp_path):
    tarball = _changed_tarball(tmp_path, 'CG/cg.f', lambda s: s + '\n      this is not fortran\n')
    prefix = tmp_path / 'npb'
    proc = _build(tmp_path, '--tarball', str(tarball), '--prefix', str(prefix),
                  '--benchmarks', 'cg', '--classes', 'S')
    _one_line_error(proc, 'building cg.S.x failed (make exit 2): ')
    assert not prefix.exists() and not list(tmp_path.glob('.npb.build-*'))
    log = tmp_path / 'npb.build.log'
    assert f'full log: {log}' in proc.stderr and 'this is not fortran' in log.read_text()


@needs_tarball
def test_a_failed_verification_installs_nothing(tmp_path):
    # EP class S checks its sums against these values: a wrong one fails NPB's own check
    tarball = _changed_tarball(tmp_path, 'EP/ep.f', lambda s: s.replace(
        'sx_verify_value = -3.247834652034740D+3', 'sx_verify_value = -4.247834652034740D+3'))
    prefix = tmp_path / 'npb'
    proc = _build(tmp_path, '--tarball', str(tarball), '--prefix', str(prefix),
                  '--benchmarks', 'ep', '--classes', 'S')
    _one_line_error(proc, 'ep.S.x failed verification (exit 0, UNSUCCESSFUL): the build is '
                          'not usable')
    assert not prefix.exists()


@needs_tarball
def test_build_verify_reuse_and_extend(tmp_path):
    """Into the default cache: built and verified, then reused, then a class added keeps the
    first; the binaries run where NPB_DIR points."""
    first = _build(tmp_path, '--tarball', str(TARBALL), '--benchmarks', 'ep,is', '--classes', 'S')
    assert first.returncode == 0, first.stderr
    (cache,) = [p for p in (tmp_path / 'cache' / 'placement').glob('npb-*') if p.is_dir()]
    assert (cache.parent / f'{cache.name}.build.log').is_file()
    bin_dir = cache / 'bin'
    assert sorted(p.name for p in bin_dir.iterdir()) == ['ep.S.x', 'is.S.x']
    assert f'export NPB_DIR={bin_dir}\n' in first.stdout
    assert 'ep.S.x     built, verification SUCCESSFUL' in first.stderr
    record = json.loads((cache / 'npb-build.json').read_text())
    assert record['verified'] == {'ep.S.x': 'SUCCESSFUL', 'is.S.x': 'SUCCESSFUL'}
    assert '-fopenmp' in record['fflags'] and '-mcmodel' not in record['fflags']
    assert cache.name == f"npb-{record['tarball_sha256'][:12]}"

    again = _build(tmp_path, '--tarball', str(TARBALL), '--benchmarks', 'is', '--classes', 'S',
                   '--print-dir')
    assert again.returncode == 0 and again.stdout == f'{bin_dir}\n'
    assert 'building' not in again.stderr

    more = _build(tmp_path, '--tarball', str(TARBALL), '--benchmarks', 'is', '--classes', 'W')
    assert more.returncode == 0, more.stderr
    assert sorted(p.name for p in bin_dir.iterdir()) == ['ep.S.x', 'ep.W.x', 'is.S.x', 'is.W.x']
    run = subprocess.run([str(bin_dir / 'is.W.x')], capture_output=True, text=True,
                         env={**os.environ, 'OMP_NUM_THREADS': '1'}, timeout=300)
    assert 'Verification    =               SUCCESSFUL' in run.stdout


@needs_tarball
def test_a_foreign_folder_is_never_replaced(tmp_path):
    prefix = tmp_path / 'mine'
    prefix.mkdir()
    (prefix / 'data.txt').write_text('keep')
    proc = _build(tmp_path, '--tarball', str(TARBALL), '--prefix', str(prefix),
                  '--benchmarks', 'is', '--classes', 'S')
    _one_line_error(proc, "exists and is not an NPB install made by `placement npb build`")
    assert (prefix / 'data.txt').read_text() == 'keep'


@needs_tarball
@pytest.mark.parametrize('plant', ['log', 'prefix'])
def test_a_link_planted_at_the_log_or_the_prefix_is_never_written_through(tmp_path, plant):
    """The build log's name beside the prefix is known in advance: a link planted there had
    the log written into its target. A prefix that is a link is refused before the build
    (it failed at the end with 'Not a directory')."""
    victim = tmp_path / 'victim'
    victim.mkdir() if plant == 'prefix' else victim.write_text('kept\n')
    at = tmp_path / ('npb.build.log' if plant == 'log' else 'npb')
    at.symlink_to(victim)
    proc = _build(tmp_path, '--tarball', str(TARBALL), '--prefix', str(tmp_path / 'npb'),
                  '--benchmarks', 'ep', '--classes', 'S')
    _one_line_error(proc, f'{at}: a symbolic link')
    assert 'building' not in proc.stderr + proc.stdout
    assert (list(victim.iterdir()) == [] if plant == 'prefix'
            else victim.read_text() == 'kept\n')
