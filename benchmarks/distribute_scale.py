"""What ReFrame takes to list and generate the node-health family on a large partition.

A real slurmctld serves a slurm.conf naming N nodes (``tests/slurm_nodes.py``), of which
only ``--started`` run a slurmd; the others are nodes never booted (``unknown``, then
``down``), as most of a large cluster looks to ``scontrol`` from a test host. ReFrame
lists the family (``-l``: loading, ``--distribute`` asking Slurm for the nodes, one
test per node and case generated, their fixtures resolved) for each way of choosing
the nodes:

* ``all``: every node of the partition, whatever its state (``--distribute=all``);
* ``idle``: the nodes Slurm says are idle (``--distribute=idle``), the ones that can run;
* ``nodelist``: ``--distribute=all`` with ``-J --nodelist=...`` naming 50 nodes
  (ReFrame filters the partition's nodes by the job options before distributing);
* ``none``: no ``--distribute`` (one case each), the cost of loading alone.

The family is one test per node and mode (``NodeHealthCheck``, its 14 quick cases run in
one job), so ``all`` generates one test per node. Each is the median of ``--repeats``
runs; N goes 100 and 1,000 so the growth per node is seen. The target: ``all`` on 1,000
nodes lists in at most 30 s here, beside the figure of the family as one test per case
(:data:`PER_CASE`, measured here with the same cluster: 12,000 cases); the results go to
``benchmarks/results/distribute_scale.json``.

    python benchmarks/distribute_scale.py [--repeats 3] [--started 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tests'))

from slurm_nodes import CONF_VAR, SlurmNodes  # noqa: E402

from placement.util import atomic  # noqa: E402

#: ``--distribute=all`` on 1,000 nodes lists within this many seconds.
TARGET_S = 30.0
SIZES = (100, 1000)
#: The family as one test per case (8 checks, 14 quick cases: 12 per node then), 1,000
#: nodes, ``--distribute=all``: the median of 3 runs here before it became one test per node.
PER_CASE = {'nodes': 1000, 'selection': 'all', 'cases': 12000, 'median_s': 197.31}


def selections(n: int) -> dict[str, list[str]]:
    """The ReFrame options of each way of choosing the nodes."""
    few = min(n, 50)
    return {'none': [], 'all': ['--distribute=all'], 'idle': ['--distribute=idle'],
            'nodelist': ['--distribute=all', f'-J--nodelist=n[1-{few}]']}


def list_family(env: dict[str, str], options: list[str], tmp: Path) -> tuple[float, int]:
    """One ``reframe -l`` of the family: seconds and the number of cases it listed."""
    cmd = [str(ROOT / '.venv' / 'bin' / 'reframe'), '-C', str(ROOT / 'config' / 'settings.py'),
           '-c', str(ROOT / 'reframe_tests' / 'node_health.py'), '--system', 'testnodes:batch',
           '-t', 'nodes', '-t', 'quick', '--prefix', str(tmp), *options, '-l']
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f'reframe -l failed ({proc.returncode}): {proc.stdout[-2000:]}')
    found = [ln for ln in proc.stdout.splitlines() if ln.startswith('Found ')]
    return took, int(found[-1].split()[1]) if found else 0


def measure(n: int, started: int, repeats: int) -> list[dict]:
    """Every selection on an N-node partition: median seconds and cases."""
    with tempfile.TemporaryDirectory(prefix=f'distribute-{n}-') as tmp:
        cluster = SlurmNodes(Path(tmp) / 'cluster', n)
        cluster.root.mkdir()
        os.chmod(cluster.root, 0o700)
        try:
            cluster.start(started=started)
            env = {**os.environ, CONF_VAR: str(cluster.conf), 'SLURM_CONF': str(cluster.conf),
                   'PLACEMENT_RESULTS': str(Path(tmp) / 'results')}
            rows = []
            for name, options in selections(n).items():
                runs = [list_family(env, options, Path(tmp) / 'rfm') for _ in range(repeats)]
                rows.append({'nodes': n, 'started': started, 'selection': name,
                             'options': options, 'cases': runs[0][1],
                             'median_s': round(statistics.median(t for t, _ in runs), 2),
                             'runs_s': [round(t, 2) for t, _ in runs]})
                print(f"{n:>6} nodes  {name:<9}{rows[-1]['cases']:>7} cases"
                      f"{rows[-1]['median_s']:>9.1f} s  {' '.join(options)}", flush=True)
            return rows
        finally:
            cluster.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--started', type=int, default=2)
    args = parser.parse_args()
    print(f"{'N':>6}        selection  cases   median  (of {args.repeats} runs)")
    rows = [r for n in SIZES for r in measure(n, args.started, args.repeats)]
    big = {r['selection']: r for r in rows if r['nodes'] == max(SIZES)}
    took = big['all']['median_s']
    result = {'target_s': TARGET_S, 'all_s': took, 'met': took <= TARGET_S,
              'per_case_family': PER_CASE, 'rows': rows}
    out = ROOT / 'benchmarks' / 'results' / 'distribute_scale.json'
    atomic.write_text(out, json.dumps(result, indent=1) + '\n')   # an exclusive temp, renamed
    print(f"1,000 nodes: --distribute=all {took:.1f} s ({big['all']['cases']} cases; one test "
          f"per case: {PER_CASE['median_s']:.0f} s, {PER_CASE['cases']} cases); idle "
          f"{big['idle']['median_s']:.1f} s, a node list {big['nodelist']['median_s']:.1f} s "
          f"(target <= {TARGET_S:.0f} s: {'met' if result['met'] else 'MISSED'}) -> {out}")
    return 0 if result['met'] else 1


if __name__ == '__main__':
    sys.exit(main())
