"""The confirmation session's plumbing: which checks it runs (``placement acceptance
confirm``) and the first session's failures held against its report; what stands is decided
by :mod:`.confirmation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..judgement import baselines, peers, reading, verdict
from . import confirmation, distributed, peer_lines
from .case_kinds import fail_text
from .parts import final_cases, readable
from .regressions import Judged, judge_values, selected_values


@dataclass(frozen=True)
class Selection:
    """What a confirmation session runs: ReFrame's ``-n /HASH`` for each hash, and for a
    ``--distribute`` run the nodes its ``--distribute`` is restricted to (none: every node
    of the run's), with what it confirms in words."""

    hashes: list[str]
    what: str = ""
    nodes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """``placement acceptance confirm``'s output: a hash a line, then ``nodes N1,N2``."""
        return self.hashes + ([f"nodes {','.join(self.nodes)}"] if self.hashes and self.nodes
                              else [])


def selection(parts: list[Path], system: str) -> Selection:
    """The checks a confirmation session runs, and what it confirms: the failed and
    regressed checks (of a ``--distribute`` run, on the nodes where they failed:
    :mod:`.distributed`), or every check that ran, on every node, when a node line or a
    NODES line fails the run (a property of a whole session); no hash when nothing failed."""
    good, _ = readable(parts)
    if not good:
        return Selection([], "no readable run report")
    final = final_cases(good)
    spread = distributed.is_distributed(final)
    judged, judgement = judge_values(good, system)
    whole = ""
    if confirmation.node_fails(judgement) or confirmation.load_fails(final):
        whole = "the node line: the whole run"
    elif spread and any(j.fails for j in peer_lines.judgements(good)):
        whole = "the NODES line: the whole run on every node"
    if whole:
        cases = confirmation.every_case(final)
        return Selection(distributed.selection(cases)[0] if spread
                         else confirmation.every_check(final), whole)
    cases = confirmation.candidate_cases(final, selected_values(judged))
    if not cases:
        return Selection([])
    what = "the failed, regressed and grossly worse checks"
    if not spread:
        return Selection(confirmation.candidates(final, selected_values(judged)), what)
    hashes, nodes = distributed.selection(cases)
    return Selection(hashes, f"{what}, on node(s) {', '.join(nodes)}" if nodes else what, nodes)


def to_confirm(parts: list[Path], system: str) -> tuple[list[str], str]:
    """The hashes of the checks a confirmation session runs, and what it confirms
    (:func:`selection`)."""
    s = selection(parts, system)
    return s.hashes, s.what


def not_a_confirmation(first: list[dict], again: dict) -> str:
    """Why the session ``again`` cannot confirm the run whose sessions are ``first`` (it
    is one of them, or did not begin after the last of them: it never ran the failures
    again), ``""`` when it can. The sessions are as :func:`reading.run_report.load` checked
    them."""
    if again.get("uuid") and again["uuid"] in {s.get("uuid") for s in first}:
        return "it is one of the run's own sessions"
    begun = [b for b in map(reading.session_info.started, first) if b is not None]
    when = reading.session_info.started(again)
    if begun and when is not None and when <= max(begun):
        return f"it began at {when.isoformat()}, not after the run's last session did"
    return ""


def confirmed(confirm: Path, system: str, final: dict, judged: Judged,
              judgement: baselines.samples.Judgement | None, load: verdict.node_load.Load | None,
              peer: list[peers.partition.PeerJudgement] = ()
              ) -> tuple[confirmation.Confirmation, Judged, list[str]]:
    """The first session's failures against the confirmation session ``confirm``: what
    it decided, the verdicts with the dismissed values as the confirmation judged them and
    the confirmed gross ones regressed, and a note when it could not be read (then every failure stands). ``load``:
    the first session's load when it fails the run; ``peer``: the first session's peer
    verdicts (a ``--distribute`` run)."""
    again, dropped = readable([confirm])
    if not again:
        return confirmation.Confirmation(), judged, [
            f"confirmation session unreadable, the first session's failures stand "
            f"({dropped[0] if dropped else confirm})"]
    picked = {k: judged[k] for k in selected_values(judged)}
    judged_again: Judged = {}
    node_again = None
    node_fails = confirmation.node_fails(judgement)
    again_all = final_cases(again)
    again_cases = distributed.same_cases(final, again_all)
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
        cases = list(again_all.values())
        conf.judge_load(load, verdict.node_load.of_cases(cases), system,
                        verdict.node_load.of_nodes(cases))
    if any(j.fails for j in peer):
        conf.judge_peers(list(peer), peer_lines.judgements(again))
    judged = {**judged, **{k: judged_again[k] for k in conf.dismissed_values},
              **{k: confirmation.gross_confirmed(judged[k]) for k in conf.gross_confirmed}}
    unseen = [f"not confirmed: the confirmation session did not run {len(conf.not_run)} of "
              "the first session's failures again (they stand)"] if conf.not_run else []
    return conf, judged, unseen
