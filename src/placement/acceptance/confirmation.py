"""The confirmation session: a value fails a run only when a second session says so too.

The session is the unit that varies: a node keeps a state for minutes (a
same-node ping-pong at 0.35 or 1.55 us on a virtual machine, a two-thread
cache write at 100 or 190 GB/s), so a first session of an unchanged node
misses a reference now and then however wide the references are. One session
can therefore only *select* what to look at; the selected cases then run once
more (``scripts/acceptance.sh`` runs them as a ReFrame session of their own,
``-n /HASH`` each), and that session, which did not choose them, *tests* them:

* a case that failed its ReFrame reference fails the run only if it fails
  again in the confirmation (or fails there in any other way);
* a case that failed in another way (a task that did not launch, a wrong result)
  fails the run whatever the confirmation shows; where the confirmation ran it
  (a whole run, after a node line), it counts among the confirmed when it failed
  there too, and among the tried either way;
* a value the verdict called regressed stays regressed only if the
  confirmation session's value is regressed too, judged against the same
  baseline with the first session's prior and node shift and
  Benjamini-Hochberg over the confirmed values alone
  (:func:`placement.judgement.verdict.over_sessions.judge_run`, ``selected_by``).

* a value the first session found *gross* (undecided, but worse than every baseline
  session by at least :data:`placement.judgement.verdict.over_sessions.GROSS_EFFECT` with tight
  launches) is regressed only if the confirmation session finds it regressed, or gross
  again: the median of its launches still that far beyond (their spread is not asked
  again, :func:`placement.judgement.verdict.over_sessions.gross_again`): one baseline session lends no
  value a spread of its own, so the second session is the test (:func:`gross_confirmed`).

* a node line (the node flagged slower, or loaded: :mod:`placement.judgement.verdict.node_load`) is a
  property of a whole session: the confirmation then runs every check that
  ran, is judged as a run of its own (its own prior and common shift), and the
  node line stands only if that session's node is flagged slower (loaded) too;
  each value and case as above, a value regressed if the confirmation calls it
  regressed for any reason.

* a NODES line of a ``--distribute`` run (a node unlike its peers) is a property of a
  whole session too: every check runs again on every node, and a node named stands
  only if the confirmation session's peer verdict names it again (:meth:`Confirmation.judge_peers`);
  a partition with no majority stands if the confirmation's fails too. A failed case of
  such a run runs again on the node where it failed (:mod:`.distributed`).

A lasting change shows in both sessions; a node's passing state rarely does.
What a confirmation dismissed is printed (``UNCONFIRMED``), never dropped, and
a confirmation that could not run or be read leaves every failure of the first
session standing. The confirmation session is marked in ReFrame's results storage
(:data:`placement.judgement.reading.run_report.CONFIRMATION_EXTRA`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..judgement import peers, reading, verdict
from .record import Finding

#: (display name, system:partition+environ, perfvar), as the acceptance summary keys values
ValueKey = tuple[str, str, str]
#: (unique name, system, environ): a case of ReFrame's run report
CaseKey = tuple


def node_fails(judgement) -> bool:
    """Whether a judgement's node line fails the run (the node flagged slower)."""
    node = judgement.node if judgement is not None else None
    return node is not None and node.fails


#: how a first session's node line stands (:func:`node_standing`)
NODE_FAILS, NODE_UNCONFIRMED, NODE_PASSES = "fail", "unconfirmed", ""


def node_standing(node: verdict.over_sessions.NodeShift | None, shown_again: bool | None) -> str:
    """How a first session's node line stands in the acceptance line: it fails the run when
    its confirmation session showed it too (``shown_again``); with no confirmation session
    (``None``: switched off, or the time box spent) only a shift of
    :data:`placement.judgement.verdict.node_shift.NODE_AT_ONCE` fails, a smaller one leaves the run
    incomplete (:data:`NODE_UNCONFIRMED`), never failed."""
    if node is None or not node.fails:
        return NODE_PASSES
    if shown_again is None:
        return NODE_FAILS if node.at_once else NODE_UNCONFIRMED
    return NODE_FAILS if shown_again else NODE_PASSES


