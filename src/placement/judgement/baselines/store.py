"""System reference files (ReFrame ``$ref`` YAML) built from a run, compared, written safely.

Format (what ReFrame 4.10 reads): top-level keys are test class names; under
each, ``$index`` lists the attributes indexing the entries (the class's
``reference_index``) and nested mappings by those attributes' values lead to
``{perfvar: [value, lower, upper, unit]}``; ``lower``/``upper`` are fractions
of ``value``. A top-level ``_provenance`` mapping (never a class name) says
where the numbers came from.

Thresholds: a case with per-run values gets ±max(3·CV, 5 %), three standard
deviations of a single run, so a rerun on the same machine stays inside with
high probability while a real slowdown larger than the noise does not; a case
measured once gets ±10 % (:data:`DEFAULT_THRESHOLD`), the studies' reported
run-to-run spread (< 5 %) doubled.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as _dt
import functools
import math
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...util import PlacementError, atomic, cycles, regular_file, safe_yaml
from . import cache, contents, pool, samples, shape
from .shape import cut, short
from ..verdict.guards import GUARD_VARS
from ..verdict.intervals import (MAX_UPPER, MEASURABLE, Entry, entries, entry_name, index_of,
    measurable, parse_entry, sibling_family, unit_mismatches)
from ..reading.direction import higher_is_better, is_extreme
from ..reading.run_report import NODE_PARAMS, Case, RunReport
from ..reading.summary import Summary

MIN_THRESHOLD = 0.05
CV_FACTOR = 3.0
DEFAULT_THRESHOLD = 0.10
PROVENANCE_KEY = "_provenance"


def threshold_for(case: Case, var: str, s: Summary | None = None) -> tuple[float, str]:
    """The symmetric relative threshold of one perfvar, and how it was chosen (``s``: its
    :meth:`Case.summary`, when the caller has it)."""
    s = case.summary(var) if s is None else s
    if s is not None and s.n > 1 and s.cv is not None:
        return round(max(CV_FACTOR * s.cv, MIN_THRESHOLD), 4), f"max(3*CV, 5%) over {s.n} runs"
    return DEFAULT_THRESHOLD, "default ±10% (single run)"


def case_index(case: Case, partitions: int = 1, environs: int = 1, nodes: int = 1) -> list[str]:
    """Attributes indexing this case's entry: its ``reference_index``, else its parameters.

    When a test ran on several partitions or environments, ReFrame's special
    ``$partition``/``$environ`` keys go first, so their numbers do not overwrite
    each other (a gnu and a clang build are different baselines). A test that ran on
    several nodes (``--distribute``) is kept per node: ``node`` (the node-health cases'
    variable) follows, and ReFrame's ``.nid``/``.part`` never index.
    """
    index = [a for a in (case.index or case.params) if a not in NODE_PARAMS]
    special = (["$partition"] if partitions > 1 else []) + (["$environ"] if environs > 1 else [])
    special += ["node"] if nodes > 1 else []
    return special + [a for a in index if a not in special] if index or special else []


def _attr(case: Case, attr: str) -> Any:
    if attr == "$partition":
        return f"{case.system}:{case.partition}"
    if attr == "$environ":
        return case.environ
    if attr == "node":
        return case.node
    return case.params[attr]


def _yaml_key(v: Any) -> Any:
    # keep numbers numbers (ReFrame looks entries up with the attribute's own value)
    return v if isinstance(v, (int, float, bool)) else str(v)


def from_run(report: RunReport, system: str,
             cases_of: dict[Entry, Case] | None = None, pools: bool = False,
             unmeasured: list[str] | None = None) -> dict[str, Any]:
    """Reference entries (no provenance) for ``system`` from a run's measured values.

    ``cases_of``, when given, is filled with the case each entry came from. ``pools``: a
    test kept per node also gets its partition's pooled entry beside the nodes' own
    (:mod:`.pool`), as ``baseline record`` writes it; a run judged against a file
    leaves them out (each node is judged against its own entries, or the pool in its stead).

    Only cases whose sanity passed are recorded (a failed performance check
    still measured); per-run copies and spread variables get no reference. ``unmeasured``,
    when given, gets each value left out because the case reported it NaN, infinite or
    none (``case @system:partition+environ var``): a reference file silently short of a
    value the run named would be judged as complete.
    """
    cases = [c for c in report.cases if c.system == system]
    if not cases:
        raise PlacementError(f"{report.path}: no test cases for system {system!r} "
                             f"(systems in this run: {', '.join(report.systems) or 'none'})")
    out: dict[str, Any] = {}
    runs: dict[str, Any] = {}  # the same tree with each judged variable's launches
    spread: dict[str, tuple[set, set, set]] = {}
    for c in cases:
        sets = spread.get(c.test)
        if sets is None:
            sets = spread[c.test] = (set(), set(), set())
        sets[0].add(c.partition)
        sets[1].add(c.environ)
        node = c.node
        if node is not None:        # a case that names no node: none
            sets[2].add(node)
    pooled = pool.Pools()
    for c in cases:
        if not c.measured:
            continue
        leaves, sample_leaves = _case_leaves(c, unmeasured)
        if not leaves:
            continue
        parts, envs, nodes = spread[c.test]
        index = case_index(c, len(parts), len(envs), len(nodes))
        keys = _in_tree(out, runs, c, index, leaves, sample_leaves)
        if cases_of is not None:
            cases_of.update({(c.test, keys, v): c for v in leaves})
        if pools:
            pooled.add(c.test, c.partition, index, keys, leaves, sample_leaves)
    if not out:
        raise PlacementError(f"{report.path}: no performance values for system {system!r} "
                             "(did the performance tests run and pass sanity?)")
    pooled.put(out, runs)
    if runs:
        out[samples.SAMPLES_KEY] = runs
    return out


def _case_leaves(c: Case, unmeasured: list[str] | None = None
                 ) -> tuple[dict[str, list], dict[str, Any]]:
    """One case's reference tuples ``[value, lower, upper, unit]`` by variable, and the
    launches kept beside them; variables with no reference a reader could use are left out
    (into ``unmeasured`` those with no number at all)."""
    leaves, sample_leaves = {}, {}
    for var in c.primary_vars():
        if var in GUARD_VARS or is_extreme(var):
            continue        # guards have fixed limits; extremes follow one outlier
        pv = c.perf[var]
        s = None if pv.value is None else c.summary(var)
        mean = None if s is None else _round(s.mean)
        if mean is None or not measurable(mean):
            # nothing measured (NaN, inf), or every run below the printing step (NPB's
            # 0.00 s): no reference to judge against, and none a reader would refuse
            if unmeasured is not None and (mean is None or not math.isfinite(mean)):
                unmeasured.append(f"{c.raw.get('display_name', c.test)} @{c.where} {var}")
            continue
        t, _ = threshold_for(c, var, s)
        if not math.isfinite(t):
            continue
        # one-sided where the direction is known: an improvement never fails (ReFrame
        # reads None as no bound); it rejects lower thresholds below -1
        better = higher_is_better(var, pv.unit)
        leaves[var] = [mean, None if better is False else -min(t, 1.0),
                       None if better else t, pv.unit]
        sl = samples.directed_leaf(c, var, better)
        if sl:
            sample_leaves[var] = sl
    return leaves, sample_leaves


def _in_tree(out: dict[str, Any], runs: dict[str, Any], c: Case, index: list[str],
           leaves: dict[str, list], sample_leaves: dict[str, Any]) -> tuple[str, ...]:
    """Put a case's leaves into the reference tree (and its launches into the samples tree)
    where ReFrame looks them up, and return the keys that lead there. Without an index the
    key is ReFrame's own ``system:partition``; with one, a ``$index`` names the parameters,
    nested in that order."""
    if not index:
        key = f"{c.system}:{c.partition}"
        out.setdefault(c.test, {}).setdefault(key, {}).update(leaves)
        if sample_leaves:
            runs.setdefault(c.test, {}).setdefault(key, {}).update(sample_leaves)
        return (key,)
    node = out.setdefault(c.test, {"$index": index})
    snode = runs.setdefault(c.test, {"$index": index}) if sample_leaves else {}
    if node.get("$index") != index:
        raise PlacementError(f"test {c.test}: cases disagree on reference_index "
                             f"({node.get('$index')} vs {index})")
    for attr in index:
        if not attr.startswith("$") and attr not in c.params:
            raise PlacementError(f"test {c.test}: reference_index names {attr!r}, "
                                 "which the run report does not record")
    keys = tuple(_yaml_key(_attr(c, a)) for a in index)
    for k in keys:
        node = node.setdefault(k, {})
        snode = snode.setdefault(k, {})
    node.update(leaves)
    snode.update(sample_leaves)
    return keys


class _NoAliasDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Writes a shared list (``$index`` under a test and under ``_samples``) out each
    time instead of as a YAML anchor and ``*id001``, which a hand-editor would not expect.
    libyaml's emitter where PyYAML has it: the same text as PyYAML's own, in a third of the
    time (a 100k-entry baseline is written in seconds, not minutes)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def session_intervals(data: dict[str, Any], where: str = "reference file") -> dict[str, Any]:
    """``data`` with every value that keeps its sessions' runs given ReFrame's reference from
    them (:func:`placement.judgement.verdict.over_sessions.reference_bound`): the sessions' mean median and a
    one-sided bound as wide as the session-to-session spread the verdict knows, at a
    level that keeps a plain ``reframe -r`` over all the file's values quiet on an
    unchanged node. Values measured under a competing load (``contended``) get no bound:
    the verdict judges them; nor do values whose check says no bound fits them
    (``no_bound``, its reason kept in the file: the OS scheduler's latencies, whose states
    lie further apart than the cap), or that one baseline session cannot bound for plain
    ReFrame while the verdict still judges them (``no_plain_bound``: a cache-sized buffer on a
    virtual machine). Nor do values whose own launches, in a stored session,
    spread wider than :data:`placement.judgement.verdict.over_sessions.REF_CAP` (an NPB class S run of
    20 ms that one time slice makes 0.16 s): the cap would fail an unchanged rerun of such
    a value; nor their siblings, the same kernel and threads in another placement or
    compiler (:func:`placement.judgement.verdict.over_sessions.state_prone`).
    The other values keep the interval of the run they came from. A partition's pooled
    entries (:mod:`.pool`) get the bound of one node's median, with a prior of
    their own: their runs spread as nodes do, not as one node's launches.
    """
    from .. import verdict
    out = copy.deepcopy(data)
    stored = samples.entries(out, where)
    if not stored:
        return out
    priors = {kind: verdict.over_sessions.file_prior([s.session_runs for s in stored.values()
                                        if bool(s.pooled) is kind]) for kind in (False, True)}
    looked_up = sum(not s.pooled for s in stored.values())    # the values ReFrame reads
    flat = entries(out)
    prone = verdict.over_sessions.state_prone({e: s.session_runs for e, s in stored.items()},
                                lambda e: sibling_family(out, e))
    for e, s in stored.items():
        leaf = flat.get(e)
        if leaf is None or len(leaf) < 3:
            continue
        # a pooled entry bounds one node's median (:mod:`.pool`), not 3 launches
        centre, bound = verdict.over_sessions.reference_bound(
            s.session_runs, s.higher_is_better, priors[bool(s.pooled)], max(1, looked_up),
            **({"launches": 1} if s.pooled else {}))
        leaf[0] = _round(centre)
        # the scheduler's arbitration under a load, or launches (its own or a sibling's)
        # already wider than the cap
        if s.contended or s.no_bound or s.no_plain_bound or bound is None or e in prone:
            leaf[1], leaf[2] = None, None
            continue
        leaf[1], leaf[2] = (-round(bound, 4), None) if s.higher_is_better else \
            (None, round(bound, 4))
    return out


def _round(x: float) -> float:
    return float(f"{x:.6g}")


#: each version of a reference file read in a :func:`read_once` scope (None outside one):
#: ``(path, mtime_ns, size, inode) -> (its data, or why it is refused)``
_ONCE: dict[tuple, tuple[dict[str, Any], str]] | None = None


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """A scope in which each version of a reference file is read and checked once, its data
    then shared by every :func:`load` of it (its readers judge against it, none changes
    it). Why: an acceptance summary reads its system's file to judge the run, again for
    each confirmation judgement, for its provenance and for each node's own lines, each
    reading seconds at 100k entries. A file written meanwhile is another version, read
    again; outside the scope every load reads the file."""
    global _ONCE
    outer = _ONCE is not None
    if not outer:
        _ONCE = {}
    try:
        yield
    finally:
        if not outer:
            _ONCE = None


def load(path: Path) -> dict[str, Any]:
    """A reference file, checked whole; missing file: empty (once per version in a
    :func:`read_once` scope).

    Read without anchors or aliases and up to a size (:mod:`placement.util.safe_yaml`);
    its values must be measurements (:func:`check_references`) and it must hold what its
    record says (:mod:`.contents`): anything else is one line, before a caller
    writes anything or ReFrame reads it. A symbolic link, FIFO or device at ``path`` is
    refused unread (:mod:`placement.util.regular_file`), a dangling link too. Reading
    writes nothing: a large file's checked copy, when its writer left one
    (:mod:`.cache`), is read instead of its YAML, and checked the same.
    """
    if _ONCE is None or not os.path.lexists(path):
        return _load(path)
    st = os.lstat(path)
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size, st.st_ino)
    if key not in _ONCE:
        try:
            _ONCE[key] = (_load(path), "")
        except PlacementError as exc:
            _ONCE[key] = ({}, str(exc))
    data, why = _ONCE[key]
    if why:
        raise PlacementError(why)
    return data


@cycles.without_cyclic_gc
def _load(path: Path) -> dict[str, Any]:
    """:func:`load`'s reading and checks, each time it is called."""
    if not os.path.lexists(path):
        return {}
    text = regular_file.read_text(Path(path), "reference file", safe_yaml.MAX_BYTES)
    data = cache.read(Path(path), text)    # written with the file, of this text
    if data is None:
        data = safe_yaml.loads(text, str(path), "reference file")
    return _checked(data, str(path))


