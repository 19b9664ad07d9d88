"""The suite on a real Grid Engine: qsub on the one-host cluster of ``sge_cluster.py``.

What is proved here and nowhere else: the ``sge-access`` scheduler writes the
partition's ``access`` options into the job script (ReFrame's stock ``sge``
backend drops them), Grid Engine accepts the Bulldozer node's request
(``-pe smp N -l exclusive=true -S /bin/bash``) and runs the job with those
slots, and the binding checks pass inside such a job.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from sge_cluster import SgeCluster, SgeClusterError

pytestmark = [pytest.mark.sge, pytest.mark.reframe]


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    """A running cluster for this module, shut down afterwards."""
    c = SgeCluster(tmp_path_factory.mktemp('sge'))
    try:
        c.start()
    except (SgeClusterError, subprocess.SubprocessError, OSError) as err:
        c.stop()
        pytest.fail(f'the test Grid Engine cluster did not start: {err}', pytrace=False)
    yield c
    c.stop()
    assert not c.running(), 'Grid Engine daemons left running'


def test_quick_binding_checks_pass_under_qsub(cluster, reframe_bin, root, tmp_path):
    report = tmp_path / 'report.json'
    env = {**os.environ, **cluster.env, 'PLACEMENT_RESULTS': str(tmp_path / 'results')}
    proc = subprocess.run(
        [reframe_bin, '-C', str(root / 'config' / 'settings.py'), '-R', '--system', 'testsge',
         '-c', str(root / 'reframe_tests' / 'binding_probe.py'), '--tag', 'quick', '-p', 'gnu',
         '-n', 'BindingRenderingCheck.*binder=(gomp|numactl)|MemoryPolicyCheck',
         '--prefix', str(tmp_path / 'rfm'), '--report-file', str(report), '-r'],
        cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    cases = [tc for run in json.loads(report.read_text())['runs'] for tc in run['testcases']]
    bad = [f"{tc['display_name']}: {tc['fail_reason']}" for tc in cases
           if tc['result'] not in ('pass', 'skip')]
    assert proc.returncode == 0 and not bad, '\n'.join(bad) or proc.stdout[-3000:]
    ran = [tc for tc in cases if tc['result'] == 'pass' and not tc['name'].endswith('Build')
           and not tc['name'].startswith('BindProbeBuild')]
    assert len(ran) >= 4
    slots = cluster.slots
    for tc in ran:
        assert tc['jobid'], f"{tc['display_name']} has no Grid Engine job id"
        script = Path(tc['outputdir'], 'rfm_job.sh').read_text()
        for option in ('#$ -q all.q', f'#$ -pe smp {slots}', '#$ -l exclusive=true',
                       '#$ -S /bin/bash'):
            assert option in script, (option, script)
        # Grid Engine ran it in the parallel environment, with the slots asked for
        fields = cluster.accounting(tc['jobid'])
        assert fields['granted_pe'] == 'smp' and int(fields['slots']) == slots, fields
        assert fields['exit_status'] == '0', fields
