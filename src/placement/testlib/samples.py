"""Per-run values in ReFrame's run report, so reports can show spread, not only means.

A performance variable is one number per case. A check that measures a case
several times (NPB's repeats, matmul's timed repetitions) sets
``perf_samples`` to ``{perfvar: [one value per run]}`` before its
performance stage; ReFrame stores the variable with the case in its run report,
and :mod:`placement.judgement.reading.run_report` turns it into confidence intervals and boxplots
long after the stage folders are gone.
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import variable


class PerfSamplesMixin(rfm.RegressionTestPlugin):
    """Adds ``perf_samples`` (every run's values) and ``perf_launches`` (one per launch)."""

    #: ``{perfvar: [value of each run]}``, filled by the check after its run.
    perf_samples = variable(typ.Dict[str, typ.List[float]], value={})

    #: ``{perfvar: [value of each launch]}``: one value per whole run of the program (a
    #: process), the samples a verdict judges; set only where one job launches the program
    #: several times (NPB's repeats). Unset, each appearance of the case (``--reruns``) is one.
    perf_launches = variable(typ.Dict[str, typ.List[float]], value={})

    #: Values with states between sessions, by performance variable, each with its reason
    #: (states further apart than any bound an unchanged rerun keeps): ``baseline record``
    #: writes them no plain ReFrame bound and keeps the reason in the file; the verdict
    #: judges them across sessions but never calls them gross from one.
    no_bound = variable(typ.Dict[str, str], value={})

    #: Values plain ReFrame gets no bound for, by performance variable, each with its reason,
    #: while the verdict still judges them (gross too): a state one baseline session cannot
    #: bound, which the verdict's confirmation session tells from a change. ``baseline
    #: record`` keeps the reason in the file.
    no_plain_bound = variable(typ.Dict[str, str], value={})