def _checked(data: Any, where: str) -> dict[str, Any]:
    """``data``, read from the reference file ``where``, once every check of :func:`load`
    has passed; the first that fails is one line."""
    if data is None:        # never written so: a file cut before its first key
        raise PlacementError(f"{where}: holds no reference entries (empty, or cut short); "
                             f"{contents.restore_hint(where, 'remove it')}; "
                             "nothing was written")
    if not isinstance(data, dict):
        raise PlacementError(f"{where}: a reference file must be a mapping of test names")
    shape.check(data, where)      # before any walk over it: one line, no traceback
    stored = samples.entries(data, where)  # malformed runs: error, nothing written
    control = data.get(samples.CONTROL_KEY)
    if control is not None and (not isinstance(control, str) or parse_entry(control) is None):
        raise PlacementError(f"{where}: {samples.CONTROL_KEY} {short(control)} is not "
                             "a value Test[index values].var; set it with `placement baseline "
                             "control`, or remove the line; nothing was written")
    check_references(data, where)
    contents.check(data, where, stored)
    return data


def refusal(path: Path) -> str:
    """Why the reference file ``path`` is refused (:func:`load`), ``""`` when it is read or
    absent; read once per version of the file (each case of a run asks)."""
    try:
        st = os.lstat(path)     # a link is refused, never read through
    except OSError:
        return ""
    return _refusal(str(path), st.st_mtime_ns, st.st_size, st.st_mode, st.st_ino)


