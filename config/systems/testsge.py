"""The one-host Grid Engine cluster ``make test`` starts (``tests/sge_cluster.py``).

Its hostname pattern matches no real host, so a normal run still picks
``generic``; select it with ``--system testsge``. It asks for what the
Bulldozer study's node asks for (``config/systems/bulldozer.py``): a queue, the
``smp`` parallel environment with every PU of the host, the ``exclusive``
complex and bash, through the ``sge-access`` scheduler. ReFrame's own ``qsub``
and ``qstat`` find the cluster through ``SGE_ROOT``, ``SGE_CELL`` and the port
variables the test puts in its environment.
"""

import os

from common import available_environs

_pus = len(os.sched_getaffinity(0))

site_configuration = {
    'systems': [
        {
            'name': 'testsge',
            'descr': 'Test Grid Engine cluster of tests/sge_cluster.py (this host)',
            'hostnames': [r'^placement-testsge-never-matches$'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'One whole host per job, as on the Bulldozer node',
                    'scheduler': 'sge-access',
                    'launcher': 'local',
                    'access': ['-q all.q', f'-pe smp {_pus}', '-l exclusive=true',
                               '-S /bin/bash'],
                    'environs': available_environs(),
                    'max_jobs': 1,
                    'time_limit': '5m',
                    'features': ['sge', 'exclusive'],
                    'extras': {'topology': 'live', 'nodes': 1},   # the test host
                },
            ],
        },
    ],
}
