"""Baselines: the reference files a system's runs are judged against.

:mod:`.store` reads and writes them (ReFrame's intervals beside the per-launch samples),
:mod:`.samples` keeps the samples and their sessions, :mod:`.pool` a partition's pooled
entry beside its nodes', :mod:`.contents` the counts that tell a whole file from a cut one,
:mod:`.shape` the layout of an entry and :mod:`.cache` the prepared baselines.
"""

from . import cache, contents, pool, recording, samples, shape, store

__all__ = ["cache", "contents", "pool", "recording", "samples", "shape", "store"]
