"""False alarms and power of the verdict and of plain ``reframe -r``, on real sessions.

    python benchmarks/regression_detection.py [RUN_REPORT ...] [--hog RUN_REPORT ...]

Input: ReFrame run reports of separate sessions of the same selection on the
same machine, each case launched several times inside its job (recorded by
``benchmarks/aa_sessions.sh``); by default the stripped copies in
``tests/fixtures/aa-sessions-2h/`` (20 sessions of a quiet node spread over two
hours, each started when the node was quiet) and its ``hog/``;
``tests/fixtures/aa-sessions-spread/`` holds the same machine shared with other
work. ``--hog`` adds sessions recorded with busy loops on every core.
``--strip SRC... --out DIR`` writes stripped copies.

Each value is what a site gets with the default ``launches=3``: the first
``--launches`` launches of each session, for the baseline's sessions and the
new one alike. Per baseline size ``K`` (1, 2, 3, 5, 10 sessions), every session
is judged against a baseline of the ``K`` sessions after it (cyclically):

* **A/A**: sessions with an acceptance FAIL (a value regressed or the node
  flagged slower), and values called regressed; for plain ``reframe -r``,
  sessions with any value outside the one-sided bound ``record`` writes
  (:func:`placement.judgement.verdict.over_sessions.reference_bound`) and such values;
* **lone power**: one value at a time made worse by 10, 25, 40 and 100 % (times
  multiplied, rates divided), the others untouched: found (regressed) per class
  of the value's session-to-session CV (the CV of its session medians over all
  sessions), and by plain ReFrame, on ``--lone`` values picked at random per session;
  and, for 40 % at one baseline session with confirmation (the goal), every value, and
  among them those whose launches are tight (:data:`TIGHT_LAUNCHES`, :func:`lone_every`);
* **all at once**: every value made worse together (a slower node): sessions
  failed, node flagged, share of values regressed;
* **CPU hog**: each ``--hog`` session against the baselines of ``K`` A/A sessions.

**With confirmation** (what ``scripts/acceptance.sh`` does,
:mod:`placement.acceptance.confirmation`), beside each figure: the first session
only selects candidates (values the verdict calls regressed or gross, values outside
their plain bound), which run once more as a confirmation session; a candidate
fails only if that session shows it too (regressed or gross again, judged by
``verdict.judge_run(..., selected_by=first)`` over the selected values alone;
its median outside the same bound again). A node line that fails the first
session is confirmed by the whole confirmation session judged as a run of its own
(its node flagged slower too); the values are then regressed again if that run
calls them regressed, for any reason. The confirmation session
of session ``i`` is the next one in time, ``i + 1`` (its first ``--launches``
launches), judged against the same baseline sessions as ``i``; the last session
has none and is left out. Since ``i + 1`` is the first of "the ``K`` sessions
after ``i``", these figures take as baseline **the K sessions after i + 1,
cyclically, skipping i** (no baseline size above ``n - 2``), so the
confirmation is never in its own baseline; each is printed with what the first
session alone gives on the same pairs. A lone change or a slower node made worse
is made worse in both sessions (a lasting change). The hog sessions take the
next hog session as their confirmation.

``--estimator mle`` fits the session-spread prior by maximum likelihood instead of
limma's moments (:func:`placement.judgement.verdict.moderation.fit_f_dist_mle`), to compare
the two on the same sessions; its figures go to ``regression_detection-mle.json``.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import math
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from placement.acceptance.confirmation import (NODE_FAILS, ValueKey,  # noqa: E402
                                               decide, node_fails, node_standing, selected)
from placement.acceptance.case_kinds import classify  # noqa: E402
from placement.judgement import rules  # noqa: E402
from placement.judgement.verdict.node_shift import shown_again  # noqa: E402
from placement.judgement import verdict, reading  # noqa: E402
from placement.judgement.reading.direction import higher_is_better  # noqa: E402
from placement.util import atomic  # noqa: E402
from placement.checks import virtual_node  # noqa: E402
from placement import npb  # noqa: E402

import figures  # noqa: E402  (this folder: the JSON's counts as the pages read them)
import provenance  # noqa: E402  (this folder: the sets the rules were chosen on, and when)

FIXTURES = ROOT / "tests" / "fixtures" / "aa-sessions-2h"
SIZES = (1, 2, 3, 5, 10)
FACTORS = (1.10, 1.25, 1.40, 2.0)
LAUNCHES = 3
COARSE = "coarse"
CV_CLASSES = ((0.0, 0.02, "CV <= 2%"), (0.02, 0.05, "2-5%"), (0.05, 0.20, "5-20%"),
              (0.20, float("inf"), "> 20%"))

#: keys of a test case the verdict and the reports' loader read
_KEEP = ("name", "unique_name", "hashcode", "display_name", "system", "partition", "environ",
         "result", "fail_phase", "fixture", "perfvalues", "reference_index", "perf_launches",
         "contended", "no_bound", "no_plain_bound", "waits_by_design", "num_threads",
         "node_virtual")


def strip(sources: list[Path], out: Path) -> None:
    """Copies of run reports with only the session header and what each case needs."""
    out.mkdir(parents=True, exist_ok=True)
    for src in sources:
        opener = gzip.open if src.read_bytes()[:2] == b"\x1f\x8b" else open
        with opener(src, "rt") as fp:
            data = json.load(fp)
        session = {k: data["session_info"].get(k) for k in
                   ("uuid", "hostname", "time_start", "time_end", "version", "cmdline")}
        runs = []
        for run in data["runs"]:
            cases = []
            for tc in run["testcases"]:
                if tc.get("fixture"):
                    continue
                keep = {k: tc[k] for k in _KEEP if k in tc}
                keep.update({k: tc[k] for k in (tc.get("reference_index") or [])
                             if k in tc and not k.startswith("$")})
                keep.update({k: tc[k] for k in reading.run_report.KNOWN_PARAMS if k in tc})
                cases.append(keep)
            runs.append({"testcases": cases})
        name = f"run-{session['time_start']}.json"
        (out / name).write_text(json.dumps({"session_info": session, "runs": runs},
                                           separators=(",", ":")) + "\n")
        print(out / name)


Key = tuple  # (case key, var)
Session = dict  # Key -> (launch values, higher is better, no plain bound, states declared)

#: NPB's ``min_judged_s`` per check, for sessions recorded before NPB checks named their short
#: runs in ``no_bound`` (:func:`placement.npb.states.short_run_states`): the check's rule
NPB_MIN_JUDGED_S = {"NpbQuickCheck": rules.NPB_SHORT_RUN_S}


def check_states(c: reading.run_report.Case) -> dict[str, str]:
    """The case's ``no_bound`` (values its check says have states), as the check writes it
    now: read from the report, or for a case recorded before its check named them, by the
    check's rule (a multi-thread write recorded before it asked its node: every stored set
    comes from a virtual machine, as each set's description says)."""
    why = c.raw.get("no_bound")
    if isinstance(why, dict) and why:
        return why
    if c.test.startswith("Npb"):
        return npb.states.short_run_states(c.launches, NPB_MIN_JUDGED_S.get(c.test, 1.0))
    if c.test.startswith("MemWriteThreads") and "node_virtual" not in c.raw:
        return virtual_node.thread_states(list(c.launches), int(c.raw.get("num_threads") or 0),
                                          True, rules.VIRTUAL_THREAD_STATES)
    return {}


