"""The *check* stage: was the job really placed the way the engine said?

:mod:`.probe` and :mod:`.hybrid_probe` read the probe's report (each thread's CPU,
allowed set and memory policy) and judge it against the map; :mod:`.node_shape` holds
the job's node against the partition's topology; :mod:`.numa_pages` and
:mod:`.page_placement` read where the pages went from ``numa_maps``; :mod:`.page_sharing`
reads which threads share them (a page CSV of numalize or the page sampler) and the
data-mapping study's advice; :mod:`.virtual_node` asks whether the node is a virtual machine
(several threads' bandwidth then has states).

The front door of :mod:`placement.checks`: other groups import from here only. It
builds on :mod:`placement.engine` (the expected places) and nothing later.
"""

__all__ = ["hybrid_probe", "node_shape", "numa_pages", "page_placement", "page_sharing", "probe",
           "virtual_node"]
