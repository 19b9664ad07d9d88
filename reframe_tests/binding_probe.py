"""The placement really happens: the binding probe under every rendering and memory policy.

These are the quick checks every site runs first: if a map or a policy is not
honoured here, no performance number from the other checks can be trusted.
"""

import shutil

import reframe as rfm
from reframe.core.builtins import parameter, run_after, variable

from placement.engine.launch import BINDERS
from placement.engine.policies import POLICIES
from placement.testlib.binding_probe import BindingProbeBase


@rfm.simple_test
class BindingRenderingCheck(BindingProbeBase):
    """Each way of stating a map (env var or launcher tool) binds each thread as computed."""

    descr = 'Thread binding through every rendering of the map'
    binder = parameter(BINDERS)
    affinity = parameter(['compact', 'scatter', 'spread-cores'])
    tags = {'quick', 'acceptance', 'full', 'binding'}

    @run_after('init')
    def runtimes(self):
        # KMP_AFFINITY is read by Intel/LLVM OpenMP runtimes only
        self.valid_prog_environs = ['intel', 'clang'] if self.binder == 'kmp' else ['+openmp']

    @run_after('setup')
    def tools_present(self):
        # at setup, not init: a missing tool is a SKIP in the run and its summary,
        # not a case that silently vanishes when the file loads
        tool = {'numactl': 'numactl', 'taskset': 'taskset', 'hwloc': 'hwloc-bind',
                'likwid': 'likwid-pin'}.get(self.binder)
        self.skip_if(tool is not None and shutil.which(tool) is None,
                     f'{tool} is not installed here')


@rfm.simple_test
class MemoryPolicyCheck(BindingProbeBase):
    """Each memory policy is in force in the placed process, on the nodes computed."""

    descr = 'NUMA memory policy applied through numactl'
    policy = parameter(POLICIES)
    affinity = parameter(['none', 'scatter'])
    tags = {'quick', 'acceptance', 'full', 'binding'}


@rfm.simple_test
class ExplicitMapCheck(BindingProbeBase):
    """A partition's own explicit map (``extras['explicit_map']``, a study's CPU list) binds as
    listed, and the lint's verdict on it is kept in the run report."""

    descr = "The partition's explicit CPU map, bound and linted"
    affinity = 'explicit'
    threads = parameter([2, 'full'])
    tags = {'quick', 'acceptance', 'full', 'binding'}
    #: The lint's warnings about this map at this thread count (empty: none).
    lint = variable(str, value='')

    @run_after('setup')
    def keep_lint(self):
        self.lint = '; '.join(self.launch_settings.warnings)
