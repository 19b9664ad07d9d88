"""Performance references from stored baselines, through ReFrame's own ``$ref`` files.

Each system has one reference file, ``config/baselines/<system>.yaml``
(``PLACEMENT_BASELINES`` moves the folder). Its top-level keys are test class
names; under each, ``$index`` lists the test attributes that index the entries
(the class's ``reference_index``), and the leaves are ReFrame reference tuples
``[value, lower, upper, unit]``. A system without a file, or a case without an
entry, runs with no reference: its first run can be recorded as its baseline
with ``placement baseline record``. A file that ``placement baseline diff``
refuses fails each case in setup, with the same line.
"""

from __future__ import annotations

import os
from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from ..util import baseline_file


class BaselineReferencesMixin(rfm.RegressionTestPlugin):
    """Points ``reference`` at the current system's baseline file, when there is one."""

    #: Test attributes indexing this class's reference entries, outermost first;
    #: ``placement baseline record`` writes entries in this order.
    reference_index = variable(typ.List[str], value=[])

    #: The version of the reference file this case's bounds came from (``sha256:<12 hex>``,
    #: empty without one): the acceptance summary checks that its verdict read the same
    baseline_version = variable(str, value='')

    @property
    def reference_file(self) -> Path:
        """The current system's reference file (it may not exist)."""
        return baseline_file(self.current_system.name)

    def entry(self, var: str) -> str:
        """``var``'s entry in the reference file, as ``placement baseline diff`` and the
        job's judge name it (``Test[index values].var``)."""
        special = {'$environ': lambda: self.current_environ.name,
                   '$partition': lambda: self.current_partition.fullname}
        keys = ','.join(str(special[a]() if a in special else getattr(self, a))
                        for a in self.reference_index)
        return f'{type(self).__name__}[{keys}].{var}'

    def stored_runs(self, var: str):
        """This case's stored runs of ``var`` (``_samples``), or None: no file, no runs, or a
        corrupt sample list (then the fixed rules apply and `placement baseline diff` names it)."""
        from ..judgement import repeats
        from ..util import PlacementError
        ref = self.reference_file
        if not ref.is_file():
            return None
        try:
            return repeats.judge.stored_runs(ref, self.entry(var))
        except PlacementError:
            return None

    @run_after('setup')
    def use_stored_baseline(self):
        """Point ReFrame at the system's reference file, once it reads whole.

        ReFrame reads the file itself with no limit; a file that `placement baseline diff`
        refuses (an alias bomb, cut short, a value no measurement can be) fails the case
        here with that one line: no case passes against a damaged file.
        """
        from ..judgement import baselines
        from reframe.core.exceptions import ReferenceParseError
        path = self.reference_file
        if os.path.lexists(path):   # a link, FIFO or device there fails the case unread
            refused = baselines.store.refusal(path)
            if refused:
                raise ReferenceParseError(refused)
            # an absolute path: ReFrame joins it to its reference prefix unchanged
            self.reference = {'$ref': str(path)}
            self.baseline_version = baselines.store.version(path)
