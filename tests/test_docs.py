"""The documentation builds with Sphinx, every warning an error (``make docs``); the README
and the longest pages keep their budgets, and the baselines page's transcript and the clusters
page's hog session are checked.

The reference pages are generated from the code (the checks' ``#:`` comments, the
command's argparse definitions), so a renamed option or a broken docstring fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from placement.judgement import rules

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))
import provenance  # noqa: E402


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


# ---- the README and the pages stay within their budgets, and say no history ----

README = ROOT / 'README.md'
#: the most lines each page may have (issue: a site engineer reads them, not a notebook)
BUDGETS = {README: 150, ROOT / 'docs' / 'howto' / 'baselines.md': 300,
           ROOT / 'docs' / 'reference' / 'benchmarks.md': 250}
#: a date or a UTC time, as run logs write them
STAMP = re.compile(r'\b20\d\d-\d\d-\d\d\b|\b\d\d:\d\d UTC\b|\b20\d{6}T\d{4}')


@pytest.mark.parametrize('page', sorted(BUDGETS), ids=lambda p: p.name)
def test_page_within_its_budget(page):
    lines = page.read_text().count('\n')
    assert lines <= BUDGETS[page], f'{page.name}: {lines} lines, at most {BUDGETS[page]}'


def _set_names() -> set[str]:
    """Every recorded set of sessions, by folder name (tuning and validation sets)."""
    fixtures = ROOT / 'tests' / 'fixtures'
    return {p.parent.name for p in fixtures.glob('*/set.yaml')} | \
        {p.parent.name for p in fixtures.glob('validation/*/set.yaml')} | \
        set(provenance.TUNING_SETS)


def test_readme_names_no_date_set_or_rule_constant():
    """History lives in git and each set's set.yaml; the README says what a site needs."""
    text = README.read_text()
    assert not STAMP.findall(text), STAMP.findall(text)
    named = sorted(n for n in _set_names() if n in text)
    assert not named, f'the README names recorded sets: {named}'
    names = {n for n in vars(rules) if n.isupper()} | set(provenance.CHOICES)
    constants = sorted(n for n in [*names, 'RULES_FIXED', 'PLAIN_FIXED', 'PEERS_FIXED']
                       if re.search(rf'\b{n}\b', text))
    assert not constants, f'the README names rule constants: {constants}'


def test_readme_starts_with_what_it_is_and_the_two_commands():
    head = '\n'.join(README.read_text().splitlines()[:10])
    assert 'site engineers' in head
    assert 'make run' in head and 'make test' in head


def test_readme_links_resolve():
    """Every relative link of the README names a file of the checkout."""
    for target in re.findall(r'\]\(([^)#]+)(?:#[^)]*)?\)', README.read_text()):
        if '://' not in target:
            assert (ROOT / target).exists(), target


# ---- the baselines page's transcript is what the tool prints ----

BASELINES_PAGE = ROOT / 'docs' / 'howto' / 'baselines.md'


