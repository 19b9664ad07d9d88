"""The site configuration loads, and each system is what its file promises."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.reframe


def show(reframe_bin: str, root, system: str | None, param: str, **env: str):
    """``reframe --show-config`` for one system: the configuration ReFrame really uses."""
    cmd = [reframe_bin, '-C', str(root / 'config' / 'settings.py'), f'--show-config={param}']
    if system:
        cmd += ['--system', system]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=root,
                         env={**os.environ, **env}, check=True).stdout
    # ReFrame may print warnings before the JSON value
    return json.loads('\n'.join(ln for ln in out.splitlines() if 'WARNING' not in ln))


def partitions(reframe_bin, root, system):
    return {p['name']: p for p in show(reframe_bin, root, system, 'systems/0/partitions')}


def test_this_host_is_generic(reframe_bin, root):
    """testcluster and the examples never take the local host away from generic."""
    assert show(reframe_bin, root, None, 'systems/0/name') == 'generic'


def test_generic_replaces_the_builtin_quietly(reframe_bin, root):
    """Our generic is ReFrame's name on purpose: no warning about it, other warnings stay."""
    cmd = [reframe_bin, '-C', str(root / 'config' / 'settings.py'), '-c',
           str(root / 'reframe_tests' / 'binding_probe.py'), '-l']
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=root, check=True)
    assert 'redefinition' not in out.stdout + out.stderr
    assert 'Found ' in out.stdout


def test_modes(reframe_bin, root):
    names = [m['name'] for m in show(reframe_bin, root, None, 'modes')]
    assert {'quick', 'acceptance', 'full'} <= set(names)


def test_example_slurm_partitions(reframe_bin, root):
    parts = partitions(reframe_bin, root, 'example-slurm')
    assert {p['launcher'] for p in parts.values()} == {'srun', 'mpirun'}
    for p in parts.values():
        assert p['scheduler'] == 'slurm' and '--exclusive' in p['access']


def test_bulldozer_sge_access_reaches_qsub(reframe_bin, root):
    """The stock sge backend drops ``access``; ours writes it as ``#$`` lines."""
    part = partitions(reframe_bin, root, 'bulldozer')['compute']
    assert part['scheduler'] == 'sge-access'
    assert '-l exclusive=true' in part['access']


def test_pbs_exclusive(reframe_bin, root):
    part = partitions(reframe_bin, root, 'example-pbs')['compute']
    assert part['scheduler'] == 'pbs' and '-l place=excl' in part['access']


def test_testcluster_takes_slurm_conf(reframe_bin, root, tmp_path):
    conf = str(tmp_path / 'slurm.conf')
    parts = partitions(reframe_bin, root, 'testcluster')
    assert set(parts) == {'srun', 'mpirun'}
    env = {k: v for k, v in parts['srun'].get('env_vars', [])}
    assert 'SLURM_CONF' not in env
    parts = show(reframe_bin, root, 'testcluster', 'systems/0/partitions',
                 PLACEMENT_TEST_SLURM_CONF=conf)
    assert all(['SLURM_CONF', conf] in p['env_vars'] for p in parts)


def test_system_file_with_more_than_systems_is_refused(reframe_bin, root, tmp_path):
    """settings.py takes only ``systems`` from a system file; anything else is an error."""
    config = tmp_path / 'config'
    shutil.copytree(root / 'config', config, ignore=shutil.ignore_patterns(
        'baselines', 'maps', 'spack-repo', 'schedules', '__pycache__'))
    (config / 'systems' / 'site.py').write_text(
        "site_configuration = {'systems': [], 'modes': [{'name': 'x', 'options': []}]}\n")
    out = subprocess.run([reframe_bin, '-C', str(config / 'settings.py'), '-c',
                          str(root / 'reframe_tests' / 'binding_probe.py'), '-l'],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results')})
    assert out.returncode != 0
    errors = [ln for ln in (out.stdout + out.stderr).splitlines() if 'ERROR' in ln]
    assert len(errors) == 1 and 'site.py' in errors[0] and 'modes' in errors[0]
    assert 'Traceback' not in out.stdout + out.stderr