#: the checks whose cache-sized cases of a virtual node get no plain bound
#: (``VIRTUAL_CACHE_PLAIN``), for sessions recorded before they said so themselves
CACHE_PLAIN_CHECKS = ("DataMapCheck", "MatmulCheck", "MemWriteThreadsCheck")


def plain_states(c: reading.run_report.Case, states: dict[str, str]) -> dict[str, str]:
    """The case's ``no_plain_bound`` (values plain ReFrame gets no bound for, the verdict
    still judging them), as the check writes it now: read from the report, or for a case
    recorded before its check named them, by the rule (every stored set comes from a virtual
    machine, as each set's description says); those in ``states`` have no bound anyway."""
    if "no_plain_bound" in c.raw:
        why = c.raw["no_plain_bound"]
        return why if isinstance(why, dict) else {}
    if c.test.startswith(CACHE_PLAIN_CHECKS):
        return virtual_node.cache_states(list(c.launches), c.raw.get("scale") == "small", True,
                                         states)
    return {}


def sessions(paths: list[Path]) -> list[Session]:
    """Per session, oldest first: ``{(case, var): (launch values, higher is better, no plain
    bound, states)}`` (no bound: measured under a competing load, or its check says none
    fits, as ``record`` reads them; states: the check says so, never gross)."""
    return values_of([reading.run_report.load(p) for p in paths])


def values_of(reports: list[reading.run_report.RunReport]) -> list[Session]:
    """:func:`sessions` of reports already loaded."""
    out = []
    for r in sorted(reports, key=lambda r: r.session.get("time_start", "")):
        vals = {}
        for c in r.cases:
            states = check_states(c)
            plain = plain_states(c, states)
            for var in c.primary_vars():
                pv = c.perf[var]
                better = higher_is_better(var, pv.unit)
                runs = [x for x in c.launches.get(var, []) if x > 0]
                if better is not None and runs:
                    declared = bool(states.get(var))
                    vals[(c.key, var)] = (runs, better, c.raw.get("contended") is True or
                                          declared or bool(plain.get(var)), declared)
        out.append(vals)
    return out


#: launches a site calls tight: their spread within a session (pooled, log scale: about the
#: CV) at most the verdict's bound for a gross change
TIGHT_LAUNCHES = verdict.over_sessions.GROSS_LAUNCHES


def _tight(p: Pair, key: Key) -> bool:
    """Whether a value's launches are tight (:data:`TIGHT_LAUNCHES`) in its baseline sessions
    and the new one: their spread within a session, pooled on a log scale (about the CV)."""
    groups = [np.log(r) for r in p.base[key]] + [np.log(p.new[key])]
    dfw = sum(len(g) - 1 for g in groups)
    return bool(dfw) and math.sqrt(
        sum(((g - g.mean()) ** 2).sum() for g in groups) / dfw) <= TIGHT_LAUNCHES


def _tight_row() -> dict:
    """A count of lone changes of tight values: judged, found, with states, found of those."""
    return {"n": 0, "either": 0, "states": 0, "states_found": 0}


def _tally_tight(by: dict, f: float, p: Pair, key: Key, found: bool) -> None:
    """Counts a lone change of a value whose launches are tight (:func:`_tight`) into
    ``by[factor]`` (values printed coarsely are left out by the callers: identical launches,
    but the printing step is their spread).

    ``states`` counts those of them with states (their check says so, or their or a
    sibling's launches spread beyond the cap: :attr:`Pair.prone`): tight launches, yet never
    gross by design, so one baseline session cannot find them; the goal still counts them,
    and the split says why it is missed where it is."""
    if not _tight(p, key):
        return
    row = by.setdefault(f"{f:.2f}", _tight_row())
    row["n"] += 1
    row["either"] += found
    if key in p.prone:
        row["states"] += 1
        row["states_found"] += found


#: the lone change the goal names: a value 40 % slower
GOAL_FACTOR = 1.40


def lone_every(pairs: list[Pair], classes: dict[Key, str]) -> dict:
    """Every value of every pair made :data:`GOAL_FACTOR` worse alone, in the session and
    its confirmation, as :meth:`Pair.confirm` judges it: ``all`` over every value, ``tight``
    over those whose launches are tight (not coarse, :func:`_tight`; counted as
    :func:`_tally_tight` counts).

    Why every one rather than the random picks of ``--lone``: those land on about one
    tight value without states per set, and a share of one is no figure."""
    every = {"n": 0, "either": 0}
    tight: dict = {}
    for p in pairs:
        for key in p.keys:
            c = p.confirm({key: _worse(p.new[key], GOAL_FACTOR, p.better[key])},
                          {key: _worse(p.again[key], GOAL_FACTOR, p.better[key])})
            found = key in c.regressed | c.plain
            every["n"] += 1
            every["either"] += found
            if classes.get(key) != COARSE:
                _tally_tight(tight, GOAL_FACTOR, p, key, found)
    return {"all": every, "tight": tight.get(f"{GOAL_FACTOR:.2f}", _tight_row())}


def _worse(runs: list[float], f: float, better: bool) -> list[float]:
    return [x / f if better else x * f for x in runs]


def cv_classes(data: list[Session], launches: int) -> dict[Key, str]:
    """Each value's class: the CV of its session medians over all sessions, or coarse."""
    out = {}
    for k in set.intersection(*(set(d) for d in data)):
        runs = [d[k][0][:launches] for d in data]
        flat = [x for r in runs for x in r]
        if verdict.over_sessions.resolution(flat) >= verdict.over_sessions.MIN_EFFECT * statistics.median(flat):
            out[k] = COARSE
            continue
        meds = [statistics.median(r) for r in runs]
        cv = statistics.stdev(meds) / statistics.mean(meds)
        out[k] = next(c[2] for c in CV_CLASSES if c[0] <= cv < c[1])
    return out


