"""The tutorial's commands print what the tutorial shows (docs/tutorial.md).

Every ```console block of the page is a list of ``$ command`` lines, each followed
by what it prints. Each command runs here, with the venv's ``placement`` on PATH,
the site folder ``/tmp/site`` of the page mapped to a temporary one, and the test
Slurm cluster for ``site new`` (its node, named for this host, mapped to the page's
``node01``); its standard output must equal the page's lines.
So the page cannot drift from the tool.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / 'docs' / 'tutorial.md'
SITE = '/tmp/site'          # the page's site folder
NODE = 'node01'             # the page's compute node


def console_commands(text: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for every ``$`` line of every console block."""
    out: list[tuple[str, list[str]]] = []
    for block in re.findall(r'^```console\n(.*?)^```', text, re.M | re.S):
        for line in block.splitlines():
            if line.startswith('$ '):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
    return out


def test_the_page_has_commands_to_run():
    cmds = [c for c, _ in console_commands(PAGE.read_text())]
    assert any(c.startswith('placement site new') for c in cmds)
    assert len(cmds) >= 4


@pytest.mark.slurm
@pytest.mark.reframe
def test_every_command_prints_what_the_page_shows(slurm, tmp_path):
    site = tmp_path / 'site'
    env = {**os.environ, **slurm.env, 'PLACEMENT_SYSTEMS': str(site),
           'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PATH': f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    for command, expected in console_commands(PAGE.read_text()):
        proc = subprocess.run(['bash', '-c', command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=1200)
        out = proc.stdout.replace(str(site), SITE)
        out = out.replace(f'captured on node {slurm.node};', f'captured on node {NODE};')
        got = out.rstrip('\n').splitlines()
        assert got == expected, (f'`{command}` printed (exit {proc.returncode}):\n'
                                 + '\n'.join(got) + '\n--- the page shows:\n'
                                 + '\n'.join(expected) + f'\n--- stderr:\n{proc.stderr[-2000:]}')