def load_fails(final: dict[CaseKey, dict[str, Any]]) -> verdict.node_load.Load | None:
    """The run's load when it fails the run (the node loaded), else None."""
    load = verdict.node_load.of_cases(list(final.values()))
    return load if load is not None and load.loaded else None


def every_case(final: dict[CaseKey, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case of the run that ran (not skipped), fixtures left out."""
    return [tc for tc in final.values() if tc.get("hashcode") and not tc.get("fixture")
            and tc.get("result") in ("pass", "fail")]


def every_check(final: dict[CaseKey, dict[str, Any]]) -> list[str]:
    """Hashes of every check of the run that ran (not skipped), fixtures left out."""
    return sorted({tc["hashcode"] for tc in every_case(final)})


def is_reference_failure(tc: dict[str, Any]) -> bool:
    """A case that measured and missed its ReFrame reference (not a watchdog stop: that is
    a failure to finish; nor a node-health family case whose member failed to measure)."""
    return (tc.get("result") == "fail" and tc.get("fail_phase") == "performance"
            and verdict.guards.stopped_runs(tc) == 0
            and not reading.family.failed_members(tc))  # a member crashed: no reference missed


def selected(v: verdict.over_sessions.Verdict) -> bool:
    """What a first session sends to its confirmation session, and what that session keeps:
    a value regressed, or gross (undecided in one session, far beyond every baseline
    session with tight launches)."""
    return v.outcome == verdict.over_sessions.REGRESSED or v.gross is not None


def candidate_cases(final: dict[CaseKey, dict[str, Any]],
                    regressed: set[ValueKey]) -> list[dict[str, Any]]:
    """The cases a confirmation session runs again: each case that missed a reference, and
    each case with a value the verdict called regressed (a node-health family case: a value
    of one of its members, which the verdict names by the member's case)."""
    regressed_cases = {(name, sysenv) for name, sysenv, _ in regressed}
    out = []
    for tc in final.values():
        if tc.get("fixture") or not tc.get("hashcode"):
            continue
        sysenv = f"{tc.get('system')}:{tc.get('partition')}+{tc.get('environ')}"
        shown = {m.get("display_name") for m in reading.family.expand(tc)}
        if is_reference_failure(tc) or any((s, sysenv) in regressed_cases for s in shown):
            out.append(tc)
    return out


def candidates(final: dict[CaseKey, dict[str, Any]], regressed: set[ValueKey]) -> list[str]:
    """Hashes of the checks a confirmation session runs (:func:`candidate_cases`; sorted,
    each once)."""
    return sorted({tc["hashcode"] for tc in candidate_cases(final, regressed)})


@dataclass
class Confirmation:
    """What a confirmation session decided about the first session's failures."""

    #: first-session reference failures that passed their confirmation: case key -> its
    #: UNCONFIRMED finding
    dismissed_cases: dict[CaseKey, Finding] = field(default_factory=dict)
    #: regressed values the confirmation did not find regressed: value key -> its finding
    dismissed_values: dict[ValueKey, Finding] = field(default_factory=dict)
    #: reference failures and regressed values that the confirmation found again
    confirmed: int = 0
    #: reference failures whose case did not run again (absent, skipped or aborted in the
    #: confirmation session: no confirmation, they stand)
    missing: int = 0
    #: every first-session failure the confirmation session did not run (or judge) again,
    #: each named as its UNCONFIRMED finding names one (``case``, ``sysenv``, ``var``, ""
    #: for a case): it stands, and no reader may call it confirmed
    not_run: list[dict[str, str]] = field(default_factory=list)
    #: other failures (a launch, a wrong result) that ran again and passed: no state of the
    #: node, so they stand, but the confirmation did not show them again
    stand_unseen: int = 0
    #: the first session's node line, when its confirmation session did not show it
    node_dismissed: str = ""
    #: the first session's load line, when its confirmation session was not loaded
    load_dismissed: str = ""
    #: gross values the confirmation found gross or regressed again: regressed
    gross_confirmed: set[ValueKey] = field(default_factory=set)
    #: selected values the confirmation found selected again (regressed or gross): they stand
    values_confirmed: set[ValueKey] = field(default_factory=set)
    #: reference failures that failed their confirmation too: case key -> its line
    cases_confirmed: dict[CaseKey, str] = field(default_factory=dict)
    #: the first session's odd nodes its confirmation named again / did not:
    #: (system:partition, node) -> its finding (node "" for a partition with no majority)
    nodes_confirmed: dict[tuple[str, str], Finding] = field(default_factory=dict)
    nodes_dismissed: dict[tuple[str, str], Finding] = field(default_factory=dict)
    #: the partitions whose failing peer verdict its confirmation session did not show again
    peers_cleared: set[str] = field(default_factory=set)

    def judge_node(self, first: verdict.over_sessions.NodeShift, again: verdict.over_sessions.NodeShift | None,
                   system: str) -> None:
        """The first session's node line against the whole confirmation session's node
        (:func:`placement.judgement.verdict.node_shift.shown_again`)."""
        self.node_dismissed = self._node_line(
            first.line(), verdict.node_shift.shown_again(first, again),
            again.text() if again is not None else "too few values to judge the node", system)

    def judge_load(self, first: verdict.node_load.Load, again: verdict.node_load.Load | None,
                   system: str, again_nodes: dict[str, verdict.node_load.Load] | None = None
                   ) -> None:
        """The first session's load line against the whole confirmation session's load
        (``again_nodes``: its load on each node it measured). In a run over several nodes,
        the line stands unless the confirmation measured every node it named loaded: one
        it did not measure was not run again (it was dismissed on the other nodes' quiet);
        it is shown again when one of them is loaded again."""
        if first.nodes:
            again_nodes = again_nodes or {}
            unseen = [n for n in first.loaded_nodes() if n not in again_nodes]
            if unseen:
                self.not_run += [{"case": f"load of {n}", "sysenv": system, "var": ""}
                                 for n in unseen]
                return
            shown = any(again_nodes[n].loaded for n in first.loaded_nodes())
        else:
            shown = verdict.node_load.shown_again(first, again)
        self.load_dismissed = self._node_line(
            first.line(), shown,
            again.text() if again is not None else "no CPU pressure measured", system)

    def judge_peers(self, first: list, again: list) -> None:
        """The first session's failing peer verdicts (:class:`placement.judgement.peers.
        partition.PeerJudgement`, a partition each) against the confirmation session's: a node
        named stands if the confirmation names it again; a partition with no majority and no
        node named if the confirmation's verdict of it fails too. A partition the
        confirmation did not judge stands as it was."""
        again_of = {j.where: j for j in again}
        for j in first:
            j2 = again_of.get(j.where)
            if not j.fails or j2 is None:
                continue
            # a node the confirmation reached no verdict on was not run again: it stands,
            # however alike the nodes it did judge (it was dismissed by its absence)
            seen = j2.decided
            unseen = [n for n in (j.named or j.judged) if n not in seen]
            self.not_run += [{"case": f"node {n}", "sysenv": j.where, "var": ""}
                             for n in unseen]
            shown = {node: node in j2.named for node in j.named if node in seen}
            if not j.named and not unseen:  # no majority to judge by, no node named
                shown[""] = j2.fails
            for node, again_too in shown.items():
                self._peer_line(j, j2, node, again_too)
            if not unseen and not any(shown.values()):
                self.peers_cleared.add(j.where)

    def _peer_line(self, first, again, node: str, shown: bool) -> None:
        """A node of a first session's peer verdict (``""``: the partition) that its
        confirmation session named again (``shown``: CONFIRMED) or did not (UNCONFIRMED)."""
        said = _about(first, node) or "named"
        seen = (_about(again, node) if shown and node else "") or \
            _about(again, "") or "nothing judged"
        line = (f"NODES {first.where}{' ' + node if node else ''}: [first session: {said}] "
                f"its confirmation session: {seen}")
        data = {"what": "peers", "first": said, "again": seen}
        if shown:
            self.confirmed += 1
            self.nodes_confirmed[(first.where, node)] = Finding(
                "CONFIRMED", "CONFIRMED " + line, first.where, node, data)
        else:
            self.nodes_dismissed[(first.where, node)] = Finding(
                "UNCONFIRMED", "UNCONFIRMED " + line, first.where, node, data)

    def _node_line(self, first: str, shown: bool, seen: str, system: str) -> str:
        """Counts a node line its confirmation session showed again; else the line that
        says it did not (``seen``: what that session showed instead)."""
        if shown:
            self.confirmed += 1
            return ""
        return (f"UNCONFIRMED NODE {system}: [first session: {first}] its confirmation "
                f"session: {seen}")

    def lines(self) -> list[str]:
        return [f.line for f in self.findings()]

    def findings(self) -> list[Finding]:
        """The UNCONFIRMED lines with what each names: the node (its shift, its load),
        then each node of a partition (CONFIRMED or UNCONFIRMED), each case, each value."""
        nodes = [Finding("UNCONFIRMED", line, data={"what": what})
                 for what, line in (("node", self.node_dismissed), ("load", self.load_dismissed))
                 if line]
        return nodes + list(self.nodes_confirmed.values()) + \
            list(self.nodes_dismissed.values()) + list(self.dismissed_cases.values()) + \
            list(self.dismissed_values.values())

    def by_node(self, first: dict[CaseKey, dict[str, Any]]) -> list[dict[str, str]]:
        """What it confirmed and dismissed on each node of a ``--distribute`` run (the
        verdict record's ``confirmation.nodes``): a NODES line's node, a case's or value's
        ``.nid``; one entry each, ``partition``, ``node``, ``outcome``, ``line``."""
        out = []
        for outcome, lines in (("confirmed", self.nodes_confirmed),
                               ("dismissed", self.nodes_dismissed)):
            out += [{"partition": where, "node": node, "outcome": outcome, "line": f.line}
                    for (where, node), f in lines.items()]
        cases = [("confirmed", first.get(k, {}), line) for k, line in self.cases_confirmed.items()]
        cases += [("dismissed", first.get(k, {}), f.line) for k, f in self.dismissed_cases.items()]
        for outcome, tc, line in cases:
            node = reading.run_report.node_named(tc)
            if node:
                out.append({"partition": f"{tc.get('system')}:{tc.get('partition')}",
                            "node": node, "outcome": outcome, "line": line})
        values = [("confirmed", k, "") for k in sorted(self.values_confirmed)]
        values += [("dismissed", k, f.line) for k, f in self.dismissed_values.items()]
        for outcome, (name, sysenv, var), line in values:
            node = reading.run_report.node_named({"display_name": name})
            if node:
                out.append({"partition": sysenv.split("+")[0], "node": node,
                            "outcome": outcome, "line": line or f"{name} @{sysenv} {var}"})
        return out

    def text(self) -> str:
        """The ACCEPTANCE line's part: ``confirmed 2 of 5``."""
        tried = self.confirmed + len(self.dismissed_cases) + len(self.dismissed_values) + \
            self.stand_unseen + bool(self.node_dismissed) + bool(self.load_dismissed) + \
            len(self.nodes_dismissed)
        return f" confirmed {self.confirmed} of {tried}" if tried else ""


def _about(judgement, node: str) -> str:
    """What a partition's peer verdict says about ``node``: its lines whose finding names it
    (the line's node, or one of the nodes its data lists), their ``NODES partition:`` left
    out; every line's when ``node`` is ""."""
    return "; ".join(p.line.split(": ", 1)[-1] for p in judgement.parts()
                     if (not node or p.node == node or node in _nodes_in(p.data))
                     and p.data.get("what") != peers.partition.ABSENT)


def _nodes_in(data: dict) -> list:
    """The nodes a peer line's data lists (no majority: ``named``; a pair: ``nodes``)."""
    return [n for key in ("named", "nodes") if isinstance(data.get(key), list)
            for n in data[key]]


def gross_confirmed(v: verdict.over_sessions.Verdict) -> verdict.over_sessions.Verdict:
    """A gross value of the first session that its confirmation showed again: regressed."""
    return replace(v, outcome=verdict.over_sessions.REGRESSED,
                   why=f"gross in two sessions ({v.gross:+.0%} beyond its worst baseline session "
                       "in the first)")


def _other_failure(out: Confirmation, tc: dict[str, Any], tc2: dict[str, Any] | None) -> None:
    """A first-session failure that is no reference miss (a task that did not launch, a wrong
    result) counts when its confirmation session ran it (a whole-run confirmation after a node
    or load line): confirmed when it failed there too, else tried and standing all the same.
    Left out, a launch failure seen in both sessions read ``confirmed 0 of 1``."""
    if tc.get("result") != "fail" or tc.get("fixture"):
        return
    if tc2 is None or tc2.get("result") not in ("pass", "fail"):
        out.not_run.append(case_named(tc))
        return
    if tc2["result"] == "fail":
        out.confirmed += 1
    else:
        out.stand_unseen += 1


def case_named(tc: dict[str, Any]) -> dict[str, str]:
    """A case as the UNCONFIRMED findings and the record name it: its display name, and
    ReFrame's system and environment (``generic:default+gnu``)."""
    return {"case": str(tc.get("display_name")),
            "sysenv": f"{tc.get('system')}+{tc.get('environ')}", "var": ""}


def decide(first: dict[CaseKey, dict[str, Any]],
           again: dict[CaseKey, dict[str, Any]], picked: dict[ValueKey, verdict.over_sessions.Verdict],
           judged_again: dict[ValueKey, verdict.over_sessions.Verdict], fail_text) -> Confirmation:
    """The first session's reference failures and ``picked`` values (:func:`selected`)
    against their confirmation: ``again`` is the confirmation's final cases,
    ``judged_again`` its values' verdicts (selected values only); ``fail_text`` words a
    case's failure."""
    out = Confirmation()
    for key, tc in first.items():
        if not is_reference_failure(tc):
            _other_failure(out, tc, again.get(key))
            continue
        tc2 = again.get(key)
        if tc2 is None or tc2.get("result") not in ("pass", "fail"):
            # not there, or skipped or aborted there: not run again, so it stands unconfirmed
            out.missing += 1
            out.not_run.append(case_named(tc))
        elif tc2.get("result") == "pass":
            where = f"{tc.get('system')}+{tc.get('environ')}"
            out.dismissed_cases[key] = Finding(
                "UNCONFIRMED",
                f"UNCONFIRMED {tc.get('display_name')} @{where} "
                f"[first session: {fail_text(tc)}] passed its confirmation session: a state "
                "of the node, not a lasting change", str(tc.get("system") or ""),
                data={"what": "case", "case": tc.get("display_name"), "sysenv": where,
                      "var": "", "first": fail_text(tc)})
        else:
            out.confirmed += 1
            out.cases_confirmed[key] = (
                f"{tc.get('display_name')} @{tc.get('system')}+{tc.get('environ')} "
                f"[first session: {fail_text(tc)}] [its confirmation session: {fail_text(tc2)}]")
    for key, v in picked.items():
        v2 = judged_again.get(key)
        if v2 is None:
            out.not_run.append({"case": key[0], "sysenv": key[1], "var": key[2]})
        elif selected(v2):
            out.confirmed += 1
            out.values_confirmed.add(key)
            if v.outcome != verdict.over_sessions.REGRESSED:
                out.gross_confirmed.add(key)
        else:
            out.dismissed_values[key] = Finding(
                "UNCONFIRMED",
                f"UNCONFIRMED {key[0]} @{key[1]} {key[2]} [first session: {v.text()}] "
                f"its confirmation session: {v2.text()}", key[1].split("+")[0],
                data={"what": "value", "case": key[0], "sysenv": key[1], "var": key[2],
                      "first": v.outcome, "again": v2.outcome, "ratio": v.ratio,
                      "ratio_again": v2.ratio})
    return out
