"""The one-node Slurm cluster ``make test`` starts (``tests/slurm_cluster.py``).

Its hostname pattern matches no real host, so a normal run still picks
``generic``; select it with ``--system testcluster`` (or ``testcluster:srun``).
``PLACEMENT_TEST_SLURM_CONF`` names the cluster's ``slurm.conf``; it is put in
the environment of ReFrame's own ``sbatch``/``squeue`` calls and of every job.

The ``squeue`` backend is ReFrame's Slurm backend polling with ``squeue``: the
test cluster has no accounting database, which the ``slurm`` backend's
``sacct`` needs. Submission (``sbatch``), job scripts, ``srun`` and the binding
are the same as under ``slurm``. ``extras['nodes']`` tells two-node checks to skip;
the cluster's ``MpiDefault=pmix`` lets ``srun`` start Debian's Open MPI ranks.
"""

import os

from common import available_environs

CONF = os.environ.get('PLACEMENT_TEST_SLURM_CONF', '')
if CONF:
    # ReFrame's sbatch/squeue/scontrol calls read SLURM_CONF from its environment
    os.environ.setdefault('SLURM_CONF', CONF)

_env = [['SLURM_CONF', CONF]] if CONF else []
_common = {
    'scheduler': 'squeue',
    'access': ['--partition=debug', '--exclusive'],
    'environs': available_environs(),
    'max_jobs': 1,
    'time_limit': '5m',
    'extras': {'topology': 'live', 'nodes': 1},    # the test node is this host
}

site_configuration = {
    'systems': [
        {
            'name': 'testcluster',
            'descr': 'Test Slurm cluster of tests/slurm_cluster.py (this host, one node)',
            'hostnames': [r'^placement-testcluster-never-matches$'],
            'modules_system': 'nomod',
            'partitions': [
                {**_common, 'name': 'srun', 'launcher': 'srun',
                 'descr': 'Whole node, tasks started and bound by srun',
                 'features': ['slurm', 'srun', 'exclusive'], 'env_vars': _env},
                {**_common, 'name': 'mpirun', 'launcher': 'mpirun',
                 'descr': 'Whole node, tasks started by Open MPI mpirun (as root here)',
                 'features': ['slurm', 'mpirun', 'exclusive'],
                 'env_vars': _env + [['OMPI_MCA_hwloc_base_binding_policy', 'none'],
                                     ['OMPI_ALLOW_RUN_AS_ROOT', '1'],
                                     ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']]},
            ],
        },
    ],
}
