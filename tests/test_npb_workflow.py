"""A site's first baseline on NPB itself: run, record, an unchanged rerun, a rerun beside busy loops.

Runs ``scripts/acceptance.sh`` on two real NPB cases (EP and IS at class S, one thread,
unpinned; three runs each) where ``NPB_DIR`` holds the binaries (``make test`` builds
them). What is asserted is the workflow's structure, not a verdict on this shared 2-core
machine: each session ends with the one-line summary and an exit status of the documented
kinds (0 pass, 1 fail), the NPB cases ran (none skipped) and, once recorded, their values
were judged against the baseline's session.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from test_npb_reframe import NO_NPB, NPB_DIR

pytestmark = [pytest.mark.reframe, pytest.mark.skipif(
    not (NPB_DIR and glob.glob(os.path.join(NPB_DIR, 'is.S.x'))), reason=NO_NPB.format('is.S.x'))]

SELECT = ('-n', r'NpbQuickCheck.*%benchmark=(EP|IS).*%npb_class=S.*%threads=1\b.*%affinity=none',
          '-S', 'repeats=3')
SUMMARY = re.compile(r'^ACCEPTANCE generic quick: (PASS|FAIL) (\d+) passed, (\d+) failed .*'
                     r'report=(\S+) skipped=(\d+)', re.M)
VERDICT = re.compile(r'verdict: (\d+) regressed, (\d+) improved, (\d+) unchanged, '
                     r'(\d+) undecided of (\d+)')


def test_first_baseline_workflow_on_npb(root, tmp_path):
    env = {**os.environ, 'PLACEMENT_RESULTS': str(tmp_path / 'results'),
           'PLACEMENT_REPORTS': str(tmp_path / 'reports'),
           'PLACEMENT_BASELINES': str(tmp_path / 'baselines')}

    def session() -> tuple[str, re.Match]:
        proc = subprocess.run(
            [str(root / 'scripts' / 'acceptance.sh'), '-m', 'quick', '-s', 'generic', '--',
             '-c', str(root / 'reframe_tests' / 'npb.py'), '--prefix', str(tmp_path / 'rfm'),
             *SELECT], cwd=root, env=env, capture_output=True, text=True, timeout=900)
        last = proc.stdout.rstrip().splitlines()[-1:]
        m = SUMMARY.match(last[0]) if last else None
        assert m and proc.returncode == {'PASS': 0, 'FAIL': 1}[m.group(1)], \
            proc.stdout[-3000:] + proc.stderr[-2000:]
        # the binding probe's build and the two NPB cases ran; none was skipped
        assert int(m.group(2)) + int(m.group(3)) == 3 and m.group(5) == '0', last
        cases = [tc for run in json.loads(Path(m.group(4)).read_text())['runs']
                 for tc in run['testcases'] if tc['name'].startswith('NpbQuickCheck')]
        assert sorted(tc['benchmark'] for tc in cases) == ['EP', 'IS']
        assert all(tc['result'] == 'pass' or tc['fail_phase'] == 'performance' for tc in cases)
        return last[0], m

    first, _ = session()
    assert 'nothing to compare with' in first
    rec = subprocess.run([str(root / '.venv' / 'bin' / 'placement'), 'baseline', 'record',
                          '--system', 'generic', '--from', 'latest'],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert rec.returncode == 0, rec.stderr
    stored = yaml.safe_load((tmp_path / 'baselines' / 'generic.yaml').read_text())
    assert 'NpbQuickCheck' in stored and 'NpbQuickCheck' in stored['_samples']

    def judged(line: str) -> int:
        v = VERDICT.search(line)
        assert v, line
        counts = [int(x) for x in v.groups()]
        assert sum(counts[:4]) == counts[4] > 0, line
        return counts[4]

    again, _ = session()
    assert judged(again) > 0
    # one busy loop per CPU (two per CPU made this session, with its confirmation, 134 s here)
    loops = [subprocess.Popen(['bash', '-c', 'while :; do :; done'])
             for _ in range(os.cpu_count() or 1)]
    try:
        loaded, _ = session()
    finally:
        for p in loops:
            p.kill()
            p.wait()
    assert judged(loaded) > 0
