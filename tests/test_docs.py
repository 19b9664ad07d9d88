"""The documentation builds with Sphinx, every warning an error (``make docs``).

The reference pages are generated from the code (the checks' ``#:`` comments, the
command's argparse definitions), so a renamed option or a broken docstring fails here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
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