@functools.lru_cache(maxsize=8)
def _refusal(path: str, _mtime_ns: int, _size: int, _mode: int, _ino: int) -> str:
    try:
        load(Path(path))
    except PlacementError as exc:
        return str(exc)
    return ""


def version(path: Path) -> str:
    """The reference file's version as a run names it (``sha256:<12 hex>`` of its bytes),
    ``""`` when there is none or it cannot be read: ReFrame's bounds and the verdict of one
    run must come from one version (a ``record --add`` during the run makes another)."""
    try:
        st = os.lstat(path)
    except OSError:
        return ""
    return _version(str(path), st.st_mtime_ns, st.st_size, st.st_ino)


@functools.lru_cache(maxsize=8)
def _version(path: str, _mtime_ns: int, _size: int, _ino: int) -> str:
    import hashlib
    try:
        raw = regular_file.read_bytes(Path(path), "reference file", safe_yaml.MAX_BYTES)
    except PlacementError:
        return ""
    return "sha256:" + hashlib.sha256(raw).hexdigest()[:12]


def foreign(data: dict[str, Any], system: str, where: str) -> str:
    """A line when the file says it was recorded for another system (a copied file), else ``""``."""
    prov = data.get(PROVENANCE_KEY)
    recorded = prov.get("system") if isinstance(prov, dict) else None
    if recorded is None or str(recorded) == system.split(":")[0]:
        return ""
    host = prov.get("host")
    return (f"{where} was recorded for system {short(recorded)}"
            + (f" on host {short(host)}" if host else "") + f", not {system.split(':')[0]!r}: "
            "its values describe another machine")


