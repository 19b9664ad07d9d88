"""Any machine with no system file of its own: the local host, serial execution.

It matches every hostname and is tried last; the topology is the live machine's,
read through hwloc, and its baseline is whatever its first run records.
"""

from common import available_environs

site_configuration = {
    'systems': [
        {
            'name': 'generic',
            'descr': 'This machine (no site configuration): local runs, one at a time',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'descr': 'Local host, jobs one at a time so timings never overlap',
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