def test_baselines_transcript_prints_what_the_page_shows(tmp_path):
    """The page's console block records and judges stored sessions of tests/fixtures; each
    command runs here with ``PLACEMENT_BASELINES`` a temporary folder (the page's /tmp/vb)."""
    from test_tutorial import console_commands
    commands = console_commands(BASELINES_PAGE.read_text())
    assert len(commands) >= 4
    env = {**os.environ, 'PLACEMENT_BASELINES': str(tmp_path / 'vb'),
           'PATH': f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    for command, expected in commands:
        proc = subprocess.run(['bash', '-c', command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        got = proc.stdout.replace(str(tmp_path / 'vb'), '/tmp/vb').rstrip('\n').splitlines()
        assert got == expected, (f'`{command}` printed (exit {proc.returncode}):\n'
                                 + '\n'.join(got) + '\n--- the page shows:\n'
                                 + '\n'.join(expected) + f'\n--- stderr:\n{proc.stderr[-2000:]}')


def test_the_pages_print_the_committed_partition_figures():
    """The benchmarks page's table and the README's lines are what
    ``benchmarks/partition_goals.py`` renders from its committed results (``write``
    regenerates them)."""
    import json
    sys.path.insert(0, str(ROOT / 'benchmarks'))
    import partition_goals
    conditions = json.loads(partition_goals.RESULTS.read_text())['conditions']
    hint = 'run python benchmarks/partition_goals.py write'
    assert partition_goals.page_block(conditions) in partition_goals.PAGE.read_text(), hint
    assert partition_goals.readme_block(conditions) in README.read_text(), hint


def test_the_design_page_prints_the_committed_history_comparison():
    """The peer test's design page shows what ``benchmarks/peer_history.py`` renders from
    its committed results (the live sessions against the partition's own history)."""
    import json
    sys.path.insert(0, str(ROOT / 'benchmarks'))
    import peer_history
    res = json.loads(peer_history.RESULTS.read_text())
    block = peer_history.page_block(res['table'], res['sessions'])
    assert block in peer_history.PAGE.read_text(), 'run python benchmarks/peer_history.py'


# ---- the clusters page's acceptance lines are what the tool prints ----

CLUSTERS_PAGE = ROOT / 'docs' / 'howto' / 'clusters.md'


def _indented_transcript(text: str, first: str) -> list[tuple[str, list[str]]]:
    """(command, output lines) of the indented block whose first line is ``$ first``."""
    lines = text.splitlines()
    start = lines.index(f'    $ {first}')
    out: list[tuple[str, list[str]]] = []
    for line in lines[start:]:
        if not line.startswith('    '):
            break
        if line.startswith('    $ '):
            out.append((line[6:], []))
        else:
            out[-1][1].append(line[4:])
    return out


def _shows(expected: list[str], got: list[str]) -> bool:
    """Whether ``got`` is ``expected`` with each ``...`` line standing for any lines."""
    chunks = [[]]
    for line in expected:
        if line == '...':
            chunks.append([])
        else:
            chunks[-1].append(line)
    at = 0
    for n, chunk in enumerate(chunks):
        last = n == len(chunks) - 1
        starts = [i for i in range(at, len(got) - len(chunk) + 1)
                  if got[i:i + len(chunk)] == chunk
                  and (n > 0 or i == 0) and (not last or i + len(chunk) == len(got))]
        if not starts:
            return False
        at = starts[0] + len(chunk)
    return True


def test_clusters_hog_session_prints_what_the_page_shows(tmp_path):
    """The page's hog session against three quiet ones (tests/fixtures/aa-sessions-spread),
    without and with its confirmation session: the commands run here in one shell, on a copy
    of the folder at a temporary /tmp/spread, with ``PLACEMENT_BASELINES`` the page's /tmp/vb."""
    steps = _indented_transcript(CLUSTERS_PAGE.read_text(),
                                 'cp -r tests/fixtures/aa-sessions-spread /tmp/spread; '
                                 'set -- /tmp/spread/run-*.json')
    assert len(steps) >= 4
    mark = '@@ next command @@'
    script = ''.join(f'{c.replace("/tmp/spread", str(tmp_path / "spread"))}\n'
                     f'__rc=$?; echo "{mark}"; (exit $__rc)\n' for c, _ in steps)
    env = {**os.environ, 'PLACEMENT_BASELINES': str(tmp_path / 'vb'),
           'PATH': f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    proc = subprocess.run(['bash', '-c', script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    out = re.sub(r'run-\d{8}T\d{6}\+0000\.json', 'run-<stamp>.json',
                 proc.stdout.replace(str(tmp_path), '/tmp'))
    printed = out.split(f'{mark}\n')
    for (command, expected), said in zip(steps, printed):
        got = said.rstrip('\n').splitlines()
        assert _shows(expected, got), (f'`{command}` printed:\n' + '\n'.join(got)
                                       + '\n--- the page shows:\n' + '\n'.join(expected)
                                       + f'\n--- stderr:\n{proc.stderr[-2000:]}')
