"""The node's CPU pressure over a job: did other work hold the CPUs while the case measured?

Most kernels time many short samples and report their median, and a sample
that fits in one time slice runs at full speed beside a competing load: a node
with twice as many busy loops as cores moves the median value of a run by
only 4-13% here, too little for the node line to tell from one baseline
session's noise. Linux's pressure stall information says it directly: the
``some`` line of ``/proc/pressure/cpu`` counts the microseconds in which at
least one runnable task waited for a CPU. The job reads it (and the clock)
before and after its launches; ``cpu_wait`` is the share of the job's time with
a task waiting, on the node the job ran on (so also under a batch scheduler).

It is a guard (:mod:`placement.judgement.verdict.guards`): never stored in a baseline,
never judged against one; the acceptance summary reads it over the run
(:mod:`placement.judgement.verdict.node_load`). A node without PSI (a kernel before
4.20, or built or booted without it) prints no ``total=``, and ``cpu_wait`` is
NaN: not measured, never zero.
"""

from __future__ import annotations

import math
import re

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, run_before, variable

#: the job's line: the clock in ns and the PSI ``some`` line, empty without PSI
READ = 'echo "cpu_pressure at_ns=$(date +%s%N) $(grep -s ^some /proc/pressure/cpu)"'
_LINE = re.compile(r"cpu_pressure at_ns=(\d+) .*\btotal=(\d+)")


def waited_share(found: list[tuple[int, int]]) -> float:
    """Share of the time between the first and last ``(clock ns, PSI some total us)``
    readings with a task waiting for a CPU; NaN when the node has no PSI or the job did
    not read it twice."""
    if len(found) < 2:
        return math.nan
    (t0, w0), (t1, w1) = found[0], found[-1]
    if t1 <= t0:
        return math.nan
    return min(1.0, max(0.0, (w1 - w0) * 1000 / (t1 - t0)))


def own_waits(check) -> str:
    """Why a case's own work makes its tasks wait for a CPU, or ``""``: a background load of
    its own (``load``), more threads than the node has PUs, or ranks polling beside ReFrame
    on too few CPUs (``contended``). Its ``cpu_wait`` is then the case's design, not other
    work on the node, and the node's load line leaves it out."""
    load = getattr(check, 'load', 0) or 0
    if load > 0:
        return f'its own background load ({load} busy thread(s) per thread measured)'
    threads = getattr(check, 'num_threads', 0) or 0
    pus = getattr(check, 'topology_pus', 0) or 0
    if pus and threads > pus:
        return f'{threads} threads on {pus} PUs'
    if getattr(check, 'contended', False):
        return 'its ranks poll beside ReFrame on too few CPUs'
    return ''


class NodeLoadMixin(rfm.RegressionTestPlugin):
    """Reads the node's CPU pressure before and after the job's launches: ``cpu_wait``."""

    #: Why this case's own work waits for CPUs (:func:`own_waits`); empty when it does not.
    #: The node's load line (:mod:`placement.judgement.verdict.node_load`) leaves such cases out.
    waits_by_design = variable(str, value='')

    @run_before('run', always_last=True)
    def read_cpu_pressure(self):
        self.prerun_cmds = [READ] + list(self.prerun_cmds)
        self.postrun_cmds = list(self.postrun_cmds) + [READ]
        self.waits_by_design = own_waits(self)

    @performance_function('%')
    def cpu_wait(self):
        """Percent of the job's time with a task on the node waiting for a CPU."""
        return _percent(sn.extractall(_LINE.pattern, self.stdout, (1, 2), int))


@sn.deferrable
def _percent(found) -> float:
    return 100.0 * waited_share(found)