class Pair:
    """A new session against a baseline of sessions: the verdict and the plain bounds; with
    ``again``, the session that confirms it (:meth:`confirm`)."""

    def __init__(self, new: Session, base: list[Session], keys: list[Key], launches: int,
                 again: Session | None = None):
        self.keys, self.launches = keys, launches
        self.base = {k: [b[k][0][:launches] for b in base] for k in keys}
        self.better = {k: new[k][1] for k in keys}
        self.new = {k: new[k][0][:launches] for k in keys}
        self.again = {k: again[k][0][:launches] for k in keys} if again else {}
        prior = verdict.over_sessions.file_prior(list(self.base.values()))
        self.bounds = {k: verdict.over_sessions.reference_bound(self.base[k], self.better[k], prior,
                                                  len(keys), launches) for k in keys}
        self.prone = verdict.over_sessions.state_prone(self.base, _family) | {
            k for k in keys if new[k][3] or any(b[k][3] for b in base)}
        for k in self.prone:     # no bound, as `record`; never gross, as the verdict
            self.bounds[k] = (self.bounds[k][0], None)
        for k in keys:           # contended, or no bound fits by the check's word
            if any(b[k][2] for b in base):
                self.bounds[k] = (self.bounds[k][0], None)
        # each value's own series, made once: the lone changes judge them again and again,
        # and a series is prepared once (:attr:`placement.judgement.verdict.over_sessions.Series.prepared`)
        self.own = {k: self._series(k, self.new[k]) for k in keys}
        self.own_again = {k: self._series(k, self.again[k]) for k in self.again}

    def _series(self, k: Key, runs: list[float]) -> verdict.over_sessions.Series:
        return verdict.over_sessions.Series(runs, [(str(j), r) for j, r in enumerate(self.base[k])],
                              self.better[k], k)

    def _given(self, changed: dict[Key, list[float]] | None, k: Key,
               own: dict[Key, verdict.over_sessions.Series]) -> verdict.over_sessions.Series:
        """Value ``k``'s series: its changed launches, else its own (``own``)."""
        return self._series(k, changed[k]) if changed and k in changed else own[k]

    def judge(self, changed: dict[Key, list[float]] | None = None,
              again: bool = False) -> verdict.over_sessions.RunVerdict:
        """The new session (the confirmation session with ``again``) judged as a run, with
        the launches in ``changed`` in place of its own."""
        own = self.own_again if again else self.own
        return verdict.over_sessions.judge_run([self._given(changed, k, own) for k in self.keys],
                                 prone={i for i, k in enumerate(self.keys) if k in self.prone})

    def confirm(self, changed: dict[Key, list[float]] | None = None,
                changed_again: dict[Key, list[float]] | None = None) -> Confirmed:
        """The first session judged, then its candidates judged again on the confirmation
        session, as an acceptance run does (``changed``/``changed_again``: launches that
        replace the sessions' own, a change that lasts shows in both).

        Only the selected values go to the second verdict: its Benjamini-Hochberg family is
        what the first session chose, and the prior and node shift are the first session's
        (``selected_by``), fitted on all its values.
        """
        new = {k: (changed or {}).get(k, self.new[k]) for k in self.keys}
        again = {k: (changed_again or {}).get(k, self.again[k]) for k in self.keys}
        first = self.judge(changed)
        picked = {k: v for k, v in zip(self.keys, first.verdicts) if selected(v)}
        missed = {k for k in self.keys if self.plain_fails(k, new[k])}
        plain = {k for k in missed if self.plain_fails(k, again[k])}
        node = False
        if node_fails(first):
            # a node line: the whole session again, judged as a run of its own
            whole = self.judge(changed_again, again=True)
            judged_again = dict(zip(self.keys, whole.verdicts))
            node = node_standing(first.node, shown_again(first.node, whole.node)) == NODE_FAILS
        elif picked:
            rv = verdict.over_sessions.judge_run([self._given(changed_again, k, self.own_again)
                                    for k in picked],
                                   selected_by=first,
                                   prone={i for i, k in enumerate(picked) if k in self.prone})
            judged_again = dict(zip(picked, rv.verdicts))
        else:
            judged_again = {}
        return Confirmed(first, set(picked), missed, values_confirmed(picked, judged_again),
                         plain, node=node)

    def plain_fails(self, k: Key, runs: list[float]) -> bool:
        """What ReFrame does with the reference ``record`` writes: the median of the
        launches against the one-sided bound (an improvement never fails)."""
        centre, bound = self.bounds[k]
        if bound is None:   # its or a sibling's launches wider than the cap: no bound
            return False
        m = statistics.median(runs)
        return m < centre * (1 - bound) if self.better[k] else m > centre * (1 + bound)


def _value_key(k: Key) -> ValueKey:
    """A value's key as the acceptance run's summary words it: (test and parameters,
    system:partition+environ, variable)."""
    (test, params, system, partition, environ), var = k
    return (" ".join([test] + [f"%{p}={v}" for p, v in params]),
            f"{system}:{partition}+{environ}", var)


def values_confirmed(picked: dict[Key, verdict.over_sessions.Verdict],
                     judged_again: dict[Key, verdict.over_sessions.Verdict]) -> set[Key]:
    """The first session's selected values that stand after their confirmation, by the
    acceptance run's own rule (:func:`placement.acceptance.confirmation.decide`); the plain
    bounds are counted apart (:meth:`Pair.plain_fails`), so no case goes to it."""
    keys = {_value_key(k): k for k in picked}
    assert len(keys) == len(picked), "two values worded alike"
    conf = decide({}, {}, {vk: picked[k] for vk, k in keys.items()},
                  {vk: judged_again[k] for vk, k in keys.items() if k in judged_again}, str)
    return {keys[vk] for vk in conf.values_confirmed}


@dataclass
class Confirmed:
    """A session's candidates and what its confirmation session kept of them."""

    first: verdict.over_sessions.RunVerdict
    #: regressed in the first session / outside their plain bound there
    selected: set[Key]
    missed: set[Key]
    #: regressed again / outside the bound again
    regressed: set[Key]
    plain: set[Key]
    #: the first session's node line, confirmed by the whole confirmation session
    node: bool = False

    @property
    def first_failed(self) -> bool:
        """The acceptance line of the first session alone."""
        return _failed(self.first) or bool(self.missed)

    @property
    def failed(self) -> bool:
        """The acceptance line with confirmation."""
        return self.node or bool(self.regressed) or bool(self.plain)


def _family(key: Key) -> tuple:
    """A value's siblings share this (:func:`placement.judgement.verdict.intervals.family`, as the
    verdict groups a reference file's values)."""
    (test, params, *_), var = key
    return verdict.intervals.family(test, params, var)


def _pairs(data: list[Session], k: int, launches: int, news: list[Session] | None = None,
           confirm: bool = False) -> list[Pair]:
    """Each new session against its baseline: an A/A session against the ``k`` sessions after
    it (cyclically), a hog session (``news``) against the last ``k`` A/A sessions.

    ``confirm``: each new session but the last with the next one as its confirmation; an A/A
    session's baseline is then the ``k`` sessions after the next one (cyclically, skipping
    the session itself), so that its confirmation is never one of its baseline sessions."""
    n = len(data)
    group = news if news is not None else data
    out = []
    for i, new in enumerate(group[:-1] if confirm else group):
        if news is not None:
            base = data[n - k:]
        elif confirm:
            base = [data[j % n] for j in range(i + 2, i + n + 1) if j % n != i][:k]
        else:
            base = [data[(i + m) % n] for m in range(1, k + 1)]
        again = group[i + 1] if confirm else None
        keys = sorted(key for key in new if all(key in b for b in base)
                      and (again is None or key in again))
        if keys and len(base) == k:
            out.append(Pair(new, base, keys, launches, again))
    return out


def _failed(rv: verdict.over_sessions.RunVerdict) -> bool:
    """The acceptance line of a session no second session confirms: a value regressed, or a
    node line that fails without one (:func:`placement.acceptance.confirmation.node_standing`;
    a smaller node line leaves the run incomplete, and a value regressed only with it is
    undecided)."""
    if node_standing(rv.node, None) == NODE_FAILS:
        return True
    return any(v.outcome == verdict.over_sessions.REGRESSED and not (v.why == "with the node" and
                                                          rv.node is not None and
                                                          rv.node.fails)
               for v in rv.verdicts)


