"""The Bulldozer study's node: 4x AMD Opteron 6272, reached through Oracle Grid Engine.

Hostname pattern ``bulldozer*``; rename it to your node, or select the system
with ``--system bulldozer``. Its topology is ``topologies/bulldozer.xml``.
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
                    'descr': 'One whole node per job under Grid Engine',
                    'scheduler': 'sge',
                    'launcher': 'local',
                    'access': ['-l exclusive=true'],
                    'environs': ['gnu'],
                    'max_jobs': 4,
                    'extras': {
                        'topology': os.path.join(ROOT, 'topologies', 'bulldozer.xml'),
                        'explicit_map': os.path.join(ROOT, 'config', 'maps', 'bulldozer.map'),
                    },
                },
            ],
        },
    ],
}
