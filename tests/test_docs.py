"""The documentation builds with Sphinx, every warning an error (``make docs``).

The reference pages are generated from the code (the checks' ``#:`` comments, the
command's argparse definitions), so a renamed option or a broken docstring fails here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_docs_build_clean(tmp_path):
    pytest.importorskip('sphinx', reason='the docs extra is not installed: make docs')
    if shutil.which('dot') is None:
        pytest.skip('graphviz (dot) is not installed: scripts/ensure-system-tools.sh test')
    proc = subprocess.run([sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q',
                           '-b', 'html', str(ROOT / 'docs'), str(tmp_path / 'html')],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = (tmp_path / 'html' / 'reference' / 'cli.html').read_text()
    assert 'site' in html and '--ranks' in html          # generated from argparse
    checks = (tmp_path / 'html' / 'reference' / 'checks.html').read_text()
    assert 'rank_binding' in checks                       # from a #: comment
    assert (tmp_path / 'html' / 'architecture.html').exists()


def test_make_docs_gets_graphviz_as_make_test_does(tmp_path):
    """``make docs`` on a fresh clone: graphviz comes from scripts/ensure-system-tools.sh
    (installed as root, else named with its package, exit 2), never a bare stop."""
    dry = subprocess.run(['make', '-n', 'docs'], capture_output=True, text=True, cwd=ROOT)
    lines = dry.stdout.splitlines()
    tools = lines.index('scripts/ensure-system-tools.sh docs')
    assert tools < next(i for i, ln in enumerate(lines) if '-m sphinx' in ln)
    # without root and without dot: the one missing tool and its package, nothing else; the
    # script is run from a copy the other user can read (a clone made by `mktemp -d` is 0700)
    bindir = Path(tempfile.mkdtemp(prefix='nodot-'))
    bindir.chmod(0o755)
    try:
        for tool in ('bash', 'dirname', 'id', 'sort', 'tr'):
            (bindir / tool).symlink_to(shutil.which(tool))
        (bindir / 'scripts').mkdir(mode=0o755)
        script = bindir / 'scripts' / 'ensure-system-tools.sh'
        shutil.copy(ROOT / 'scripts' / 'ensure-system-tools.sh', script)
        script.chmod(0o755)
        setpriv = shutil.which('setpriv')
        if os.getuid() == 0 and setpriv is None:
            pytest.skip('running as root without setpriv: cannot try the non-root path')
        as_user = [setpriv, '--reuid=65534', '--regid=65534', '--clear-groups'] \
            if os.getuid() == 0 else []
        proc = subprocess.run([*as_user, str(bindir / 'bash'), str(script), 'docs'],
                              capture_output=True, text=True, env={'PATH': str(bindir)})
    finally:
        shutil.rmtree(bindir)
    assert proc.returncode == 2, proc.stderr
    assert 'error: missing tools: dot\n' in proc.stderr
    assert 'apt-get install graphviz \n' in proc.stderr
