"""Every constant of the verdict: its value, the sets of sessions it was chosen on, and why.

A rule chosen on a set of sessions fits those sessions: its figures there are *in-sample*.
Each rule names its *tuning sets* (:data:`TUNING_SETS`, folders under ``tests/fixtures``);
the figures a site reads come from *validation sets* (``tests/fixtures/validation/``),
recorded after :data:`RULES_FIXED` and named by no rule. Each set's ``set.yaml`` says when,
where and under what load it was recorded; git history says how each value came to be.

Changing a value is choosing again: name the sets it was chosen on, move
:data:`RULES_FIXED`, and judge it on sets recorded after that. A rule of the ``plain``
scope decides only the bounds ``baseline record`` writes for plain ``reframe -r`` (the
verdict never reads it) and moves :data:`PLAIN_FIXED` alone.
"""

from __future__ import annotations

from dataclasses import dataclass

#: when the values below were last chosen (UTC, the commit that fixed them): a validation
#: set's sessions start later
RULES_FIXED = "2026-12-01T13:03:54Z"

#: when the rules of the ``plain`` scope (the bounds for plain ``reframe -r`` alone) were last
#: chosen (UTC): a set's plain ``reframe -r`` figures are out of sample when its sessions start
#: later
PLAIN_FIXED = "2026-11-29T19:22:37Z"


#: the sets the rules were chosen on, by folder under ``tests/fixtures`` (each described
#: by its ``set.yaml``)
TUNING_SETS = (
    "aa-sessions", "aa-sessions-2h", "aa-sessions-spread", "aa-launches", "aa-runs",
    "aa-xeon16-20261126", "aa-dev2core-shared-20261126", "aa-dev2core-quiet-20261126",
    "aa-dev2core-quiet-20261126pm", "aa-dev2core-acceptance-20261126",
    "aa-dev2core-quiet-20261126eve", "aa-xeon16-quiet-20261126eve",
    "aa-xeon16-quiet-20261126night", "aa-dev2core-quiet-20261126night",
    "aa-dev2core-quiet-20261127", "aa-dev2core-acceptance-20261127",
    "aa-dev2core-acceptance-20261127morning", "aa-dev2core-acceptance-20261127midday",
    "aa-dev2core-quiet-20261127aft", "aa-dev2core-quiet-20261127eve",
    "aa-dev2core-acceptance-20261127eve", "aa-xeon16-quiet-20261127night",
    "aa-dev2core-quiet-20261127night", "aa-dev2core-acceptance-20261127night",
    "aa-dev2core-quiet-20261128", "aa-dev2core-acceptance-20261128",
    "aa-dev2core-quiet-20261128morning", "aa-dev2core-acceptance-20261128morning",
    "aa-dev2core-acceptance-20261128day", "aa-dev2core-acceptance-20261128night",
    "aa-dev2core-quiet-20261128day", "aa-dev2core-quiet-20261128eve",
    "aa-dev2core-quiet-20261128late", "aa-dev2core-quiet-20261128night",
    "aa-dev2core-quiet-20261129aft", "aa-dev2core-quiet-20261129boot",
    "aa-dev2core-quiet-20261129dawn", "aa-dev2core-quiet-20261129dusk",
    "aa-dev2core-quiet-20261129early", "aa-dev2core-quiet-20261129eve",
    "aa-dev2core-quiet-20261129fourteen", "aa-dev2core-quiet-20261129hour",
    "aa-dev2core-quiet-20261129late", "aa-dev2core-quiet-20261129morn",
    "aa-dev2core-quiet-20261129night", "aa-dev2core-quiet-20261129nineteen",
    "aa-dev2core-quiet-20261129pm", "aa-dev2core-quiet-20261129six",
    "aa-dev2core-quiet-20261129ten", "aa-dev2core-quiet-20261129twentyone",
)


@dataclass(frozen=True)
class Rule:
    """One constant: its value, the sets it was chosen on and why it has that value."""

    value: float
    #: folders of :data:`TUNING_SETS` (a ``plain`` rule may also name ``validation/NAME``);
    #: empty: a convention, not fitted to sessions
    chosen_on: tuple[str, ...]
    why: str
    #: ``verdict``: the verdict reads it (:data:`RULES_FIXED`); ``plain``: only the bounds
    #: for plain ``reframe -r`` do (:data:`PLAIN_FIXED`)
    scope: str = "verdict"


