"""What the datamap kernel saw of its pages, kept in the run report.

Why: with the kernel's automatic NUMA balancing on, pages migrate towards the
threads using them while the kernel runs, so the end state hides where first
touch (or the policy) put them. The kernel prints both states and the
``kernel.numa_balancing`` setting; this mixin records them with the case, and
the report's provenance lists the balancing setting.
"""

from __future__ import annotations

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, variable

from ..checks import page_placement
from ..judgement import repeats


def _pages(text: str, tag: str) -> str:
    pages, _threads = page_placement.parse(text, tag)
    return ' '.join(f'N{n}={p}' for n, p in sorted(pages.items()))


class DataMapPagesMixin(rfm.RegressionTestPlugin):
    """Records the datamap kernel's page placement after initialisation and at the end."""

    #: kernel.numa_balancing on the node during the run: ``0 (off)``, ``1 (on)`` or ``unknown``.
    numa_balancing = variable(str, value='')
    #: Pages per NUMA node over the arrays right after initialisation (``N0=.. N1=..``).
    pages_after_init = variable(str, value='')
    #: Pages per NUMA node over the arrays at the end of the run.
    pages_at_end = variable(str, value='')

    @run_before('performance')
    def record_pages(self):
        with open(os.path.join(self.stagedir, str(sn.evaluate(self.stdout)))) as fp:
            text = fp.read()
        # a job with several launches: the first launch's pages (each launch prints its own)
        launches = repeats.loop_script.split_launches(text)
        if launches:
            text = launches[0][1]
        self.numa_balancing = page_placement.numa_balancing(text)
        self.pages_after_init = _pages(text, 'numa_maps_init')
        self.pages_at_end = _pages(text, 'numa_maps')
