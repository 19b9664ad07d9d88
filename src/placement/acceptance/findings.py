"""What an acceptance run's summary finds, built step by step: the first session's cases, their
kinds, its values' verdicts and its load, then what its confirmation session decided."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..judgement import baselines, verdict
from . import confirmation
from .case_kinds import classify
from .parts import Part, by_signal, final_cases
from .regressions import Judged, judge_values
from .second_session import confirmed
from .waiting import Waiting, by_queue


@dataclass
class Findings:
    """What the summary concludes from a run, built step by step
    (:func:`.run_summary.summary`)."""

    system: str
    good: list[Part]
    #: every case as its last attempt left it, and what each counts as
    final: dict[tuple, dict[str, Any]]
    kinds: dict[tuple, str]
    judged: Judged
    judgement: baselines.samples.Judgement | None
    #: the node's load when it fails the first session
    load: verdict.node_load.Load | None
    #: said in the ACCEPTANCE line; gaps also make it INCOMPLETE (missing evidence)
    notes: list[str]
    gaps: list[str]
    conf: confirmation.Confirmation | None = None
    #: the cases whose job was still waiting on the scheduler when the time box closed
    waiting: list[Waiting] = field(default_factory=list)

    @property
    def node(self) -> verdict.over_sessions.NodeShift | None:
        return self.judgement.node if self.judgement is not None else None


def of_system(final: dict[tuple, dict[str, Any]], system: str, notes: list[str]
              ) -> dict[tuple, dict[str, Any]]:
    """The cases of ``system`` alone, where the run holds any (a note says how many of
    other systems were left out): another system's passes counted toward this one's PASS,
    though none of its own cases ran."""
    mine = {k: tc for k, tc in final.items() if tc.get("system") == system}
    if not mine:
        return final        # a system ReFrame did not name (``unknown``): every case
    others = sorted({str(tc.get("system")) for tc in final.values()} - {system})
    if others:
        notes.append(f"{len(final) - len(mine)} case(s) of {', '.join(others)} not counted "
                     f"(judged as {system})")
    return mine


def first_session(good: list[Part], system: str, cut_short: bool, notes: list[str],
                   gaps: list[str]) -> Findings:
    """The first session's cases, their kinds, its values' verdicts and its load."""
    final = of_system(final_cases(good), system, notes)
    judged, judgement = judge_values(good, system)
    signalled, queued = by_signal(good), by_queue(good)
    kinds = {key: classify(tc, cut_short, key in signalled, key in queued)
             for key, tc in final.items()}
    return Findings(system, good, final, kinds, judged, judgement,
                     confirmation.load_fails(final), notes, gaps,
                     waiting=[queued[k] for k in final if k in queued])


def apply_confirmation(f: Findings, confirm: Path, peer: list = ()) -> None:
    """What the confirmation session decided: dismissed cases pass, values as it judged;
    ``peer``: the first session's peer verdicts, a NODES line each
    (:meth:`.confirmation.Confirmation.judge_peers`)."""
    f.conf, f.judged, conf_notes = confirmed(confirm, f.system, f.final, f.judged,
                                             f.judgement, f.load, peer)
    f.notes += conf_notes
    for key in f.conf.dismissed_cases:
        f.kinds[key] = "pass"       # failed the first session, passed the one that tests
