"""An example PBS Pro cluster: copy, rename, adjust the marked lines.

ReFrame's ``pbs`` backend writes ``-l select=1:mpiprocs=1:ncpus=1`` from the
test's task counts; ``-l place=excl`` makes the chunk's node exclusive, so a
timed case never shares it. ``mpiexec`` (PBS's own or the MPI's) starts the
program; with one task per node ``local`` works as well. Torque sites use
``'scheduler': 'torque'`` (``-l nodes=1:ppn=N``) and ``-W x=naccesspolicy:singlejob``.
"""

import os

from common import ROOT

site_configuration = {
    'systems': [
        {
            'name': 'example-pbs',
            'descr': 'Example PBS Pro cluster (exclusive nodes)',
            'hostnames': [r'^example-pbs-login\d*'],           # site: the login nodes
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'Whole nodes through PBS Pro, one job per node',
                    'scheduler': 'pbs',
                    'launcher': 'mpiexec',
                    'access': ['-q workq', '-l place=excl'],    # site: the queue
                    'environs': ['gnu', 'clang', 'intel'],
                    'max_jobs': 8,
                    'time_limit': '20m',
                    'features': ['pbs', 'exclusive'],
                    'env_vars': [['OMPI_MCA_hwloc_base_binding_policy', 'none']],
                    'extras': {'topology': os.path.join(ROOT, 'topologies', 'example-pbs.xml')},
                },
            ],
        },
    ],
}