#: the sets VIRTUAL_CACHE_PLAIN was chosen on: those whose plain ``reframe -r`` failures it
#: answers
PLAIN_CHOSEN_ON = tuple(f"aa-dev2core-{s}" for s in (
    "acceptance-20261128day", "acceptance-20261128night", "quiet-20261128day",
    "quiet-20261128eve", "quiet-20261128late", "quiet-20261128night", "quiet-20261129aft",
    "quiet-20261129boot", "quiet-20261129dawn", "quiet-20261129dusk", "quiet-20261129early",
    "quiet-20261129eve", "quiet-20261129fourteen", "quiet-20261129hour",
    "quiet-20261129late", "quiet-20261129morn", "quiet-20261129night", "quiet-20261129pm",
    "quiet-20261129six", "quiet-20261129ten")) + (
    "aa-sessions-spread", "aa-launches", "aa-runs", "aa-dev2core-quiet-20261126pm",
    "aa-dev2core-quiet-20261127night", "aa-dev2core-quiet-20261128morning",
    "aa-xeon16-quiet-20261126eve", "aa-xeon16-quiet-20261127night")


#: the verdict's constants by name (the modules that apply them import the values)
RULES: dict[str, Rule] = {
    "ALPHA": Rule(0.05, (), "family-wise level of a run's verdicts: 19 of 20 unchanged runs "
                            "call nothing regressed under the model"),
    "MIN_EFFECT": Rule(0.03, (), "the smallest relative change a site cares about (a site "
                                 "setting)"),
    "MACHINE_EFFECT": Rule(0.07, ("aa-sessions",),
                           "the node's shift below which no whole-node change is flagged: "
                           "above the shifts between back-to-back quiet sessions"),
    "NODE_ALPHA": Rule(0.01, (), "level at which the node's shift must stand out from the "
                                 "baseline's own sessions' shifts (three or more sessions)"),
    "NODE_AT_ONCE": Rule(0.50, ("aa-sessions", "aa-sessions-2h", "aa-sessions-spread",
                                "aa-launches", "aa-runs"),
                         "a shift that fails a run at any baseline size: above every shift "
                         "between unchanged sessions, below the 2x slower node a site must see"),
    "GROSS_EFFECT": Rule(0.25, ("aa-sessions-2h",),
                         "the smallest change beyond every baseline session that is sent to "
                         "a confirmation session as gross"),
    "GROSS_LAUNCHES": Rule(0.02, ("aa-sessions-2h",),
                           "the widest launches (pooled log SD within a session) a gross "
                           "value may have"),
    "GROSS_AGAIN_TIGHT": Rule(0, ("aa-sessions-2h", "aa-sessions", "aa-dev2core-quiet-20261126pm",
                                  "aa-dev2core-quiet-20261126eve", "aa-xeon16-quiet-20261126eve",
                                  "aa-dev2core-quiet-20261126night", "aa-dev2core-quiet-20261127",
                                  "aa-dev2core-quiet-20261127aft",
                                  "aa-xeon16-quiet-20261126night"),
                              "no (0): a confirmation session judges a gross value by the median "
                              "of its launches alone; one launch in a slow state lost tight ones"),
    "GROSS_OFF_SLOWER_NODE": Rule(0, ("aa-dev2core-acceptance-20261127eve",
                                      "aa-dev2core-quiet-20261127night",
                                      "aa-dev2core-acceptance-20261127night",
                                      "aa-dev2core-quiet-20261127eve",
                                      "aa-xeon16-quiet-20261127night"),
                                  "no (0): a slower node's shift is not taken off before the "
                                  "gross bar (a faster node's is): values that did not slow "
                                  "with the node hid behind it"),
    "GROSS_OWN_LAUNCHES": Rule(1, tuple(TUNING_SETS),
                               "yes (1): the first session tests a gross gap against the "
                               "value's own launches; a spread moderated over unalike values "
                               "took tight values for wide ones"),
    "NODE_BOTH_SESSIONS": Rule(1, ("aa-dev2core-quiet-20261128morning",),
                               "yes (1): a node line of NODE_AT_ONCE stands when the two "
                               "sessions' mean shift reaches it; a baseline session in a slow "
                               "state made a 2x slower node pass its confirmation"),
    "REF_CAP": Rule(2.0, ("aa-sessions-spread",),
                    "the widest bound a reference file gives plain ReFrame: single values of "
                    "an unchanged rerun moved by x1.9 on the shared machine"),
    "REF_ALPHA": Rule(0.001, ("aa-sessions-2h",),
                      "level of the bounds `record` writes over all a file's values"),
    "NPB_SHORT_RUN_S": Rule(5.0, ("aa-xeon16-20261126",),
                            "NPB quick-mode runs shorter than this have states (`no_bound`): "
                            "1-thread class S values sat 30-100% apart between sessions"),
    "VIRTUAL_THREAD_STATES": Rule(2, ("aa-sessions-2h", "aa-xeon16-20261126"),
                                  "from this many threads a write on a virtual machine has "
                                  "states (`no_bound`): session medians sat x1.9-3.6 apart"),
    "STATES_CALLED": Rule(0, ("aa-xeon16-20261126", "aa-dev2core-quiet-20261126pm",
                               "aa-dev2core-quiet-20261126eve", "aa-xeon16-quiet-20261126eve"),
                          "no (0): a value with states is never called either way; unchanged "
                          "ones sat up to x28 beyond their worst baseline session"),
    "VIRTUAL_CACHE_PLAIN": Rule(1, PLAIN_CHOSEN_ON,
                                "yes (1): a cache-sized value of a virtual machine gets no plain "
                                "ReFrame bound (`no_plain_bound`; the verdict still judges it): "
                                "such values fell to half in another state with tight launches",
                                scope="plain"),
    "LOAD_LIMIT": Rule(0.5, (), "the median case's share of time with a task waiting for a "
                                "CPU from which the node is loaded: between a quiet run "
                                "(4.1%) and two busy loops per core (97%)"),
}


