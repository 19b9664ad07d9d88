"""Where the settings of :mod:`placement.judgement.rules` come from (``rules_provenance.yaml``).

The sets of recorded sessions each setting was chosen on (*tuning sets*, folders under
``tests/fixtures``) and when the settings were last chosen: a set recorded after that
judges them and chooses nothing (a *validation set*). The benchmarks read it to tell the
two apart, ``tests/test_rules.py`` to hold them apart; the code of the verdicts never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

#: the data file, beside this module
PATH = Path(__file__).resolve().with_name("rules_provenance.yaml")


@dataclass(frozen=True)
class Choice:
    """How one setting (or a branch the code keeps) was chosen."""

    #: ``verdict`` (the verdict reads it, :data:`RULES_FIXED`), ``plain`` (only the bounds
    #: for plain ``reframe -r`` do, :data:`PLAIN_FIXED`) or ``peers`` (:data:`PEERS_FIXED`)
    scope: str
    #: folders of :data:`TUNING_SETS` (a ``plain`` one may name ``validation/NAME`` too);
    #: empty: a convention, not fitted to sessions
    chosen_on: tuple[str, ...]
    #: what the sessions showed
    evidence: str
    #: a former yes/no setting: the branch the code keeps ("yes" or "no"), else ""
    kept: str = ""
    #: the file that holds that branch, relative to the checkout
    at: str = ""


def _load() -> dict:
    return yaml.safe_load(PATH.read_text())


_DATA = _load()

#: when the verdict's settings were last chosen (UTC): a validation set's sessions start later
RULES_FIXED: str = _DATA["rules_fixed"]
#: when the settings of the ``plain`` scope were last chosen (UTC)
PLAIN_FIXED: str = _DATA["plain_fixed"]
#: when the peer verdict's settings were last chosen (UTC)
PEERS_FIXED: str = _DATA["peers_fixed"]
#: every fixing of the peer verdict, oldest first (the last is :data:`PEERS_FIXED`): the
#: sessions after each earlier one stay reported beside the later ones, so no new fixing
#: hides what the sessions after the one before showed
PEERS_FIXINGS: tuple[str, ...] = (*_DATA.get("peers_fixed_before", ()), PEERS_FIXED)
#: the sets the settings were chosen on, by folder under ``tests/fixtures``
TUNING_SETS: tuple[str, ...] = tuple(_DATA["tuning_sets"])
#: each setting's choice by name (``all``: chosen on every tuning set)
CHOICES: dict[str, Choice] = {
    name: Choice(c["scope"],
                 TUNING_SETS if c.get("chosen_on") == "all" else tuple(c.get("chosen_on") or ()),
                 str(c.get("evidence", "")), str(c.get("kept", "")), str(c.get("at", "")))
    for name, c in _DATA["rules"].items()}
