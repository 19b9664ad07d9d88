"""The three ReFrame workarounds: gated on their versions, doing what they claim, nothing more.

Each one is also checked switched off (``PLACEMENT_REFRAME_WORKAROUNDS=off``): that
run shows the ReFrame behaviour it works around, the way to tell when a new
ReFrame no longer needs it (docs/reference/workarounds.md).
"""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest

from placement.util import reframe_workarounds as rw

rfm_warnings = pytest.importorskip('reframe.core.warnings')


@pytest.mark.parametrize('w', rw.ALL, ids=lambda w: w.name)
def test_gated_on_the_versions_checked(w):
    assert w.applies(f'{w.first[0]}.{w.first[1]}.0')
    assert w.applies(f'{w.last[0]}.{w.last[1]}.9')
    assert not w.applies(f'{w.last[0]}.{w.last[1] + 1}.0')
    assert not w.applies(f'{w.last[0] + 1}.0.0')
    assert not w.applies('3.12.0')
    assert w.applies('4.10.4')      # the ReFrame this project pins


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv('PLACEMENT_REFRAME_WORKAROUNDS', 'off')
    assert not any(rw.enabled(w) for w in rw.ALL)
    monkeypatch.delenv('PLACEMENT_REFRAME_WORKAROUNDS')
    assert all(rw.enabled(w) == w.applies() for w in rw.ALL)


def test_the_docs_list_every_workaround(root):
    table = (root / 'docs' / 'reference' / 'workarounds.md').read_text()
    for w in rw.ALL:
        assert f'`{w.where.split()[0]}`' in table, w.name


# ---- the deprecation fast path ----

def _patched():
    import placement.testlib  # noqa: F401  (installs the fast path)
    from reframe.core import variables
    return variables.user_deprecation_warning


def test_fastpath_installed_on_this_reframe():
    from placement.testlib import deprecation_fastpath as fp
    assert (_patched() is fp.user_deprecation_warning) == rw.DEPRECATION_FASTPATH.applies()


def test_deprecation_outside_suppression_still_fires():
    warn = _patched()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        warn('this feature is deprecated')
    assert [w.category for w in seen] == [rfm_warnings.ReframeDeprecationWarning]
    assert 'this feature is deprecated' in str(seen[0].message)


def test_deprecation_inside_suppression_is_dropped():
    warn = _patched()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        with rfm_warnings.suppress_deprecations():
            warn('dropped')
        warnings.warn('another category still fires', UserWarning)
    assert [w.category for w in seen] == [UserWarning]


# ---- the generic redefinition and sge-access: through ReFrame itself ----

def _reframe(reframe_bin, root, args, off=False, **env):
    env = {**os.environ, **env}
    if off:
        env['PLACEMENT_REFRAME_WORKAROUNDS'] = 'off'
    return subprocess.run([reframe_bin, '-C', str(root / 'config' / 'settings.py'), *args],
                          capture_output=True, text=True, cwd=root, env=env, timeout=300)


@pytest.mark.reframe
def test_generic_redefinition_warning_dropped_only_by_the_workaround(reframe_bin, root):
    args = ['-c', str(root / 'reframe_tests' / 'binding_probe.py'), '-l']
    on = _reframe(reframe_bin, root, args)
    off = _reframe(reframe_bin, root, args, off=True)
    assert on.returncode == off.returncode == 0
    assert 'redefinition' not in on.stdout + on.stderr
    assert "redefinition of system 'generic'" in off.stdout + off.stderr


def _sge_job_script(reframe_bin, root, tmp: Path, off: bool) -> list[str]:
    out = _reframe(reframe_bin, root,
                   ['-c', str(root / 'reframe_tests' / 'binding_probe.py'), '--system',
                    'bulldozer', '-n', 'BindingRenderingCheck%binder=gomp%affinity=compact',
                    '--dry-run', '--prefix', str(tmp)],
                   off=off, PLACEMENT_RESULTS=str(tmp / 'results'))
    assert out.returncode == 0, out.stdout[-2000:]
    script = next(tmp.glob('stage/bulldozer/compute/*/BindingRenderingCheck_*/rfm_job.sh'))
    return [ln for ln in script.read_text().splitlines() if ln.startswith('#$')]


@pytest.mark.reframe
def test_sge_access_written_once_only_by_the_workaround(reframe_bin, root, tmp_path):
    on = _sge_job_script(reframe_bin, root, tmp_path / 'on', off=False)
    assert on.count('#$ -l exclusive=true') == 1 and on.count('#$ -pe smp 64') == 1
    off = _sge_job_script(reframe_bin, root, tmp_path / 'off', off=True)
    # the stock backend on this ReFrame: the partition's request never reaches qsub
    assert '#$ -l exclusive=true' not in off and '#$ -pe smp 64' not in off