def evaluate(data: list[Session], k: int, launches: int, classes: dict[Key, str],
             hog: list[Session], lone_per_pair: int, seed: int = 0) -> dict:
    """Every figure of one baseline size."""
    pairs = _pairs(data, k, launches)
    res: dict = {"pairs": len(pairs), "values": 0}
    aa_fail = aa_vals = plain_sessions = plain_vals = either = 0
    for p in pairs:
        rv = p.judge()
        aa_fail += _failed(rv)
        aa_vals += sum(v.outcome == verdict.over_sessions.REGRESSED for v in rv.verdicts)
        fails = [p.plain_fails(key, p.new[key]) for key in p.keys]
        plain_sessions += any(fails)
        plain_vals += sum(fails)
        either += _failed(rv) or any(fails)
        res["values"] += len(p.keys)
    # the acceptance line fails on either: no verdict turns ReFrame's failure into a pass
    res["aa"] = {"sessions_failed": aa_fail, "values_regressed": aa_vals,
                 "plain_sessions_failed": plain_sessions, "plain_values_failed": plain_vals,
                 "acceptance_failed": either}
    rng = np.random.default_rng(seed)
    lone: dict = {}
    tight: dict = {}
    for f in FACTORS:
        for p in pairs:
            picks = rng.permutation(len(p.keys))[:lone_per_pair]
            for i in picks:
                key = p.keys[i]
                runs = _worse(p.new[key], f, p.better[key])
                rv = p.judge({key: runs})
                row = lone.setdefault(f"{f:.2f}", {}).setdefault(
                    classes.get(key, "?"), {"n": 0, "verdict": 0, "plain": 0, "either": 0})
                row["n"] += 1
                found = rv.verdicts[i].outcome == verdict.over_sessions.REGRESSED
                plain = p.plain_fails(key, runs)
                row["verdict"] += found
                row["plain"] += plain
                row["either"] += found or plain
                if classes.get(key) != COARSE:
                    _tally_tight(tight, f, p, key, found or plain)
    res["lone"] = lone
    res["lone_tight_launches"] = tight
    together: dict = {}
    for f in FACTORS:
        row = {"sessions_failed": 0, "node_flagged": 0, "regressed_share": [],
               "plain_sessions_failed": 0, "plain_share": []}
        for p in pairs:
            changed = {key: _worse(p.new[key], f, p.better[key]) for key in p.keys}
            rv = p.judge(changed)
            row["sessions_failed"] += _failed(rv)
            row["node_flagged"] += bool(rv.node and rv.node.flagged)
            row["regressed_share"].append(
                statistics.mean(v.outcome == verdict.over_sessions.REGRESSED for v in rv.verdicts))
            fails = [p.plain_fails(key, changed[key]) for key in p.keys]
            row["plain_sessions_failed"] += any(fails)
            row["plain_share"].append(statistics.mean(fails))
        row["regressed_share"] = statistics.mean(row["regressed_share"])
        row["plain_share"] = statistics.mean(row["plain_share"])
        together[f"{f:.2f}"] = row
    res["all_at_once"] = together
    if hog:
        row = {"sessions": 0, "failed": 0, "node_flagged": 0, "regressed_share": [],
               "plain_failed": 0, "plain_share": [], "node_lines": []}
        for p in _pairs(data, k, launches, hog):
            rv = p.judge()
            row["sessions"] += 1
            row["failed"] += _failed(rv)
            row["node_flagged"] += bool(rv.node and rv.node.flagged)
            if rv.node is not None:
                row["node_lines"].append(rv.node.text())
            row["regressed_share"].append(
                statistics.mean(v.outcome == verdict.over_sessions.REGRESSED for v in rv.verdicts))
            fails = [p.plain_fails(key, p.new[key]) for key in p.keys]
            row["plain_failed"] += any(fails)
            row["plain_share"].append(statistics.mean(fails))
        row["regressed_share"] = statistics.mean(row["regressed_share"] or [0])
        row["plain_share"] = statistics.mean(row["plain_share"] or [0])
        res["hog"] = row
    conf = evaluate_confirmed(data, k, launches, classes, hog, lone_per_pair, seed)
    if conf["pairs"]:
        res["confirmed"] = conf
    return res


#: sessions failed by the acceptance line and by plain ReFrame, the first session alone and
#: with confirmation
_SESSIONS = {"first_failed": 0, "failed": 0, "plain_first_failed": 0, "plain_failed": 0}


def _tally(row: dict, c: Confirmed) -> None:
    """Counts one confirmed session into a row of :data:`_SESSIONS`."""
    row["first_failed"] += c.first_failed
    row["failed"] += c.failed
    row["plain_first_failed"] += bool(c.missed)
    row["plain_failed"] += bool(c.plain)


def evaluate_confirmed(data: list[Session], k: int, launches: int, classes: dict[Key, str],
                       hog: list[Session], lone_per_pair: int, seed: int = 0) -> dict:
    """The figures of one baseline size with confirmation (:meth:`Pair.confirm`), each next
    to what the first session alone gives on the same pairs (their baselines differ from
    :func:`evaluate`'s: the confirmation session is left out of them)."""
    pairs = _pairs(data, k, launches, confirm=True)
    res: dict = {"pairs": len(pairs), "values": sum(len(p.keys) for p in pairs)}
    aa = {**_SESSIONS, "values_regressed": 0, "plain_values_failed": 0}
    for p in pairs:
        c = p.confirm()
        _tally(aa, c)
        aa["values_regressed"] += len(c.regressed)
        aa["plain_values_failed"] += len(c.plain)
    res["aa"] = aa
    rng = np.random.default_rng(seed)   # its own: evaluate's picks stay as they were
    lone: dict = {}
    tight: dict = {}
    for f in FACTORS:
        for p in pairs:
            for i in rng.permutation(len(p.keys))[:lone_per_pair]:
                key = p.keys[i]
                c = p.confirm({key: _worse(p.new[key], f, p.better[key])},
                              {key: _worse(p.again[key], f, p.better[key])})
                row = lone.setdefault(f"{f:.2f}", {}).setdefault(
                    classes.get(key, "?"), {"n": 0, "verdict": 0, "plain": 0, "either": 0,
                                            "first_either": 0})
                row["n"] += 1
                row["verdict"] += key in c.regressed
                row["plain"] += key in c.plain
                row["either"] += key in c.regressed | c.plain
                row["first_either"] += key in c.selected | c.missed
                if classes.get(key) != COARSE:
                    _tally_tight(tight, f, p, key, key in c.regressed | c.plain)
    res["lone"] = lone
    res["lone_tight_launches"] = tight
    if k == 1:      # the goal's baseline size
        res["lone_every"] = lone_every(pairs, classes)
    together: dict = {}
    for f in FACTORS:
        row = dict(_SESSIONS)
        for p in pairs:
            _tally(row, p.confirm({key: _worse(p.new[key], f, p.better[key]) for key in p.keys},
                                  {key: _worse(p.again[key], f, p.better[key])
                                   for key in p.keys}))
        together[f"{f:.2f}"] = row
    res["all_at_once"] = together
    hog_pairs = _pairs(data, k, launches, hog, confirm=True) if hog else []
    if hog_pairs:
        row = {**_SESSIONS, "sessions": 0, "node_failed": 0, "regressed_share": []}
        for p in hog_pairs:
            c = p.confirm()
            _tally(row, c)
            row["sessions"] += 1
            row["node_failed"] += c.node
            row["regressed_share"].append(len(c.regressed) / len(p.keys))
        row["regressed_share"] = statistics.mean(row["regressed_share"])
        res["hog"] = row
    return res


def _pct(a: float, b: float) -> str:
    return f"{a / b:.0%}" if b else "-"