def check_references(data: dict[str, Any], where: str) -> None:
    """Every reference leaf ``[value, lower, upper, unit]`` holds a value a measurement can
    be and bounds that leave it an interval; a hand edit that does not is one line naming
    the entry, nothing written. ReFrame would take NaN, 5e-324 or a lower bound above the
    upper one, and count every run against it as a failed reference."""
    accepted = (f"expected [value (a positive measurement, {MEASURABLE[0]:g} to "
                f"{MEASURABLE[1]:g}), lower (a fraction from -1 to 0, or null), upper (a "
                f"fraction from 0 to {MAX_UPPER:g}, or null), unit]")
    for e, leaf in entries(data).items():
        name = cut(entry_name(e))
        if len(leaf) < 3 or not measurable(leaf[0]):
            v = leaf[0] if len(leaf) >= 3 else None
            positive = isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
            what = "is not a value a measurement can be" if positive else \
                "is not a positive number"
            raise PlacementError(f"{where}: {name}: reference {short(leaf)} {what}; "
                                 f"{accepted}; fix it or record again, nothing was written")
        why = _bounds_problem(*leaf[1:3])
        if why:
            raise PlacementError(f"{where}: {name}: bounds {short(leaf[1:3])} {why}; "
                                 f"{accepted}; nothing was written")


