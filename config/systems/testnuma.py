"""The emulated two-socket NUMA node ``make test-numa`` starts (``tests/numa_node.py``).

A cluster as at a site: ReFrame runs here (the login node), the checks' jobs run
on the compute node, a QEMU guest with 2 packages x 2 cores x 2 hardware threads
and 2 NUMA nodes, through ReFrame's own ``ssh`` scheduler. The node is reached
only through QEMU's user-mode network: ``PLACEMENT_TEST_NUMA_SSH_CONFIG`` names
the ssh configuration the runner wrote (port forward on 127.0.0.1, test key,
shared connection). It is passed as ``access`` (ReFrame gives ``access`` to ssh
and scp alike, so the port cannot be a ``-p`` option).

No ``extras['topology']``: the suite captures the compute node's own topology
with one job and caches it under ``results/topologies/`` (``node_topology``).
The ssh scheduler ignores ``time_limit``; the checks' own watchdogs bound runs.
Its hostname pattern matches no real host: select it with ``--system testnuma``.
"""

import os

from common import available_environs

SSH_CONFIG = os.environ.get('PLACEMENT_TEST_NUMA_SSH_CONFIG', '')

site_configuration = {
    'systems': [
        {
            'name': 'testnuma',
            'descr': 'Emulated 2-socket NUMA node with SMT of tests/numa_node.py, over ssh',
            'hostnames': [r'^placement-testnuma-never-matches$'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'node',
                    'descr': 'The emulated compute node, one job at a time',
                    'scheduler': 'ssh',
                    'launcher': 'local',
                    'access': ['-F', SSH_CONFIG] if SSH_CONFIG else [],
                    'sched_options': {'ssh_hosts': ['127.0.0.1']},
                    'environs': available_environs(('gnu',)),
                    'max_jobs': 1,
                    'extras': {'nodes': 1},
                    'features': ['ssh', 'numa'],
                },
            ],
        },
    ],
}
