"""The matmul study's desktop: Intel Core i7-10700F (Comet Lake), 8 cores x 2 threads, local runs."""

import os

from common import ROOT

site_configuration = {
    'systems': [
        {
            'name': 'cometlake',
            'descr': 'Intel Core i7-10700F desktop (8 cores x 2 hardware threads)',
            'hostnames': [r'^cometlake'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'descr': 'Local runs, one at a time',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['gnu', 'clang', 'intel'],
                    'max_jobs': 1,
                    'extras': {'topology': os.path.join(ROOT, 'topologies', 'cometlake.xml')},
                },
            ],
        },
    ],
}