def _number(x: Any) -> bool:
    """A finite number a float holds (a 400-digit integer is none: it overflows)."""
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and abs(x) <= sys.float_info.max)       # False for NaN and infinities too


def _bounds_problem(lower: Any, upper: Any) -> str:
    """Why ``lower``/``upper`` (fractions of the value, None: no bound) leave no interval a
    measurement can fall in or miss, ``""`` when they do."""
    if not all(b is None or _number(b) for b in (lower, upper)):
        return "are not numbers"
    if lower is not None and upper is not None and lower > upper:
        return "put the lower bound above the upper one"
    if lower is not None and not -1 <= lower <= 0:
        return "put the lower bound " + ("above the value" if lower > 0 else "below zero")
    if upper is not None and not 0 <= upper <= MAX_UPPER:
        return ("put the upper bound below the value" if upper < 0 else
                f"put the upper bound beyond x{1 + MAX_UPPER:g} the value (null is no bound)")
    if lower == 0 and upper == 0:
        return "leave an interval of one point, which no measurement lands on"
    return ""


def check_units(old: dict[str, Any], new: dict[str, Any], where: str) -> None:
    """A reference whose unit is not the one the check reports is one line: a hand edit
    from ``GB/s`` to ``MB/s`` would otherwise read as a change of x1000."""
    for e, (was, unit) in sorted(unit_mismatches(old, new).items(), key=_sortkey):
        raise PlacementError(
            f"{where}: {cut(entry_name(e))}: the reference is in "
            f"{short(was)} but the check reports {unit!r}; give the value in {unit!r} (or "
            "record it again with --replace); nothing was written")


def merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``old`` updated with ``new``: recorded cases replace theirs, others are kept.

    A test whose ``$index`` changed is replaced whole (old entries would no
    longer be found by ReFrame).
    """
    out = copy.deepcopy({k: v for k, v in old.items() if k != PROVENANCE_KEY})
    _merge_tests(out, new)
    key = samples.SAMPLES_KEY
    fresh = new.get(key) if isinstance(new.get(key), dict) else {}
    runs = out.setdefault(key, {})
    for test in new:  # a test recorded again without runs keeps no stale ones
        if not str(test).startswith("_") and test not in fresh:
            runs.pop(test, None)
    _merge_tests(runs, fresh)
    if not runs:
        del out[key]
    return out


def _merge_tests(out: dict[str, Any], new: dict[str, Any]) -> None:
    for test, node in new.items():
        if test == samples.SAMPLES_KEY:
            continue
        if test not in out or index_of(out, test) != index_of(new, test):
            out[test] = copy.deepcopy(node)
            continue
        _deep_update(out[test], node)


def _deep_update(dst: dict, src: dict) -> None:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict) and "higher_is_better" not in v:
            _deep_update(dst[k], v)
        else:
            dst[k] = v


@dataclass
class Diff:
    added: dict[Entry, list]
    removed: dict[Entry, list]
    changed: dict[Entry, tuple[list, list]]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def lines(self, index: dict[str, list[str]]) -> list[str]:
        def name(e: Entry) -> str:
            """Each index value after its ``$index`` name; one with none (a test without
            ``$index``: its system:partition) bare, so the name reads back as the entry
            (:func:`placement.judgement.verdict.intervals.read_entry`) instead of
            ``Test[].var``."""
            test, keys, var = e
            names = index.get(test, [])
            attrs = ",".join(f"{names[i]}={k}" if i < len(names) else str(k)
                             for i, k in enumerate(keys))
            return f"{test}[{attrs}].{var}"

        def val(v: list) -> str:
            unit = f" {v[3]}" if len(v) > 3 and v[3] else ""
            if len(v) < 3:
                return str(v)
            lo, hi = (("none" if b is None else f"{b:+g}") for b in v[1:3])
            return f"{v[0]}{unit} ({lo}/{hi})"

        out = [f"+ {name(e)}: {val(v)}" for e, v in sorted(self.added.items(), key=_sortkey)]
        for e, (a, b) in sorted(self.changed.items(), key=_sortkey):
            pct = f" ({(b[0] - a[0]) / a[0] * 100:+.1f}%)" if a and a[0] else ""
            out.append(f"~ {name(e)}: {val(a)} -> {val(b)}{pct}")
        out += [f"- {name(e)}: {val(v)}" for e, v in sorted(self.removed.items(), key=_sortkey)]
        return out


def _sortkey(item: tuple) -> tuple:
    test, keys, var = item[0]
    return (test, tuple(str(k) for k in keys), var)


def diff(old: dict[str, Any], new: dict[str, Any]) -> Diff:
    a, b = entries(old), entries(new)
    return Diff(added={e: v for e, v in b.items() if e not in a},
                removed={e: v for e, v in a.items() if e not in b},
                changed={e: (a[e], b[e]) for e in a.keys() & b.keys() if a[e] != b[e]})


def provenance(report: RunReport, system: str, thresholds: dict[str, int]) -> dict[str, Any]:
    """Where a recorded file's numbers come from, stored under ``_provenance``."""
    s = report.session
    return {
        "system": system,
        "host": s.get("hostname"),
        "recorded": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "run_session": s.get("uuid"),
        **({"run_parts": s["parts"]} if s.get("parts") else {}),
        "run_started": s.get("time_start"),
        "run_report": str(report.path),
        "reframe_version": s.get("version"),
        "cmdline": s.get("cmdline"),
        "git_commit": git_commit(),
        "thresholds": ("one-sided (improvements never fail): values with stored sessions "
                       "get the prediction bound of their sessions' spread (at most x2), "
                       f"others max({CV_FACTOR:g}*CV, {MIN_THRESHOLD:.0%}) where the run has "
                       f"repeats, else {DEFAULT_THRESHOLD:.0%}"),
        "threshold_sources": thresholds,
    }


