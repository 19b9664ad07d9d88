"""The confirmation session's plumbing: which checks it runs (``placement acceptance
confirm``) and the first session's failures held against its report; what stands is decided
by :mod:`.confirmation`.
"""

from __future__ import annotations

from pathlib import Path

from ..judgement import baselines, verdict
from . import confirmation
from .case_kinds import fail_text
from .parts import final_cases, readable
from .regressions import Judged, judge_values, selected_values


def to_confirm(parts: list[Path], system: str) -> tuple[list[str], str]:
    """The hashes of the checks a confirmation session runs, and what it confirms: the
    failed and regressed checks, or every check that ran when the node line fails the
    run (a node line is a property of a whole session); ``[]`` when nothing failed."""
    good, _ = readable(parts)
    if not good:
        return [], "no readable run report"
    final = final_cases(good)
    judged, judgement = judge_values(good, system)
    if confirmation.node_fails(judgement) or confirmation.load_fails(final):
        return confirmation.every_check(final), "the node line: the whole run"
    hashes = confirmation.candidates(final, selected_values(judged))
    return hashes, "the failed, regressed and grossly worse checks" if hashes else ""


def confirmed(confirm: Path, system: str, final: dict, judged: Judged,
              judgement: baselines.samples.Judgement | None, load: verdict.node_load.Load | None
              ) -> tuple[confirmation.Confirmation, Judged, list[str]]:
    """The first session's failures against the confirmation session ``confirm``: what
    it decided, the verdicts with the dismissed values as the confirmation judged them and
    the confirmed gross ones regressed, and a note when it could not be read (then every failure stands). ``load``:
    the first session's load when it fails the run."""
    again, dropped = readable([confirm])
    if not again:
        return confirmation.Confirmation(), judged, [
            f"confirmation session unreadable, the first session's failures stand "
            f"({dropped[0] if dropped else confirm})"]
    picked = {k: judged[k] for k in selected_values(judged)}
    judged_again: Judged = {}
    node_again = None
    node_fails = confirmation.node_fails(judgement)
    again_cases = final_cases(again)
    if node_fails or load is not None:
        # the whole run again: a session of its own, with its own node line and spread
        judged_again, whole = judge_values(again, system)
        node_again = whole.node if whole is not None else None
    elif picked and judgement is not None:
        judged_again, _ = judge_values(again, system, selected_by=judgement, only=set(picked))
    conf = confirmation.decide(final, again_cases, picked, judged_again, fail_text)
    if node_fails:
        conf.judge_node(judgement.node, node_again, system)
    if load is not None:
        conf.judge_load(load, verdict.node_load.of_cases(list(again_cases.values())), system)
    judged = {**judged, **{k: judged_again[k] for k in conf.dismissed_values},
              **{k: confirmation.gross_confirmed(judged[k]) for k in conf.gross_confirmed}}
    return conf, judged, []
