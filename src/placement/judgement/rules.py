"""Every setting of the two verdicts: the verdict over sessions and the peer verdict.

Each setting says what it decides and why its value is what it is. The modules that apply a
setting import it from here by its name. Which recorded sessions a setting was chosen on,
and when the settings were last chosen, is kept beside the benchmarks that judge them
(``benchmarks/rules_provenance.yaml``), not in the code: changing a value is choosing again,
and that file says how.
"""

from __future__ import annotations

# -- the verdict over sessions (placement.judgement.verdict): a run against its baseline

#: family-wise level of a run's verdicts: an unchanged run calls anything regressed with at
#: most this chance under the model, so 19 of 20 unchanged runs call nothing.
ALPHA: float = 0.05
#: relative change of a value below which a site does not care: a site setting (``--min-effect``
#: per run), the smallest change a site has said it would act on.
MIN_EFFECT: float = 0.03
#: confidence of the equivalence interval that calls a value unchanged: two one-sided tests
#: at 5 % each, the usual equivalence test (TOST).
EQUIV_CONFIDENCE: float = 0.90
#: the node's common shift below which no whole-node change is flagged: above the shifts
#: seen between back-to-back quiet sessions of one node.
MACHINE_EFFECT: float = 0.07
#: level at which the node's shift must stand out from the baseline's own sessions' shifts:
#: stricter than ALPHA because a flagged node changes how every value is read.
NODE_ALPHA: float = 0.01
#: a common shift that fails a run at any baseline size: above every shift between unchanged
#: sessions, below the 2x slower node a site must see.
NODE_AT_ONCE: float = 0.50
#: baseline sessions with a shift of their own that the node's shift is tested against:
#: three is the fewest whose spread of shifts tells a node change from session noise.
TESTED_SESSIONS: int = 3
#: the smallest change beyond every baseline session that is *gross* (sent to a
#: confirmation session): far enough that session-to-session noise of a tight value does
#: not reach it.
GROSS_EFFECT: float = 0.25
#: the widest launches a gross value may have (the pooled standard deviation of their logs
#: within a session, about their CV): a gap is only gross where the launches agree this
#: closely.
GROSS_LAUNCHES: float = 0.02
#: below this many baseline sessions the acceptance summary and the report add a note: with
#: fewer, the session spread rests mostly on the prior.
MIN_SESSIONS: int = 3
#: values a run needs before its common shift and its own prior mean anything: a median and
#: a fitted prior over fewer are too noisy to use.
MIN_VALUES: int = 10
#: changes beyond this factor minus one are all "more than this baseline can call" in texts:
#: past a tenfold change the exact figure tells a site nothing more.
DETECTABLE_MAX: float = 9.0
#: the adaptive loop stops when the launches' part of a value's variance is below this
#: share: more launches of one session cannot narrow what the sessions leave open.
LAUNCH_SHARE: float = 0.25
#: degrees of freedom standing for "the values are alike" (an infinite prior ``d0``): a t
#: distribution with this many is the normal to well within the verdict's precision.
DF_CAP: float = 1000.0
#: the median case's share of time with a task waiting for a CPU from which the node is
#: called loaded: halfway between a quiet run (a few percent) and two busy loops per core
#: (nearly all the time).
LOAD_LIMIT: float = 0.5
#: cases a run needs before the median of their CPU waits means anything: fewer leave the
#: median to one or two cases.
MIN_CASES: int = 5

# -- the bounds a reference file gives plain ``reframe -r`` and the states no bound fits

#: the widest bound a reference file gives plain ReFrame: a value twice as slow always fails,
#: while single values of an unchanged rerun on a shared machine move by nearly as much.
REF_CAP: float = 2.0
#: level of the bounds ``baseline record`` writes over all a file's values (Bonferroni): the
#: bounds are a safety net for gross changes, so they are wide enough for the heavy tails of
#: unchanged values and leave the rest to the verdict.
REF_ALPHA: float = 0.001
#: NPB quick-mode runs shorter than this have states (``no_bound``): such short runs sit
#: far apart between sessions whatever their placement.
NPB_SHORT_RUN_S: float = 5.0
#: from this many threads a write on a virtual machine has states (``no_bound``): the host
#: places two or more vCPUs out of the guest's sight, for minutes at a time.
VIRTUAL_THREAD_STATES: int = 2

# -- the baseline's sessions

#: sessions kept per variable by ``baseline record --add`` unless ``--keep`` says otherwise:
#: enough for the session spread and a step test, few enough to follow a node's drift.
KEEP_SESSIONS: int = 10

# -- the peer verdict (placement.judgement.peers): a partition's nodes against each other

#: family-wise level of naming any node (or half) of an unchanged partition, over every
#: node, half and family of values at once: a convention, as ALPHA.
PEER_ALPHA: float = 0.05
#: the least median slowdown over a family of values that names a node: a machine 10 %
#: behind its peers is worth a look, smaller gaps are ordinary differences between machines.
PEER_EFFECT: float = 0.10
#: a node the step-down test left unnamed is named when it is the slowest of its kind on
#: every measurement that uses every PU at under this share of its peers' rate: a machine
#: doing less than half its peers' work is broken, not one of machines' usual differences.
PEER_FAR_OUT: float = 0.5
#: a node's memory size within this share (or one unit as printed) of the nodes' median is
#: the same: alike nodes print sizes rounded differently.
PEER_MEMORY_SLACK: float = 0.05
#: the fewest nodes with a value to judge it by its peers: a centre and a spread without the
#: node need two others (shared by the value tests, the peer test and the topology majority).
MIN_NODES: int = 3
#: the largest partition whose halves are candidates: C(8, 4) / 2 = 35 halves; a larger one
#: has a majority whenever fewer than half of its nodes are odd, and those are named alone.
HALVES_MAX_NODES: int = 8
