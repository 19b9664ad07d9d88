"""A long history drawn and searched for steps within bounds: sessions grouped in time.

A figure with a point per session for ten thousand sessions is a smear that takes minutes
to draw, and a permutation test over ten thousand sessions per value takes more memory
than a report should. Up to :data:`MAX_POINTS` sessions each is drawn as it is; beyond
that the sessions are taken in groups of consecutive sessions, the same size each (the
last one smaller), and each group is drawn as the median of its sessions. Sessions with a
NODE line and the baseline's sessions are always drawn one by one: they are what a reader
looks for. Under no change the groups' medians are exchangeable as the sessions are, so
the step search (:mod:`placement.judgement.verdict.changepoints`) runs on them as it does on
sessions, and names the first session of the group after the step.
"""

from __future__ import annotations

import datetime as _dt
import math
import statistics
from dataclasses import dataclass

from ..judgement import verdict
from .history_points import Point

#: points per panel at most: beyond it sessions are drawn (and searched) in groups
MAX_POINTS = 400


@dataclass(frozen=True)
class Found:
    """A value's step and the start of the first session after it."""

    step: verdict.changepoints.Step
    when: _dt.datetime


def groups(n: int) -> list[range]:
    """The sessions' positions (oldest first) in drawn groups: one each up to
    :data:`MAX_POINTS` sessions, else consecutive groups of one size."""
    size = max(1, math.ceil(n / MAX_POINTS))
    return [range(i, min(i + size, n)) for i in range(0, n, size)]


def caption(gs: list[range], n: int) -> str:
    """What the figure's points are, when sessions were grouped ("" when not)."""
    if len(gs) == n:
        return ""
    return (f" {n} sessions are more than the {MAX_POINTS} a panel draws: each point is the "
            f"median of {len(gs[0])} consecutive sessions (the line's points too), dated at "
            "their middle one; sessions with a NODE line and the baseline's sessions are drawn "
            "one by one.")


def _middle(pts: list[Point]) -> _dt.datetime:
    return pts[len(pts) // 2].when


def node_series(pts: list[Point], gs: list[range]) -> dict:
    """The node panel's ``dates``, ``shift`` and ``flagged`` (:func:`.plots.history`)."""
    out: list[tuple] = []
    for g in gs:
        mine = [pts[i] for i in g]
        if len(mine) == 1:
            out.append((mine[0].when, mine[0].shift, mine[0].flagged))
            continue
        rest = [p for p in mine if not p.flagged and p.shift is not None]
        part = [(p.when, p.shift, True) for p in mine if p.flagged]
        if rest:
            part.append((_middle(rest), statistics.median(p.shift for p in rest), False))
        out += sorted(part, key=lambda x: x[0])
    return {"dates": [x[0] for x in out], "shift": [x[1] for x in out],
            "flagged": [x[2] for x in out]}


def _column(pts: list[Point], e) -> list:
    """Each session's median of ``e``, :data:`_NONE` where it has none (each point's
    medians looked up once: ten thousand sessions' for each of dozens of values)."""
    return [p.medians.get(e, _NONE) for p in pts]


#: a session without the value (no median is this object)
_NONE = object()


def value_series(pts: list[Point], gs: list[range], e) -> dict:
    """A value's panel: ``dates``, ``values`` and ``baseline`` (:func:`.plots.history`)."""
    out: list[tuple] = []
    col = _column(pts, e)
    based = [p.baseline for p in pts]
    for g in gs:
        if g.step == 1 and True not in based[g.start:g.stop] \
                and _NONE not in col[g.start:g.stop]:
            rest = list(g)      # most groups: every session has the value, none the baseline's
            part = []
        else:
            mine = [i for i in g if col[i] is not _NONE]
            rest = [i for i in mine if not based[i]]
            part = [(pts[i].when, col[i], True) for i in mine if based[i]]
        if len(rest) == 1:
            part.append((pts[rest[0]].when, col[rest[0]], False))
        elif rest:
            part.append((_middle([pts[i] for i in rest]),
                         statistics.median([col[i] for i in rest]), False))
        out += sorted(part, key=lambda x: x[0])
    return {"dates": [x[0] for x in out], "values": [x[1] for x in out],
            "baseline": [x[2] for x in out]}


def steps(pts: list[Point], gs: list[range], drawn: list, stored: dict) -> dict:
    """Each drawn value's step over the sessions (or their groups), when a real one."""
    firsts, series = [], []
    for e in drawn:
        first, meds = [], []
        col = _column(pts, e)
        for g in gs:
            mine = [i for i in g if col[i] is not _NONE]
            if mine:
                first.append(pts[mine[0]])
                meds.append(statistics.median([col[i] for i in mine]))
        firsts.append(first)
        series.append(([p.uuid for p in first], meds, stored[e].higher_is_better))
    # searched together: values over the same groups share their shuffles
    return {e: Found(s, first[s.index].when) for e, first, s
            in zip(drawn, firsts, verdict.changepoints.steps_of_medians(series)) if s is not None}


def steps_note(gs: list[range], n: int) -> str:
    """How the steps were found (the page's table note)."""
    text = ("The single most likely step in each value's session medians (the split "
            "removing the most squared error), kept when a permutation test of the whole "
            f"procedure ({verdict.changepoints.PERMUTATIONS} shuffles) gives p <= "
            f"{verdict.changepoints.ALPHA} and the median moved by at least {verdict.over_sessions.MIN_EFFECT:.0%}.")
    if len(gs) < n:
        text += (f" Over the medians of the groups of {len(gs[0])} sessions the figure "
                 "draws; the session named is the first of the group after the step.")
    return text
