"""The Xeon study's node: 2x Intel Xeon E5620, hyper-threading off, batch access with Slurm."""

import os

from common import ROOT

site_configuration = {
    'systems': [
        {
            'name': 'xeon-e5620',
            'descr': '2x Intel Xeon E5620 (4 cores each, HT off)',
            'hostnames': [r'^xeon-e5620'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'One whole node per job',
                    'scheduler': 'slurm',
                    'launcher': 'local',
                    'access': ['--exclusive'],
                    'environs': ['gnu'],
                    'max_jobs': 4,
                    'extras': {
                        'topology': os.path.join(ROOT, 'topologies', 'xeon-e5620.xml'),
                        # the study's GOMP_CPU_AFFINITY=0-7
                        'explicit_map': os.path.join(ROOT, 'config', 'maps', 'xeon-e5620.map'),
                    },
                },
            ],
        },
    ],
}
