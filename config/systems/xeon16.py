"""A 16-core Xeon node (one package, one NUMA node, no SMT), run locally one job at a time.

Its hostnames are not known in advance: select it with ``--system xeon16``.
The topology is read live through hwloc; its baseline is the first recorded run
(``config/baselines/xeon16.yaml``).
"""

from common import available_environs

site_configuration = {
    'systems': [
        {
            'name': 'xeon16',
            'descr': '16 Xeon cores, 1 NUMA node, no SMT (accelerator host)',
            'hostnames': [r'^xeon16'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'descr': 'Local runs, one at a time',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': available_environs(),
                    'max_jobs': 1,
                    'extras': {'topology': None},
                },
            ],
        },
    ],
}
