"""The verdict over sessions: a run's values judged against their baseline's sessions.

:mod:`.over_sessions` judges each value (with :mod:`.moderation`'s prior over many values),
:mod:`.node_shift` the node as a whole, :mod:`.node_load` whether the node was loaded,
:mod:`.guards` the fixed limits, :mod:`.intervals` the reference entries ReFrame reads and
:mod:`.changepoints` the steps in a history; :mod:`.as_data` keeps a verdict as plain data.
"""

from . import (as_data, changepoints, guards, intervals, moderation, node_load, node_shift,
               over_sessions)

__all__ = ["as_data", "changepoints", "guards", "intervals", "moderation", "node_load",
           "node_shift", "over_sessions"]
