"""The binding probe as a test's own program: the base of every check that asks only
whether the placement happened (no kernel, no timing).

Unregistered: ``reframe_tests/binding_probe.py`` (every rendering and memory policy) and
the node-health family (``reframe_tests/node_health.py``, compact and scatter on each
node) derive their small concrete checks from it.
"""

import reframe as rfm
from reframe.core.builtins import run_after, sanity_function

from .placed import PlacedRunMixin


class BindingProbeBase(rfm.RunOnlyRegressionTest, PlacedRunMixin):
    """Runs the probe itself as the program; its own output is checked."""

    valid_systems = ['*']
    valid_prog_environs = ['+openmp']
    time_limit = '2m'

    @run_after('setup')
    def run_the_probe(self):
        self.executable = self.bindprobe.executable_path

    @sanity_function
    def validate(self):
        return self.assert_placed()
