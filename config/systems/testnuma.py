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
NPB's budgets are ``EMULATED_BUDGET_SCALE`` times longer there (``extras``): the
emulator is that much slower than the budgets' reference core.
The ssh scheduler ignores ``time_limit``; the checks' own watchdogs bound runs.
Its hostname pattern matches no real host: select it with ``--system testnuma:node``.

Two more partitions reach the same node for hybrid MPI+OpenMP jobs: ``mpi``
(the ssh scheduler, Open MPI's ``mpirun`` inside the node) and ``slurm`` (a real
Slurm whose compute node is the guest, ``tests/numa_slurm.py``: ReFrame's own
``sbatch``/``squeue`` read ``SLURM_CONF``, the controller's, from its
environment; jobs in the guest get the guest's through the partition).
"""

import os

from common import EMULATED_BUDGET_SCALE, available_environs

SSH_CONFIG = os.environ.get('PLACEMENT_TEST_NUMA_SSH_CONFIG', '')
#: The guest's own slurm.conf (tests/numa_slurm.py): what jobs there read through SLURM_CONF
GUEST_SLURM_CONF = os.environ.get('PLACEMENT_TEST_NUMA_SLURM_GUEST_CONF', '')

_ssh = {
    'scheduler': 'ssh',
    'access': ['-F', SSH_CONFIG] if SSH_CONFIG else [],
    'sched_options': {'ssh_hosts': ['127.0.0.1']},
    'environs': available_environs(('gnu',)),
    'max_jobs': 1,
    'extras': {'nodes': 1, 'npb_budget_scale': EMULATED_BUDGET_SCALE},
}

site_configuration = {
    'systems': [
        {
            'name': 'testnuma',
            'descr': 'Emulated 2-socket NUMA node with SMT of tests/numa_node.py, over ssh',
            'hostnames': [r'^placement-testnuma-never-matches$'],
            'modules_system': 'nomod',
            'partitions': [
                {**_ssh, 'name': 'node',
                 'descr': 'The emulated compute node, one job at a time',
                 'launcher': 'local', 'features': ['ssh', 'numa']},
                {**_ssh, 'name': 'mpi',
                 'descr': 'The emulated node, ranks started by Open MPI mpirun (as root there)',
                 'launcher': 'mpirun', 'features': ['ssh', 'mpirun'],
                 'env_vars': [['OMPI_ALLOW_RUN_AS_ROOT', '1'],
                              ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']]},
                {'name': 'slurm',
                 'descr': 'The emulated node as the compute node of a real Slurm '
                          '(slurmctld here, slurmd there); ranks started and bound by srun',
                 'scheduler': 'squeue', 'launcher': 'srun',
                 'access': ['--partition=numa', '--exclusive'],
                 'environs': available_environs(('gnu',)), 'max_jobs': 1, 'time_limit': '5m',
                 'env_vars': [['SLURM_CONF', GUEST_SLURM_CONF]] if GUEST_SLURM_CONF else [],
                 'extras': {'nodes': 1, 'npb_budget_scale': EMULATED_BUDGET_SCALE},
                 'features': ['slurm', 'srun', 'exclusive']},
            ],
        },
    ],
}