def _conf(c: dict | None, first: str = "first_failed", conf: str = "failed") -> str:
    """A cell with confirmation, ``1/19 (3)``: failed with confirmation of its sessions, the
    first session alone in brackets; ``-`` where there is no confirmation figure."""
    if not c:
        return "-"
    return f"{c[conf]}/{c['sessions']} ({c[first]})"


def _lone_cell(row: dict | None, first: bool = False) -> str:
    if not row:
        return "-"
    alone = f"{_pct(row['first_either'], row['n'])}, " if first else ""
    return (f"{_pct(row['verdict'], row['n'])} / {_pct(row['plain'], row['n'])} / "
            f"{_pct(row['either'], row['n'])} ({alone}n={row['n']})")


def report(results: dict[int, dict], classes: dict[Key, str], n_sessions: int,
           hours: float) -> list[str]:
    """The set's tables, as the full table beside the JSON prints them."""
    counts: dict[str, int] = {}
    for c in classes.values():
        counts[c] = counts.get(c, 0) + 1
    order = [c[2] for c in CV_CLASSES] + [COARSE]
    shown = [c for c in order if c in counts]
    out = [f"{n_sessions} A/A sessions over {hours:.1f} h, {len(classes)} values each, "
           f"{LAUNCHES} launches per session; values per class of session-to-session CV: "
           + ", ".join(f"{c} {counts[c]}" for c in shown), "",
           "With confirmation (conf.): each session's candidates judged again on the next "
           "session, both against the K sessions after that one (cyclically, skipping the "
           f"session itself); the last session has no next one and is left out "
           f"({n_sessions - 1} sessions); in brackets, the first session alone on the same "
           "pairs", "",
           "A/A (nothing changed): sessions that FAIL / values called regressed",
           "",
           "| baseline sessions | verdict: sessions failed | values regressed | "
           "plain `reframe -r`: sessions failed | values failed | acceptance (either): "
           "sessions failed | conf.: acceptance sessions failed | conf.: plain sessions "
           "failed |",
           "|---|---|---|---|---|---|---|---|"]
    for k, r in results.items():
        a = r["aa"]
        c = r.get("confirmed")
        ca = {**c["aa"], "sessions": c["pairs"]} if c else None
        out.append(f"| {k} | {a['sessions_failed']}/{r['pairs']} | "
                   f"{a['values_regressed']}/{r['values']} | {a['plain_sessions_failed']}/"
                   f"{r['pairs']} | {a['plain_values_failed']}/{r['values']} | "
                   f"{a['acceptance_failed']}/{r['pairs']} | {_conf(ca)} | "
                   f"{_conf(ca, 'plain_first_failed', 'plain_failed')} |")
    out += ["", "Lone value made worse (the others untouched): found by the verdict / by "
            "plain `reframe -r` / by the acceptance line (either), per class of the value's "
            "session-to-session CV; conf.: made worse in the session and its confirmation "
            "alike, found and confirmed (in brackets: either, the first session alone)", "",
            "| baseline sessions | slowdown | " + " | ".join(shown) + " | "
            + " | ".join(f"conf. {c}" for c in shown) + " |",
            "|---|---|" + "---|" * 2 * len(shown)]
    for k, r in results.items():
        conf = r.get("confirmed", {}).get("lone", {})
        for f, by in r["lone"].items():
            cells = [_lone_cell(by.get(c)) for c in shown] + \
                [_lone_cell(conf.get(f, {}).get(c), first=True) for c in shown]
            out.append(f"| {k} | {float(f) - 1:+.0%} | " + " | ".join(cells) + " |")
    out += ["", "Every value made worse at once (a slower node): sessions failed, node "
            "flagged, share of values regressed; plain `reframe -r`: sessions failed, share "
            "of values failed; conf.: made worse in both sessions, sessions the acceptance "
            "line and plain `reframe -r` fail", "",
            "| baseline sessions | slowdown | sessions failed | node flagged | "
            "values regressed | plain: sessions failed | plain: values failed | "
            "conf.: acceptance sessions failed | conf.: plain sessions failed |",
            "|---|---|---|---|---|---|---|---|---|"]
    for k, r in results.items():
        c = r.get("confirmed")
        for f, row in r["all_at_once"].items():
            ct = {**c["all_at_once"][f], "sessions": c["pairs"]} if c else None
            out.append(f"| {k} | {float(f) - 1:+.0%} | {row['sessions_failed']}/{r['pairs']} | "
                       f"{row['node_flagged']}/{r['pairs']} | {row['regressed_share']:.0%} | "
                       f"{row['plain_sessions_failed']}/{r['pairs']} | "
                       f"{row['plain_share']:.0%} | {_conf(ct)} | "
                       f"{_conf(ct, 'plain_first_failed', 'plain_failed')} |")
    if any("hog" in r for r in results.values()):
        out += ["", "CPU hog (2 busy loops per core while the session ran); conf.: each hog "
                "session but the last confirmed by the next hog session, against the same "
                "baseline", "",
                "| baseline sessions | sessions failed | node flagged | values regressed | "
                "plain: sessions failed | plain: values failed | conf.: sessions failed | "
                "conf.: values regressed | conf.: plain sessions failed | node line (first) |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for k, r in results.items():
            h = r.get("hog")
            if not h:
                continue
            ch = r.get("confirmed", {}).get("hog")
            share = f"{ch['regressed_share']:.0%}" if ch else "-"
            line = h["node_lines"][0] if h["node_lines"] else ""
            out.append(f"| {k} | {h['failed']}/{h['sessions']} | {h['node_flagged']}/"
                       f"{h['sessions']} | {h['regressed_share']:.0%} | {h['plain_failed']}/"
                       f"{h['sessions']} | {h['plain_share']:.0%} | {_conf(ch)} | {share} | "
                       f"{_conf(ch, 'plain_first_failed', 'plain_failed')} | {line} |")
    return out


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def targets(results: dict[int, dict]) -> list[str]:
    """The goals, each met or missed, with the number; then with confirmation."""
    lines = []
    for k, r in results.items():
        a = r["aa"]
        c = r.get("confirmed")
        quiet = a["acceptance_failed"] <= r["pairs"] / 20 and \
            a["plain_sessions_failed"] <= r["pairs"] / 20
        lines.append(f"A/A at {k} session(s): acceptance {r['pairs'] - a['acceptance_failed']}/"
                     f"{r['pairs']} pass, plain {r['pairs'] - a['plain_sessions_failed']}/"
                     f"{r['pairs']} pass: {_met(quiet)} (19 of 20)")
        if c:
            ca, n = c["aa"], c["pairs"]
            quiet = ca["failed"] <= n / 20 and ca["plain_failed"] <= n / 20
            lines.append(f"  with confirmation: acceptance {n - ca['failed']}/{n} pass, plain "
                         f"{n - ca['plain_failed']}/{n} pass: {_met(quiet)} (19 of 20)")
        h = r.get("hog")
        if h:
            ok = h["failed"] == h["sessions"] and h["node_flagged"] == h["sessions"] and \
                h["regressed_share"] >= 0.5
            lines.append(f"CPU hog at {k}: {h['failed']}/{h['sessions']} failed, node flagged "
                         f"{h['node_flagged']}/{h['sessions']}, {h['regressed_share']:.0%} "
                         f"regressed: {_met(ok)}")
            ch = (c or {}).get("hog")
            if ch:
                ok = ch["failed"] == ch["sessions"] == ch["node_failed"] and \
                    ch["regressed_share"] >= 0.5
                lines.append(f"  with confirmation: {ch['failed']}/{ch['sessions']} failed, "
                             f"node line {ch['node_failed']}/{ch['sessions']}, "
                             f"{ch['regressed_share']:.0%} regressed: {_met(ok)}")
        for which, res in (("", r), ("  with confirmation: ", c or {})):
            lone = res.get("lone")
            if not lone:
                continue
            t4 = res["lone_tight_launches"].get("1.40")
            if t4:
                lines.append(f"{which}lone +40% with launches within "
                             f"{TIGHT_LAUNCHES:.0%}, {k} session(s): {t4['either']}/{t4['n']} "
                             f"found ({_pct(t4['either'], t4['n'])})")
            every = res.get("lone_every")
            if every:
                t, a = every["tight"], every["all"]
                lines.append(f"{which}lone +40%, every value, {k} session(s): {a['either']}/"
                             f"{a['n']} found ({_pct(a['either'], a['n'])}); with launches "
                             f"within {TIGHT_LAUNCHES:.0%}: {t['either']}/{t['n']} "
                             f"({t['states']} with states)")
            tight = [lone["1.25"].get(cv) for cv in ("CV <= 2%", "2-5%")]
            n = sum(t["n"] for t in tight if t)
            found = sum(t["either"] for t in tight if t)
            if k >= 3 and n:
                lines.append(f"{which}lone +25% at CV <= 5%, {k} sessions: {found}/{n} "
                             f"found: {_met(found >= 0.9 * n)} (90%)")
            gross = [lone["1.40"].get(cv) for cv in ("CV <= 2%", "2-5%")]
            n4 = sum(t["n"] for t in gross if t)
            f4 = sum(t["either"] for t in gross if t)
            if n4:
                lines.append(f"{which}lone +40% at CV <= 5%, {k} session(s): {f4}/{n4} found "
                             f"({_pct(f4, n4)})")
            big = lone["2.00"]
            n2 = sum(x["n"] for x in big.values())
            f2 = sum(x["either"] for x in big.values())
            lines.append(f"{which}lone 2x, {k} session(s): {f2}/{n2} found ({_pct(f2, n2)})")
    return lines


VALIDATION = ROOT / "tests" / "fixtures" / "validation"


@dataclass(frozen=True)
class SessionSet:
    """A folder of A/A sessions (``run-*.json``, hog sessions in ``hog/``): a tuning set the
    rules were chosen on (:data:`provenance.TUNING_SETS`), a validation set
    recorded after they were fixed (``tests/fixtures/validation/NAME/set.yaml``), or reports
    given on the command line."""

    name: str
    role: str           # "tuning" (in-sample), "validation" or "given"
    what: str
    paths: list[Path]
    hog: list[Path]
    #: "quiet": nothing else ran beside the sessions (the unchanged-rerun goals apply);
    #: "shared": other work ran beside them (its figures are shown, its load is expected)
    node: str = "quiet"
    #: the checks' mode the sessions ran (``quick`` or ``acceptance``; empty where unsaid)
    mode: str = ""
    #: a tuning set recorded as a validation set (its ``set.yaml`` says after which fixing)
    #: and chosen on later: its figures are in-sample, pooled apart from the validation sets
    recorded_for_validation: bool = False


#: tuning sets ``make bench`` leaves out (``--set NAME`` judges them): the first sets, of
#: 2026-11-23 (back to back, or on a machine shared with other work), which ``make bench``
#: has never judged: the two-hour set of quiet sessions took their place, and they would add
#: to its time, not to what it shows
NOT_JUDGED_BY_DEFAULT = ("aa-sessions", "aa-sessions-spread", "aa-launches", "aa-runs")

#: the tuning sets ``make bench`` judges beside the validation sets (their figures in-sample,
#: for comparison): every tuning set but :data:`NOT_JUDGED_BY_DEFAULT`, so a new one is judged
DEFAULT_TUNING = tuple(f for f in provenance.TUNING_SETS if f not in NOT_JUDGED_BY_DEFAULT)


def _described(folder: Path) -> dict:
    """A set folder's ``set.yaml`` (when, where, under what load, which mode), or {}."""
    import yaml
    meta = folder / "set.yaml"
    return (yaml.safe_load(meta.read_text()) or {}) if meta.is_file() else {}


def session_sets(names: list[str] | None = None) -> list[SessionSet]:
    """Those named, else the validation sets and :data:`DEFAULT_TUNING`."""
    out = []
    for folder in provenance.TUNING_SETS:
        d = ROOT / "tests" / "fixtures" / folder
        meta = _described(d)
        out.append(SessionSet(folder, "tuning", str(meta.get("what", "")),
                              sorted(d.glob("run-*.json")),
                              sorted(d.glob("hog/run-*.json")),
                              str(meta.get("node", "quiet")), str(meta.get("mode", "")),
                              "recorded_after_rules_fixed" in meta))
    for d in sorted(VALIDATION.glob("*/set.yaml")):
        meta = _described(d.parent)
        out.append(SessionSet(d.parent.name, "validation", str(meta.get("what", "")),
                              sorted(d.parent.glob("run-*.json")),
                              sorted(d.parent.glob("hog/run-*.json")),
                              str(meta.get("node", "quiet")), str(meta.get("mode", ""))))
    if names:
        known = {x.name: x for x in out}
        missing = [n for n in names if n not in known]
        if missing:
            raise SystemExit(f"regression_detection.py: unknown set(s) {', '.join(missing)}; "
                             f"known: {', '.join(known)}")
        return [known[n] for n in names]
    return [x for x in out if x.role == "validation" or x.name in DEFAULT_TUNING]


def session_loads(paths: list[Path]) -> list[verdict.node_load.Load | None]:
    """The acceptance run's load line over each session's cases (oldest first); None where
    the session measured no CPU pressure (sets older than ``cpu_wait``)."""
    out = []
    for data in sorted((json.loads(_read_text(p)) for p in paths),
                       key=lambda d: d["session_info"].get("time_start", "")):
        cases = [tc for run in data["runs"] for tc in run["testcases"]]
        out.append(verdict.node_load.of_cases(cases))
    return out


def _read_text(p: Path) -> str:
    raw = p.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()


def load_line(loads: list[verdict.node_load.Load | None]) -> dict:
    """Unchanged sessions whose load line would fail the run."""
    measured = [x for x in loads if x is not None]
    return {"sessions": len(loads), "measured": len(measured),
            "flagged": sum(x.loaded for x in measured),
            "medians": [round(x.median, 3) for x in measured]}


def cut_by_time_box(report: reading.run_report.RunReport) -> bool:
    """A session its time box stopped: a case the acceptance run classifies as interrupted
    or hung (:func:`placement.acceptance.case_kinds.classify`), so its line is unfinished, neither
    a pass nor a fail, and the few cases it finished show nothing of the load or the node
    (the load line needs :data:`node_load.MIN_CASES`): not judged."""
    return any(classify(c.raw, cut_short=True) in ("interrupted", "hung") for c in report.cases)


def uncut(paths: list[Path]) -> tuple[list[reading.run_report.RunReport], int]:
    """The sessions at ``paths`` that ran to their end, each read once, and how many the
    time box cut (:func:`cut_by_time_box`)."""
    reports = [reading.run_report.load(p) for p in paths]
    kept = [r for r in reports if not cut_by_time_box(r)]
    return kept, len(reports) - len(kept)


def plain_role(role: str, first: str) -> str:
    """The set's role for plain ``reframe -r``'s figures: a validation set recorded before the
    rules of the ``plain`` scope were fixed (:data:`provenance.PLAIN_FIXED`) was seen by them,
    so its plain figures are in-sample (``tuning``) while its verdict figures are not."""
    if role != "validation":
        return role
    return "validation" if _utc(first) > _utc(provenance.PLAIN_FIXED) else "tuning"


def _utc(text: str):
    """A session's start (``20261129T175952+0000``) or a rule's fixing time, as a time."""
    from datetime import datetime
    for fmt in ("%Y%m%dT%H%M%S%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(text.replace("Z", "+0000"), fmt)
        except ValueError:
            continue
    raise ValueError(f"not a time: {text!r}")


def evaluate_set(ss: SessionSet, launches: int, lone: int) -> dict | None:
    """Every figure of one set, or None when it has too few sessions. A session its time
    box cut (:func:`cut_by_time_box`), A/A or hog, is left out and counted."""
    aa, aa_cut = uncut(ss.paths)
    data = values_of(aa)
    if len(data) < 3:
        return None
    hogs, cut = uncut(ss.hog)
    hog = values_of(hogs)
    starts = sorted(r.session.get("time_start", "") for r in aa)
    classes = cv_classes(data, launches)
    results = {k: evaluate(data, k, launches, classes, hog, lone)
               for k in SIZES if k < len(data)}
    return {"role": ss.role, "what": ss.what, "node": ss.node, "mode": ss.mode,
            "plain_role": plain_role(ss.role, starts[0]),
            "recorded_for_validation": ss.recorded_for_validation,
            "sessions": len(data),
            "hours": _hours(starts[0], starts[-1]), "first": starts[0], "last": starts[-1],
            "launches": launches, "classes": _class_counts(classes),
            "load_line": load_line(session_loads([r.path for r in aa])),
            "hog_load_line": load_line(session_loads([r.path for r in hogs])) if hogs else None,
            "hog_cut": cut, "aa_cut": aa_cut,
            "by_baseline_sessions": results,
            "report": report(results, classes, len(data), _hours(starts[0], starts[-1]))
            + _cut_note(cut, "hog") + _cut_note(aa_cut, "A/A"),
            "targets": targets(results)}


def _cut_note(cut: int, kind: str) -> list[str]:
    """The report's line for ``kind`` sessions left out, so a reader sees they were recorded."""
    return ["", f"{cut} {kind} session(s) cut by their time box (aborted cases: unfinished, "
            "neither pass nor fail): not judged"] if cut else []


def _evaluate_in_worker(ss: SessionSet, launches: int, lone: int,
                        estimator: str) -> dict | None:
    verdict.moderation.ESTIMATOR = estimator     # a spawned worker starts from the module's default
    return _timed(ss, launches, lone)


def _timed(ss: SessionSet, launches: int, lone: int) -> dict | None:
    """:func:`evaluate_set`, and a line on stderr as it ends: the whole run prints its
    figures only at the end, in order, so this is how a long run is followed."""
    start = time.monotonic()
    r = evaluate_set(ss, launches, lone)
    print(f"judged {ss.name} in {time.monotonic() - start:.0f}s", file=sys.stderr, flush=True)
    return r


def _evaluate_sets(sets: list[SessionSet], launches: int, lone: int, jobs: int,
                   estimator: str) -> list[dict | None]:
    """:func:`evaluate_set` of each set, in order; ``jobs`` sets at once (each set is
    independent and single-threaded: on two CPUs ``make bench`` takes half the time)."""
    if jobs <= 1 or len(sets) <= 1:
        return [_timed(ss, launches, lone) for ss in sets]
    work = functools.partial(_evaluate_in_worker, launches=launches, lone=lone,
                             estimator=estimator)
    with ProcessPoolExecutor(max_workers=min(jobs, len(sets))) as pool:
        # the largest sets first, so that no worker starts a long one when the others end
        futures = {id(ss): pool.submit(work, ss)
                   for ss in sorted(sets, key=lambda x: -len(x.paths))}
        return [futures[id(ss)].result() for ss in sets]


def _class_counts(classes: dict[Key, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in classes.values():
        counts[c] = counts.get(c, 0) + 1
    return counts


def _allowed(n: int) -> int:
    """Unchanged sessions that may fail among ``n``: at most 1 of 20, i.e. 5 % of ``n``
    rounded to the nearest count (none below 10: one failure in 3 is not 1 in 20)."""
    return (n + 10) // 20


#: the share of the lone changes the goal asks one baseline session to find
LONE_GOAL = 0.80


def _lone_goal(lones: dict[str, figures.Lone]) -> tuple[str, bool]:
    """The lone-change goal over the validation sets of a quiet node pooled: 80 % of the
    tight values the verdict may call (those without states: a value with states is called
    neither way, by rule) found and confirmed from one baseline session; none such in any
    set is a goal not met (nothing shows it holds). Each set's count, every tight value and
    all values are beside it.

    Why pooled: it is a share, and a set holds 0 to 30 such values (how many are tight and
    without states is the node's doing, not the rule's). At a true 89 %, a set of 2 of them
    misses 80 % by chance one time in five and one of 0 cannot meet it at all, so per set
    the goal judged the sets' sizes; pooled, every such value of every validation session
    counts once. The unchanged-rerun, node and load goals stay per set: they ask each set
    for (almost) no failure. How the goal is judged was fixed with the rules
    (:data:`provenance.RULES_FIXED`): only sets recorded after it judge it."""
    t = {f: sum(getattr(x, f) for x in lones.values()) for f in figures.Lone._fields}
    per_set = ", ".join(f"{name} {x.found}/{x.n}" for name, x in lones.items())
    return (f"a lone value 40% slower with launches within {TIGHT_LAUNCHES:.0%}, one "
            f"baseline session, the {len(lones)} validation set(s) pooled: {t['found']}/"
            f"{t['n']} found and confirmed of those without states ({_pct(t['found'], t['n'])}"
            f", at least {LONE_GOAL:.0%}; per set: {per_set or 'none'}; every tight value: "
            f"{t['tight_found']}/{t['tight_n']}, those with states called by no rule; over all "
            f"values: {t['all_found']}/{t['all_n']})", t["n"] > 0 and t["found"] >= LONE_GOAL * t["n"])


def _none_tight(c: dict) -> figures.Lone:
    """A set's lone counts when none of its values was tight: only the all-values figure."""
    a = c.get("lone_every", {}).get("all", {"either": 0, "n": 0})
    return figures.Lone(0, 0, 0, 0, 0, a["either"], a["n"])


def _rerun_goal(name: str, k: str, c: dict, plain_judged: bool) -> tuple[str, bool]:
    """Unchanged reruns at ``k`` baseline sessions: the acceptance line with its confirmation
    session, and plain ``reframe -r`` on the first session alone (ReFrame confirms nothing)
    where its bounds' rules had not seen the set (``plain_judged``); on a set they were
    chosen on, the plain figure is in-sample and judges nothing."""
    n, a = c["pairs"], c["aa"]
    ok = a["failed"] <= _allowed(n)
    if plain_judged:
        plain = f"plain reframe -r {a['plain_first_failed']}/{n} on the first session alone"
        ok = ok and a["plain_first_failed"] <= _allowed(n)
    else:
        plain = (f"plain reframe -r not judged here ({a['plain_first_failed']}/{n} on the "
                 "first session alone, in-sample: VIRTUAL_CACHE_PLAIN was chosen on it)")
    return (f"{name}: unchanged reruns at {k} baseline session(s): acceptance line "
            f"{a['failed']}/{n} failed, {plain} (at most {_allowed(n)})", ok)


def goals(results: dict[str, dict]) -> list[tuple[str, bool]]:
    """The verdict's goals on the validation sets of a quiet node alone (nothing else ran
    beside their sessions: on a shared node the load line is meant to speak), each met or
    not: per set, unchanged reruns (acceptance line with confirmation, and plain ``reframe
    -r``) and the load line at most 1 of 20, a node 2x slower failed in every session at
    every size; over the sets pooled, a lone value 40 % slower with tight launches found in
    80 % from one baseline session (with the all-values figure beside it, :func:`_lone_goal`)."""
    out = []
    lones: dict[str, figures.Lone] = {}
    for name, r in results.items():
        if r is None or r["role"] != "validation" or r.get("node", "quiet") != "quiet":
            continue
        for k, res in r["by_baseline_sessions"].items():
            c = res.get("confirmed")
            if c:
                out.append(_rerun_goal(name, k, c, r.get("plain_role") == "validation"))
                two, n = c["all_at_once"]["2.00"], c["pairs"]
                out.append((f"{name}: a node 2x slower at {k} baseline session(s): "
                            f"{two['failed']}/{n} failed", two["failed"] == n))
            if int(k) == 1 and c:
                lones[name] = figures.lone_counts(c) or _none_tight(c)
        ll = r["load_line"]
        if ll["measured"]:
            out.append((f"{name}: load line on unchanged sessions: {ll['flagged']}/"
                        f"{ll['measured']} flagged (at most {_allowed(ll['measured'])})",
                        ll["flagged"] <= _allowed(ll["measured"])))
    if lones:
        out.append(_lone_goal(lones))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*", type=Path,
                    help="run reports of one ad hoc set (default: every tuning and validation "
                         "set under tests/fixtures)")
    ap.add_argument("--set", action="append", dest="sets", metavar="NAME",
                    help="only this set (repeatable): a tuning folder or a validation set")
    ap.add_argument("--hog", nargs="*", type=Path, default=None,
                    help="with REPORTS: sessions recorded under a CPU hog")
    ap.add_argument("--strip", nargs="+", type=Path, help="run reports to copy, stripped")
    ap.add_argument("--out", type=Path, default=FIXTURES)
    ap.add_argument("--launches", type=int, default=LAUNCHES,
                    help=f"launches per session taken from each (default {LAUNCHES})")
    ap.add_argument("--lone", type=int, default=12,
                    help="values made worse alone per session pair (default 12)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="sets judged at once, each in its own process (default: the CPUs)")
    ap.add_argument("--update", action="store_true",
                    help="with --set: judge those sets only and put them into the stored "
                         "results beside the others (refused unless those were judged by "
                         "the same rules, RULES_FIXED)")
    ap.add_argument("--estimator", choices=("moments", "mle"), default=verdict.moderation.ESTIMATOR,
                    help="how the session-spread prior is fitted (default "
                         f"{verdict.moderation.ESTIMATOR}; mle: maximum likelihood, for comparison: "
                         "its results go to regression_detection-mle.json)")
    args = ap.parse_args(argv)
    if args.update and (not args.sets or args.reports):
        ap.error("--update needs --set NAME (the sets to judge again) and no REPORTS")
    verdict.moderation.ESTIMATOR = args.estimator
    if args.strip:
        strip(args.strip, args.out)
        return 0
    sets = ([SessionSet("given", "given", "reports given on the command line", args.reports,
                        args.hog or [])] if args.reports else session_sets(args.sets))
    results = {}
    for ss, r in zip(sets, _evaluate_sets(sets, args.launches, args.lone, args.jobs,
                                          args.estimator)):
        if r is None:
            print(f"{ss.name}: fewer than 3 sessions, left out", file=sys.stderr)
            continue
        results[ss.name] = r
        label = "IN-SAMPLE (the rules were chosen on it)" if ss.role == "tuning" else ss.role
        print(f"== {ss.name} [{label}]: {ss.what}")
        print("\n".join(r["report"]) + "\n\n" + "\n".join(r["targets"]) + "\n")
    if not results:
        print("no set of at least 3 sessions", file=sys.stderr)
        return 2
    suffix = "" if args.estimator == "moments" else f"-{args.estimator}"
    out = ROOT / "benchmarks" / "results" / f"regression_detection{suffix}.json"
    if args.update:
        try:
            results = merged_results(out, results)
        except BadStored as e:
            print(f"regression_detection.py: {e}", file=sys.stderr)
            return 2
    met = goals(results)
    print("== goals (validation sets only)")
    for text, ok in met:
        print(f"{_met(ok)}: {text}")
    if not met:
        print("MISSED: no validation set to judge the goals on")
    if not args.reports:
        out.parent.mkdir(exist_ok=True)
        atomic.write_text(out, json.dumps({"rules_fixed": provenance.RULES_FIXED,
                                           "plain_fixed": provenance.PLAIN_FIXED,
                                           "sets": results,
                                           "goals": [{"goal": t, "met": ok} for t, ok in met]},
                                          indent=1, default=str) + "\n")
    return 0 if met and all(ok for _, ok in met) else 1


class BadStored(Exception):
    """Stored results that another set's figures cannot be put beside."""


def merged_results(stored: Path, fresh: dict[str, dict]) -> dict[str, dict]:
    """``fresh`` put into the stored results, in :func:`session_sets` order (the sets the
    whole benchmark judges; one no longer there drops out).

    Why: a set recorded today is judged in minutes, the whole benchmark takes about forty
    minutes; the other sets' figures stay valid only if the same rules judged them, so the
    stored file's ``rules_fixed`` and ``plain_fixed`` must be today's
    (:data:`provenance.RULES_FIXED`, :data:`provenance.PLAIN_FIXED`).
    """
    try:
        old = json.loads(stored.read_text())
    except (OSError, ValueError) as e:
        raise BadStored(f"--update needs the stored results {stored}: {e}") from None
    if not isinstance(old, dict) or not isinstance(old.get("sets", {}), dict):
        raise BadStored(f"{stored} is not the benchmark's results (an object with 'sets'): "
                        "run the whole benchmark (no --update)")
    if (old.get("rules_fixed"), old.get("plain_fixed")) != (provenance.RULES_FIXED,
                                                            provenance.PLAIN_FIXED):
        raise BadStored(f"{stored} was judged by the rules fixed {old.get('rules_fixed')} "
                        f"(plain bounds {old.get('plain_fixed')}), not {provenance.RULES_FIXED} "
                        f"(plain bounds {provenance.PLAIN_FIXED}): run the whole benchmark (no "
                        "--update)")
    sets = {**old.get("sets", {}), **fresh}
    # the sets the whole benchmark judges, in its order: a set since removed drops out
    return {ss.name: sets[ss.name] for ss in session_sets() if ss.name in sets}


def _hours(a: str, b: str) -> float:
    try:
        return (_utc(b) - _utc(a)).total_seconds() / 3600
    except ValueError:
        return math.nan


if __name__ == "__main__":
    sys.exit(main())
