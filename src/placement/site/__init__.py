"""A cluster described: a system file written from its compute node's own topology.

As ``spack compiler find`` writes configuration from what is on the machine, ``placement
site new`` asks the scheduler for a compute node of the partition
(:mod:`.scheduler` checks the partition or host first), captures its topology there and
writes ``config/systems/NAME.py`` with the topology beside it (:mod:`.capture`; the file's
text is :mod:`.system_file`; the partition's node count from :mod:`.scheduler`; whether a
task starts on a second node from :mod:`.two_nodes`), then shows what the system gets and runs
the binding and memory-policy checks there (:mod:`.ready`).

The front door of :mod:`placement.site`: other groups import from here only. It sits on
:mod:`placement.engine` and reaches :mod:`placement.testlib` (ReFrame) lazily, only when it
captures a node or shows its thread sweep; it is used by :mod:`placement.cli`.
"""

from . import capture, ready, scheduler, system_file, two_nodes

__all__ = ["capture", "ready", "scheduler", "system_file", "two_nodes"]
