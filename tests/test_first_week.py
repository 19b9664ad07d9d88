"""The README's first week, live: its commands, in its order, on a real 4-node Slurm.

The README's "Your cluster" path is a plain acceptance run of the quick mode on the
partition, ``placement baseline record --system SYSTEM --from latest``, the same run again
(now judged against that baseline), and the partition run, ``-- --distribute=all -t nodes``
(each node against its peers: no node named among four unchanged ones; right after the plain
runs of the same mode, with no check in common, nothing to compare with, as a first run: a
``PASS``). Here they run on the ``testnodes:batch`` partition of ``slurm_nodes.py`` (four
unchanged nodes), each command as the README writes it with ``mycluster`` read as
``testnodes``, and the results, baselines and reports in a temporary folder.

The whole quick mode (about 140 cases, one job at a time) would take tens of minutes on a
2-core host for each of the two plain runs, so the plain runs add a selection the
documentation names (docs/howto/checks.md), ``-- -n MatmulCheck``: three maps, each with its
binding checked, under every environment, and the node-health family's matmul cases, which
skip outside ``--distribute`` (that family, ``-t nodes``, is the partition run's selection and
runs nothing in a plain run). With the build fixtures, those are the cases that run no job on
a node, whose ``job_nodelist`` ReFrame writes as ``['None']``. About 5 minutes, a minute
more for each plain run the host's other work failed (run again up to 3 times).
Part of ``make test-nodes`` (marker ``nodes``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from placement.judgement import reading
from test_partition_live import assert_no_node_stands, report_of

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / 'README.md'
SYSTEM, PART = 'testnodes', 'batch'
#: a small selection the documentation names (docs/howto/checks.md), added to the plain runs
PLAIN_SELECTION = ' -- -n MatmulCheck'
#: the README's partition run: ReFrame's options after ``--``
PARTITION_ARGS = '-- --distribute=all -t nodes'
VERDICT = r'verdict: \d+ regressed, \d+ improved, \d+ unchanged, \d+ undecided of \d+'

pytestmark = [pytest.mark.slurm, pytest.mark.reframe, pytest.mark.nodes]


def readme_commands() -> tuple[str, str, str]:
    """The README's acceptance run, baseline record and partition run, for ``testnodes``."""
    text = README.read_text()
    block = re.search(r'^    (scripts/acceptance\.sh -m quick -s mycluster:batch)\n'
                      r'    (placement baseline record --system mycluster --from latest)\n',
                      text, re.M)
    assert block, 'the README no longer shows the first acceptance run and its baseline'
    assert f'`{PARTITION_ARGS}`' in text, 'the README no longer shows the partition run'
    run, record = (c.replace('mycluster', SYSTEM) for c in block.groups())
    return run, record, f'{run} {PARTITION_ARGS}'


def step(command: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Runs one command as a site engineer types it (the venv's ``bin`` on PATH, as the
    README's install exports it); its output lines, printed so a failure shows them."""
    proc = subprocess.run(['bash', '-c', command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1500)
    out = proc.stdout.splitlines()
    print(f'$ {command}  (exit {proc.returncode})')
    print('\n'.join(ln for ln in out if re.match(r'(ACCEPTANCE|NODES?|NOTE|UNDECIDED|wrote) ',
                                                    ln)))
    return proc, out


def acceptance_line(proc: subprocess.CompletedProcess, out: list[str]) -> str:
    lines = [ln for ln in out if ln.startswith(f'ACCEPTANCE {SYSTEM} quick: ')]
    assert lines and out[-1] == lines[-1], \
        f'no ACCEPTANCE line last (exit {proc.returncode}):\n' + '\n'.join(out[-40:]) \
        + proc.stderr[-2000:]
    return lines[-1]


#: the README's outcomes and their exit codes
EXIT = {'PASS': 0, 'FAIL': 1, 'UNFINISHED': 3, 'INCOMPLETE': 4}
#: runs of a plain acceptance run the host's other work may fail before the test gives up
ATTEMPTS = 3


def loaded(line: str) -> bool:
    """Whether the host's other work failed the run (the node's load line): on a shared
    2-core host the nodes' jobs wait for its CPUs, which no command of the path changes."""
    return ' node=loaded' in line and not re.search(r' [1-9]\d* failed ', line)


def skip_loaded(out: list[str]) -> None:
    pytest.skip('the host was under a competing load, which fails any run: '
                + ' '.join(ln for ln in out if ln.startswith('NODE ')))


def plain_run(command: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess,
                                                           list[str], str]:
    """The plain acceptance run, run again (as a site would) while the host's load alone
    failed it, up to :data:`ATTEMPTS` times; then its PASS line, exit 0."""
    for _ in range(ATTEMPTS):
        proc, out = step(command, env)
        line = acceptance_line(proc, out)
        if not loaded(line):
            break
    else:
        skip_loaded(out)
    assert re.match(rf'ACCEPTANCE {SYSTEM} quick: PASS \d+ passed, 0 failed .*report=', line), \
        line + '\n' + '\n'.join(ln for ln in out if re.match('(NODE|FAIL) ', ln))
    assert proc.returncode == 0, line
    return proc, out, line


def test_the_readmes_first_week_on_a_slurm_partition(slurm_nodes, tmp_path):
    cluster = slurm_nodes(4)
    env = {**os.environ, **cluster.env,
           'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_BASELINES': str(tmp_path / 'baselines'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'),
           'PATH': f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    run, record, partition_run = readme_commands()

    # (a) the first acceptance run: every case's node read (a case that ran no job is on none)
    proc, out, line = plain_run(run + PLAIN_SELECTION, env)
    notes = [ln for ln in out if ln.startswith('NOTE') or ln.startswith('NODES')]
    assert not any('peer verdict needs' in ln or 'None' in ln for ln in notes), notes
    assert 'None' not in line, line
    reports = sorted((tmp_path / 'results' / 'runs').glob('run-report-acceptance-*.json'))
    for path in reports:
        nodes = {c.node for c in reading.run_report.load(path).cases}
        print(f'nodes of {path.name}:', nodes)
        assert 'None' not in nodes, nodes

    # (b) its baseline
    proc, out = step(record, env)
    wrote = [ln for ln in out if ln.startswith('wrote ')]
    assert proc.returncode == 0 and wrote, proc.stdout + proc.stderr
    m = re.match(rf'wrote (\S+{SYSTEM}\.yaml): (\d+) added, ', wrote[-1])
    assert m and int(m.group(2)) > 0, wrote[-1]
    assert Path(m.group(1)).parent == tmp_path / 'baselines', wrote[-1]

    # (c) the same run again, judged against that baseline
    proc, out, line = plain_run(run + PLAIN_SELECTION, env)
    assert re.search(VERDICT, line), line

    # (d) the partition: each node against its peers, from the first session
    proc, out = step(partition_run, env)
    line = acceptance_line(proc, out)
    # a session names a node or half of an unchanged partition in 5 % of sessions by
    # construction: the confirmation session (on, as the README runs it) dismisses it
    assert_no_node_stands(out)
    report = reading.run_report.load(report_of(line))
    by_node = {c.node for c in report.cases if c.measured}
    assert by_node == {f'n{i}' for i in range(1, 5)}, by_node
    assert not re.search(r'\bn[1-4]\b', line), line
    outcome = line.split(': ', 1)[1].split()[0]
    assert proc.returncode == EXIT[outcome], line
    if loaded(line):
        skip_loaded(out)
    assert outcome == 'PASS', line
    assert 'first run of testnodes/quick with these checks: nothing to compare with' in line, line
    assert 'not compared' not in line, line
