"""Building the suite's C programs from the checkout, once per programming environment.

Fixtures of this kind compile a folder of ``src/`` with the environment's C
compiler and OpenMP flag. ``make -B`` rebuilds everything: the source tree may
hold objects left by another compiler (``make -C src``, another environment).
"""

from __future__ import annotations

import os

import reframe as rfm
from reframe.core.builtins import run_before, variable

from ..util import repo_root


class SourceTreeBuild(rfm.CompileOnlyRegressionTest):
    """Compiles ``src/<source_subdir>`` with Make in the stage directory."""

    build_system = 'Make'
    build_locally = True
    #: The folder of ``src/`` to build.
    source_subdir = variable(str)

    @run_before('compile')
    def setup_build(self):
        self.sourcesdir = str(repo_root() / 'src' / self.source_subdir)
        omp = self.current_environ.extras.get('omp_flag', '-fopenmp')
        self.build_system.options = ['-B', f'OPENMP_FLAG={omp}', f'CC={self.current_environ.cc}']

    def path(self, program: str) -> str:
        """Where a built program is."""
        return os.path.join(self.stagedir, program)
