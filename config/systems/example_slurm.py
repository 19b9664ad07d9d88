"""An example Slurm cluster: copy this file, rename the system, adjust the marked lines.

Two partitions on the same nodes, one per launcher:

* ``srun``: tasks started by ``srun``; with ``TaskPlugin=task/affinity`` (or
  ``task/cgroup``) Slurm binds each task to its CPUs, and the placement engine
  then pins the OpenMP threads inside that set;
* ``mpirun``: tasks started by Open MPI's ``mpirun`` inside the allocation;
  ``OMPI_MCA_hwloc_base_binding_policy=none`` stops Open MPI binding the rank to
  one core, so the thread map (not Open MPI's default) decides where threads go.

``--exclusive`` gives each job whole nodes: nothing else runs beside a timed
case, and a one-task job step gets every CPU of the node (srun's default
without ``--exact``). ``scheduler: slurm`` polls with ``sacct`` (accounting must
be on); where it is not, use ``squeue`` as ``testcluster.py`` does.

Run one check on every node of a partition with ``--distribute``::

    reframe -C config/settings.py --system example-slurm:srun --mode quick --distribute=idle -r
"""

import os

from common import ROOT

#: The nodes' topology (``lstopo-no-graphics --of xml > topologies/<name>.xml`` on a
#: compute node); ``None`` would read the host ReFrame runs on, usually a login node.
TOPOLOGY = os.path.join(ROOT, 'topologies', 'example-slurm.xml')

_common = {
    'scheduler': 'slurm',
    'access': ['--partition=compute', '--exclusive'],     # site: the partition, account
    'environs': ['gnu', 'clang', 'intel'],
    'max_jobs': 8,
    'time_limit': '20m',
    'sched_options': {'use_nodes_option': True},
    'extras': {'topology': TOPOLOGY, 'nodes': 2},        # site: nodes in the partition
}

site_configuration = {
    'systems': [
        {
            'name': 'example-slurm',
            'descr': 'Example Slurm cluster (whole nodes, srun and mpirun)',
            'hostnames': [r'^example-login\d*'],               # site: the login nodes
            'modules_system': 'nomod',                          # site: lmod, tmod4, spack
            'partitions': [
                {**_common, 'name': 'srun', 'launcher': 'srun',
                 'descr': 'Whole nodes, tasks started and bound by srun',
                 'features': ['slurm', 'srun', 'exclusive'],
                 # srun starts MPI ranks through PMIx (site: pmi2, or unset if MpiDefault is set)
                 'env_vars': [['SLURM_MPI_TYPE', 'pmix']]},
                {**_common, 'name': 'mpirun', 'launcher': 'mpirun',
                 'descr': 'Whole nodes, tasks started by Open MPI mpirun',
                 'features': ['slurm', 'mpirun', 'exclusive'],
                 'env_vars': [['OMPI_MCA_hwloc_base_binding_policy', 'none']]},
            ],
        },
    ],
}
