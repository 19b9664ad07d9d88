"""The placement engine: stages *topology*, *maps* and *launch*.

An hwloc topology (:mod:`.topology`, CPU lists in :mod:`.cpulist`, synthetic nodes in
:mod:`.synthetic`), a thread count and a strategy become an ordered CPU list
(:mod:`.maps`) or a ranks x threads layout (:mod:`.hybrid`); a memory policy becomes a
``numactl`` prefix (:mod:`.policies`) and :mod:`.lint` warns about maps that cannot work.
:mod:`.renderings`, :mod:`.launch` and :mod:`.hybrid_launch` put the places in every
binder's and launcher's words.

The front door of :mod:`placement.engine`: other groups import from here only. The
engine knows nothing of jobs, samples or verdicts; it depends on :mod:`placement.util`.
"""

from .cpulist import format_ranges, parse_list
from .hybrid import HybridPlacement
from .maps import Placement, STRATEGIES
from .policies import KERNEL_MODE, MemoryPolicy, POLICIES
from .synthetic import generate_xml
from .topology import Topology

__all__ = [
    # modules
    "cpulist", "hybrid", "hybrid_launch", "launch", "lint", "maps", "policies", "renderings",
    "synthetic", "topology",
    # names
    "HybridPlacement", "KERNEL_MODE", "MemoryPolicy", "POLICIES", "Placement", "STRATEGIES",
    "Topology", "format_ranges", "generate_xml", "parse_list",
]
