"""The several-node Slurm cluster of ``tests/slurm_nodes.py``: partition ``batch``, n1..nN.

Select it with ``--system testnodes:batch`` (its hostname pattern matches no real
host); ``PLACEMENT_TESTNODES_SLURM_CONF`` names the cluster's ``slurm.conf`` and is put
in the environment of ReFrame's own ``sbatch``/``squeue``/``scontrol`` calls and of
every job. The ``squeue`` backend is ReFrame's Slurm backend polling with ``squeue``
(the test cluster has no accounting database for ``sacct``); ``--distribute`` reads the
nodes with ``scontrol`` and pins each case with ``--nodelist``.

Each node gets its own topology (``extras['topology_per_node']``): a case pinned to a
node computes its maps from an ``lstopo`` run on that node, inside its slurmd's cgroup,
so a node left 1 PU of 2 by a cpuset is placed on that PU (and its fingerprint says
so). A case pinned to no node uses this host's (``'live'``): every node is this host.

``max_jobs`` is 1: the nodes share this host's two cores, so two jobs at once would
slow each other and every node would look like an odd one; one job at a time measures
each node alone, as a real partition's nodes are. The programs run in the batch job
itself (``local`` launcher): the suite's own maps bind the threads, and ``srun``'s
binding on a node whose cpuset lacks CPU 0 would refuse the step.
"""

import os

from common import available_environs

CONF = os.environ.get('PLACEMENT_TESTNODES_SLURM_CONF', '')
if CONF:
    # ReFrame's sbatch/squeue/scontrol calls read SLURM_CONF from its environment
    os.environ.setdefault('SLURM_CONF', CONF)

site_configuration = {
    'systems': [
        {
            'name': 'testnodes',
            'descr': 'Test Slurm cluster of tests/slurm_nodes.py (n1..nN on this host)',
            'hostnames': [r'^placement-testnodes-never-matches$'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'batch',
                    'descr': 'Whole nodes, one job at a time, programs run in the batch job',
                    'scheduler': 'squeue',
                    'launcher': 'local',
                    'access': ['--partition=batch', '--exclusive'],
                    'environs': available_environs(),
                    'max_jobs': 1,
                    'time_limit': '5m',
                    'features': ['slurm', 'exclusive', 'nodes'],
                    'env_vars': [['SLURM_CONF', CONF]] if CONF else [],
                    'extras': {'topology': 'live', 'topology_per_node': True, 'nodes': 1},
                },
            ],
        },
    ],
}