def git_commit(cwd: Path | None = None) -> str | None:
    """HEAD of the checkout (``+dirty`` with local changes), None outside git."""
    from ...util import repo_root
    cwd = cwd or repo_root()
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                              text=True, timeout=10)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=cwd, capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


@cycles.without_cyclic_gc
def write_atomic(path: Path, data: dict[str, Any], header: str = "") -> Path | None:
    """Write YAML through a temporary file and a rename; keep the old file as ``.prev``.

    Returns the path of the kept previous version, if any. A crash leaves
    either the old or the new file, never a half-written one. The file's counts
    (:mod:`.contents`) and its control value come first, the runs last, so a
    copy cut short loses runs, never its record of them. The old file becomes ``.prev``
    only when it reads whole: a damaged file never replaces the last intact copy.
    """
    data = contents.stamped(_ordered(data), str(path))
    text = header + yaml.dump(data, Dumper=_NoAliasDumper, sort_keys=False,
                              default_flow_style=None, width=100)
    # what we write must read back the same, whole, and pass what load checks
    check = _checked(safe_yaml.loads(text, str(path)), str(path))
    if check != data:
        raise PlacementError(f"{path}: internal error, YAML does not round-trip; nothing written")
    prev = None
    if os.path.lexists(path):
        _writable(path)
        load(path)                       # damaged: one line, .prev and the file kept as they are
        prev = path.with_name(path.name + ".prev")
        # whole or untouched (a torn backup would lose entries), as private as the file
        atomic.copy_text(path, prev, "reference file", safe_yaml.MAX_BYTES)
    atomic.write_text(path, text)
    cache.write(path, text, check)      # its readers then never parse or write
    return prev


def _writable(path: Path) -> None:
    """Refuses a reference file with no write permission for anyone: a site that made it
    read-only meant to keep it, and a rename would replace it all the same (as root, or by
    whoever may write the folder)."""
    st = os.stat(path) if os.path.exists(path) else None
    if st is not None and not st.st_mode & 0o222:
        raise PlacementError(f"{path} is read-only (mode {stat.S_IMODE(st.st_mode):04o}): make "
                             "it writable (chmod u+w) to change it; nothing was written")


def _ordered(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its provenance and control value first and its runs last."""
    head = (PROVENANCE_KEY, samples.CONTROL_KEY)
    tail = (samples.SAMPLES_KEY,)
    return {**{k: data[k] for k in head if k in data},
            **{k: v for k, v in data.items() if k not in head + tail},
            **{k: data[k] for k in tail if k in data}}


def thresholds_used(report: RunReport, system: str) -> dict[str, int]:
    """How many entries got each kind of threshold (for the provenance)."""
    counts: dict[str, int] = {}
    for c in report.cases:
        if c.system != system:
            continue
        for var in c.primary_vars():
            _, why = threshold_for(c, var)
            why = "max(3*CV, 5%)" if why.startswith("max") else why
            counts[why] = counts.get(why, 0) + 1
    return counts