def value(name: str) -> float:
    """The value of the rule ``name`` (:data:`RULES`)."""
    return RULES[name].value


# -- the peer verdict (placement.judgement.peers.partition): a partition's nodes judged against each other
#: when the peer rules below were last chosen (UTC): a peer set (``tests/fixtures/peers/*``)
#: whose sessions start later is out of sample for them
PEERS_FIXED = "2026-12-03T08:14:23Z"

RULES.update({
    "PEER_ALPHA": Rule(0.05, (), "family-wise level of naming a node of an unchanged "
                                 "partition, split (Bonferroni, peer_levels): half to the exact "
                                 "rank tests (a node; a half of 4-8 nodes; over all values and "
                                 "over those that use every PU), half to the values called "
                                 "alone (BH over nodes x values); a convention, not fitted"),
    "PEER_EVERY_PU": Rule(1, (), "yes (1): the nodes are also ranked over the values that use "
                                 "every PU alone: in the peer sets started before PEERS_FIXED a "
                                 "CPU-capped node was the slowest on every such value in 12 of "
                                 "13 sessions and named in 3 (its one-thread values diluted "
                                 "its ranks)"),
    "PEER_EVERY_PU_SUM": Rule(1, (), "yes (1): a node slower over the values that use every "
                                     "PU is tested on its summed log values, each "
                                     "value's numbers dealt to the nodes at random (exact), "
                                     "where countable: before PEERS_FIXED one capped at "
                                     "70% (-37%) and an unchanged one (-10%): one rank "
                                     "p, 0.0025 (level 0.0016); sum p 0.00076 and 0.016"),
    "PEER_HALF_EFFECT": Rule(1, (), "yes (1): a half of the nodes apart on ranks is named only "
                                    "when its median gap to the other half reaches PEER_EFFECT: "
                                    "in the peer sets started before PEERS_FIXED two unchanged "
                                    "nodes were called a half apart with values 2 % from the "
                                    "others'"),
    "PEER_EFFECT": Rule(0.05, (), "the smallest change of a value against its peers' median "
                                  "that is called: a node whose rank stands apart by less on "
                                  "every value is a real but small difference, not named"),
    "PEER_MIN_VALUES": Rule(1, (), "called values a node that stands apart needs to be named"),
    "PEER_VALUES_ALONE": Rule(2, (), "measurements (a case's time and rate are one) called "
                                     "on one side (BH at PEER_ALPHA / 2) that name a node "
                                     "whatever its ranks: a CPU-capped test node was worst on "
                                     "its 4 all-PU values of 12; chosen on the peer sets "
                                     "started before PEERS_FIXED"),
    "PEER_VALUES_SHARE": Rule(0.1, (), "the least share of a node's judged values those called "
                                       "values must be: 4 A/A sessions of one node as 4 nodes "
                                       "(tests/fixtures/aa-sessions-2h) had 3 of 126 called on "
                                       "one session, a bad minute; the capped node 4 of 12"),
    "PEER_MEMORY_SLACK": Rule(0.05, (), "a node's memory size within this share (or one unit "
                                        "as printed) of the nodes' median is the same: the "
                                        "first session of the unchanged peer set "
                                        "(tests/fixtures/peers/unchanged-*) showed 8 and 9 GiB "
                                        "on four alike nodes, rounded near a half; that set's "
                                        "sessions before PEERS_FIXED are in-sample"),
})
