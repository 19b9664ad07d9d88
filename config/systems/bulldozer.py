"""The Bulldozer study's node: 4x AMD Opteron 6272, reached through Oracle Grid Engine.

Hostname pattern ``bulldozer*`` (the submit host); rename it to your host, or
select the system with ``--system bulldozer``. Its topology is
``topologies/bulldozer.xml``.

Grid Engine specifics, all site-tunable in ``access``:

* ``sge-access`` (defined in ``config/common.py``) is ReFrame's ``sge`` backend
  plus the ``access`` lines, which the stock backend drops;
* ``-pe smp 64`` asks for all 64 slots of one host (name your site's
  shared-memory parallel environment, ``qconf -spl``);
* ``-l exclusive=true`` needs the ``exclusive`` complex (``qconf -mc``:
  ``exclusive excl BOOL EXCL YES YES 0 1000``) so no other job shares the node;
* ``-S /bin/bash``: Grid Engine otherwise runs the job script with its default
  shell (often csh) whatever the ``#!`` line says; ``-V`` is not used, the job
  script exports everything it needs.
"""

import os

from common import ROOT

site_configuration = {
    'systems': [
        {
            'name': 'bulldozer',
            'descr': '4x AMD Opteron 6272 (Bulldozer, 32 modules / 64 cores)',
            'hostnames': [r'^bulldozer'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'One whole node per job under Oracle Grid Engine',
                    'scheduler': 'sge-access',
                    'launcher': 'local',
                    'access': ['-q all.q', '-pe smp 64', '-l exclusive=true', '-S /bin/bash'],
                    'environs': ['gnu'],
                    'max_jobs': 4,
                    'time_limit': '30m',
                    'features': ['sge', 'exclusive'],
                    'extras': {
                        'topology': os.path.join(ROOT, 'topologies', 'bulldozer.xml'),
                        'explicit_map': os.path.join(ROOT, 'config', 'maps', 'bulldozer.map'),
                    },
                },
            ],
        },
    ],
}
