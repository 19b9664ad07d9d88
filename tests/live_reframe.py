"""ReFrame run from the live tests against an emulated node: the command and its report.

The live tests (the emulated NUMA node, its hybrid partitions, the seed nodes, NPB's
acceptance cases there) run ReFrame here with the project's configuration against a node
reached over ssh, each with its own checks, selection and environment (the node's ssh
configuration, where results go). A case retried after a cut copy appears once per attempt
in the run report, in order: only its last attempt counts.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path


def reframe(reframe_bin: str, root: Path, checks: Iterable[str], *args: str,
            env: dict[str, str], timeout: int) -> subprocess.CompletedProcess:
    """``reframe -C config/settings.py -c CHECK... ARGS`` in the checkout, with ``env`` over
    this process's environment (the node's ssh configuration, ``PLACEMENT_RESULTS``)."""
    cmd = [reframe_bin, '-C', str(root / 'config' / 'settings.py'),
           *[a for c in checks for a in ('-c', str(root / c))], *args]
    return subprocess.run(cmd, cwd=root, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=timeout)


def partition_extras(reframe_bin: str, root: Path, system: str) -> dict:
    """The ``extras`` of partition ``system`` (``name:partition``) as ReFrame reads them from
    the project's configuration (``--show-config``), so a test compares with the value the
    checks get rather than with a copy of it (config/common.py registers a scheduler when
    imported, so it is not imported here)."""
    part = system.split(':')[1]
    shown = reframe(reframe_bin, root, (), '--system', system,
                    '--show-config=systems/0/partitions', env={}, timeout=120)
    assert shown.returncode == 0, shown.stdout[-2000:] + shown.stderr[-2000:]
    partitions = {p['name']: p for p in json.loads(shown.stdout)}
    return partitions[part].get('extras', {})


def last_attempts(report: Path, proc: subprocess.CompletedProcess) -> dict[str, dict]:
    """Each case's last attempt in the run report, by display name; where ReFrame wrote no
    report, the test fails with the end of what it printed."""
    assert report.exists(), proc.stdout[-4000:] + proc.stderr[-3000:]
    last: dict[str, dict] = {}
    for r in json.loads(report.read_text())['runs']:
        for tc in r['testcases']:
            last[tc['display_name']] = tc
    return last
