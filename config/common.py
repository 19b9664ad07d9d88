"""Settings shared by every system: programming environments, logging, storage, modes.

Each file in ``config/systems/`` describes one system; ``config/settings.py``
puts them together. Results go to ``$PLACEMENT_RESULTS`` (default ``results/``
in the checkout): ReFrame's results database, run reports and perflogs.
"""

import os
import shutil

from reframe.core.backends import register_scheduler
from reframe.core.exceptions import ConfigError
from reframe.core.schedulers.sge import SgeJobScheduler

from placement.util import interrupt_once, local_jobs, poll_clock, storage_without_polars
from placement.util.reframe_workarounds import SGE_ACCESS, enabled

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.environ.get('PLACEMENT_RESULTS', os.path.join(ROOT, 'results'))
os.makedirs(RESULTS, exist_ok=True)


def _present(*tools):
    return all(shutil.which(t) for t in tools)


#: Environments a partition may list. Each system file lists those its nodes have; local
#: partitions use ``available_environs()`` (the ones whose compilers are on PATH here), so a
#: check never fails for a missing compiler.
environments = [
    {
        'name': 'gnu',
        'cc': 'gcc', 'cxx': 'g++', 'ftn': 'gfortran',
        'features': ['openmp', 'c', 'fortran'],
        'extras': {'omp_flag': '-fopenmp', 'compiler': 'gcc'},
    },
    {
        'name': 'clang',
        'cc': 'clang', 'cxx': 'clang++', 'ftn': '',
        'features': ['openmp', 'c'],
        'extras': {'omp_flag': '-fopenmp', 'compiler': 'clang'},
    },
    {
        'name': 'intel',
        'cc': 'icx', 'cxx': 'icpx', 'ftn': 'ifx',
        'features': ['openmp', 'c', 'fortran'],
        'extras': {'omp_flag': '-qopenmp', 'compiler': 'icx'},
    },
]

#: How many times slower than the NPB budgets' reference core the emulated nodes of
#: ``tests/numa_node.py`` run (QEMU's TCG: CG class A at eight threads 22-32 s where the
#: reference budget is 30 s, docs/howto/numa-node.md): their partitions give it as
#: ``extras['npb_budget_scale']``, so every NPB watchdog there is this many times longer.
EMULATED_BUDGET_SCALE = 6

ENV_TOOLS = {'gnu': ('gcc',),   # gfortran only builds NPB, which may come prebuilt
             'clang': ('clang',), 'intel': ('icx',)}


def available_environs(names=('gnu', 'clang', 'intel')):
    """The environments whose compilers are on PATH here (for local partitions)."""
    return [n for n in names if _present(*ENV_TOOLS[n])]


class SgeAccessScheduler(SgeJobScheduler):
    """ReFrame's ``sge`` backend that also writes the partition's ``access`` options.

    Why: ReFrame 4.10's ``sge`` scheduler silently drops ``access`` (only the
    Slurm, PBS, LSF and OAR backends emit it), so ``-l exclusive=true`` or
    ``-pe smp 64`` on an SGE partition would never reach ``qsub``. Use
    ``'scheduler': 'sge-access'`` on Grid Engine partitions. On ReFrame versions
    outside ``SGE_ACCESS`` (docs/reference/workarounds.md) it is the stock backend;
    options the stock preamble already holds are never written twice.
    """

    def emit_preamble(self, job):
        preamble = super().emit_preamble(job)
        if not enabled(SGE_ACCESS):
            return preamble
        return preamble + [line for line in map(self._format_option, job.sched_access)
                           if line not in preamble]


try:   # the configuration may be loaded more than once in one process
    register_scheduler('sge-access')(SgeAccessScheduler)
except ConfigError:   # already registered by an earlier load
    pass

# a local job's detached processes end with it; a clock step never stalls the poll loop; a
# second SIGINT never stops the abort of the first (only on the ReFrame versions they were
# checked against: README, ReFrame workarounds)
local_jobs.install()
poll_clock.install()
storage_without_polars.install()
interrupt_once.install()


logging = [
    {
        'level': 'debug',
        'handlers': [
            {'type': 'stream', 'name': 'stdout', 'level': 'info', 'format': '%(message)s'},
            {'type': 'file', 'name': os.path.join(RESULTS, 'reframe.log'), 'level': 'debug',
             'format': '[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s',
             'append': False},
        ],
        'handlers_perflog': [
            {
                'type': 'filelog',
                'prefix': os.path.join(RESULTS, 'perflogs', '%(check_system)s',
                                       '%(check_partition)s'),
                'level': 'info',
                'format': ('%(check_job_completion_time)s|reframe %(version)s|'
                           '%(check_info)s|%(check_perfvalues)s'),
                'format_perfvars': ('%(check_perf_value)s|%(check_perf_unit)s|'
                                    '%(check_perf_ref)s|%(check_perf_lower_thres)s|'
                                    '%(check_perf_upper_thres)s|'),
                'append': True,
            },
        ],
    },
]

general = [
    {
        'check_search_path': [os.path.join(ROOT, 'reframe_tests')],
        'check_search_recursive': True,
        'report_file': os.path.join(RESULTS, 'runs', 'run-report-{sessionid}.json'),
        'save_log_files': True,
        'perf_info_level': 'info',
    },
]

storage = [
    {
        'enable': True,
        'sqlite_db_file': os.path.join(RESULTS, 'results.db'),
    },
]

#: ``reframe --mode NAME``. Serial: one timed case at a time so runs never overlap
#: on a node (on batch partitions ``max_jobs`` and exclusive access do that too).
#: ``scripts/acceptance.sh MODE`` runs these for scheduled acceptance testing.
modes = [
    {'name': 'quick', 'options': ['--tag=quick', '--exec-policy=serial']},
    {'name': 'acceptance', 'options': ['--tag=acceptance', '--exec-policy=serial']},
    {'name': 'full', 'options': ['--tag=full', '--exec-policy=serial']},
]
