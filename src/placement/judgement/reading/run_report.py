"""Reading ReFrame run reports into flat test cases, the one input of reports and baselines.

A run report (``results/runs/run-report-<session>.json``, optionally gzipped
with ``--compress-report``) lists, per run (retries and ``--reruns`` add
runs), its test cases; each holds the test's parameters and loggable variables
as top-level keys and ``perfvalues`` as ``{"sys:part:var": [value, ref,
lower, upper, unit, result]}``. Everything else reads :class:`Case` objects,
so a change in ReFrame's format is absorbed here.

A family test's case (the node-health family run as one job per node) is read as its
members' cases, as they would be had each run as a job of its own
(:mod:`placement.judgement.reading.family`).

Per-launch values (the verdict's samples: one value per whole run of the
program) come from a test variable ``perf_launches`` (``{var: [values]}``),
else from the same case appearing several times (``--reruns``), else from the
case's one value.

Per-run values (for confidence intervals and boxplots) come from, in order:
a test variable ``perf_samples`` (``{var: [values]}``), perfvars named
``<var>_run<N>`` / ``<var>_rep<N>``, or the same case appearing several times
(``--reruns``, ``--repeat``).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...util import PlacementError, once, one_line, regular_file
from . import family, session_info
from .summary import Summary, number, summarize

#: The ReFrame session extra (``--session-extras acceptance=confirmation``) that marks a
#: confirmation session (:mod:`placement.acceptance.confirmation`) in the results storage: a
#: later run's "previous run" is a whole run, never a rerun of a few of its checks
#: (:func:`placement.report.previous_run.previous_session`)
CONFIRMATION_EXTRA = ("acceptance", "confirmation")

#: Attributes that identify a case when its test declares no ``reference_index``
#: and that the tables know how to lay out.
KNOWN_PARAMS = ("benchmark", "npb_class", "num_threads", "affinity", "policy", "binder",
                "mode", "block_size", "block_kb", "compiler", "src_node", "dst_node",
                "operation", "kernel", "message_size")

#: The most a run report may hold, expanded: ReFrame writes about 1 kB a value, so this is
#: some 500,000 values, five times the largest session a partition's acceptance run makes
#: (a 5 MB gzip file of zeros holding 5 GiB is refused as it expands, not after)
MAX_REPORT_BYTES = 512 * 2**20

#: a parameter in a test's display name: ``%name=value``
_PARAM = re.compile(r"%([\w.]+)=(\S+)")
_SAMPLE_VAR = re.compile(r"^(?P<base>.+?)_(?:run|rep)(?P<i>\d+)$")
#: Perfvars that describe another's spread, never references of their own.
_SPREAD_VAR = re.compile(r"(^|_)(stddev|std|sd|cv|ci|min|max|n|nrep|repeats)$")


@functools.lru_cache(maxsize=4096)
def is_primary_var(name: str) -> bool:
    """A perfvar that is a measurement of its own, not a per-run copy or another's spread
    (kept per name: a report asks it of every value of ten thousand stored sessions, which
    name a few dozen)."""
    return not _SAMPLE_VAR.match(name) and not _SPREAD_VAR.search(name)


@dataclass(frozen=True)
class PerfValue:
    """One performance variable of one case, as ReFrame evaluated it."""

    value: float | None
    ref: float | None
    lower: float | None
    upper: float | None
    unit: str | None
    result: str | None  # pass, fail, xfail, xpass or None (no reference)


@dataclass
class Case:
    """One test case (test x parameters x system:partition x environment) of a run."""

    test: str
    params: dict[str, Any]
    system: str
    partition: str
    environ: str
    result: str
    fail_phase: str | None
    perf: dict[str, PerfValue]
    samples: dict[str, list[float]] = field(default_factory=dict)
    #: one value per launch of the program (never iterations inside one launch)
    launches: dict[str, list[float]] = field(default_factory=dict)
    index: list[str] = field(default_factory=list)
    session: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def sysenv(self) -> str:
        return f"{self.system}:{self.partition}+{self.environ}"

    @property
    def measured(self) -> bool:
        """Whether the case has values: it passed, or failed only against a reference (its
        values outside ReFrame's interval are still what the node measured)."""
        return self.result == "pass" or self.fail_phase == "performance"

    @property
    def node(self) -> str | None:
        """The node the case was pinned to (``--distribute``, the node-health family), else
        None: :func:`node_named`, read once with the case."""
        return self.params.get("node")

    @property
    def where(self) -> str:
        """:attr:`sysenv`, with the node of a case pinned to one (``--distribute``): what a
        report's per-system tables are keyed by, so one node's numbers never hide another's."""
        return f"{self.sysenv} node {self.node}" if self.node else self.sysenv

    @once
    def key(self) -> tuple:
        """Identity across runs: same test, parameters, system, partition and environment
        (taken once: a case's identity is never changed once read, and merging reruns, the
        step table and the baselines each ask it)."""
        return (self.test, tuple(sorted((k, str(v)) for k, v in self.params.items())),
                self.system, self.partition, self.environ)

    def label(self, skip: Iterable[str] = (), default: str | None = None) -> str:
        """``k=v`` for each parameter not skipped; none left: ``default``, else the test name."""
        skip = set(skip)
        text = " ".join(f"{k}={v}" for k, v in self.params.items() if k not in skip)
        return text or (self.test if default is None else default)

    def primary_vars(self) -> list[str]:
        """Perfvars that are measurements of their own (not per-run copies or spreads)."""
        return [v for v in self.perf if is_primary_var(v)]

    def summary(self, var: str) -> Summary | None:
        """Mean with spread of ``var``: from per-run values, else from exposed sd and n."""
        if var in self.samples and self.samples[var]:
            s = summarize(self.samples[var])
            return s if s.n > 1 or var not in self.perf else Summary(self.perf[var].value)
        pv = self.perf.get(var)
        if pv is None or pv.value is None:
            return None
        sd = _first(self.perf, (f"{var}_stddev", f"{var}_sd", "stddev"))
        if sd is None:          # no spread exposed: the value alone, whatever its count
            return Summary(pv.value)
        n = _first(self.perf, (f"{var}_n", "nrep", "repeats", "n"))
        n = n or _int(self.raw.get("repeats") or self.raw.get("num_repeats"))
        if sd is not None and n and n > 1:
            return Summary(pv.value, sd, int(n))
        return Summary(pv.value)


def _first(perf: dict[str, PerfValue], names: Sequence[str]) -> float | None:
    for n in names:
        if n in perf and perf[n].value is not None:
            return perf[n].value
    return None


def _int(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None


@dataclass
class RunReport:
    """A loaded run report: its session information and its non-fixture cases."""

    path: Path
    session: dict[str, Any]
    cases: list[Case]

    @property
    def uuid(self) -> str:
        return self.session.get("uuid", "")

    @property
    def systems(self) -> list[str]:
        return sorted({c.system for c in self.cases})


def load(path: str | Path) -> RunReport:
    """Read a run report; anything unreadable is a :class:`PlacementError` naming the file."""
    return from_data(read(path), Path(path))


def read(path: str | Path) -> dict[str, Any]:
    """A run report's JSON as ReFrame wrote it (fixtures included; plain or gzip).

    Unreadable, or without ``session_info`` and ``runs``: a :class:`PlacementError`.
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise PlacementError(f"run report {str(path)!r} not found")
    raw = regular_file.read_bytes(path, "run report", MAX_REPORT_BYTES)
    if raw[:2] == b"\x1f\x8b":     # bounded by what it expands to, not by its own size
        raw = regular_file.gunzip(raw, path, "run report", MAX_REPORT_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PlacementError(f"{path}: not a ReFrame run report (not UTF-8 text, byte "
                             f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise PlacementError(f"{path}: not a ReFrame run report (unreadable JSON: {exc.msg} "
                             f"at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise PlacementError(f"{path}: not a ReFrame run report (JSON nested deeper than "
                             "any run report)") from None
    if not isinstance(data, dict) or "session_info" not in data or "runs" not in data:
        raise PlacementError(f"{path}: not a ReFrame run report (no session_info/runs)")
    return data


def from_data(data: dict[str, Any], path: Path) -> RunReport:
    """A run report already parsed from JSON (a file, or a session ReFrame's storage describes)."""
    session, runs = data["session_info"], data["runs"]
    if not (isinstance(session, dict) and isinstance(runs, list)
            and all(isinstance(r, dict) and isinstance(r.get("testcases", []), list)
                    and all(isinstance(tc, dict) for tc in r.get("testcases", [])) for r in runs)):
        raise PlacementError(f"{path}: not a ReFrame run report (expected session_info an "
                             "object, runs a list of runs, each with a list of testcases)")
    session_info.check(session, str(path))   # before any of it reaches a query
    cases: list[Case] = []
    for run in runs:
        for tc in run.get("testcases", []):
            if tc.get("fixture"):
                continue
            try:        # a family test's case: its members' cases (reading.family)
                cases.extend(_case(m, session.get("uuid", "")) for m in family.expand(tc))
            except (KeyError, TypeError, ValueError) as exc:
                shown = repr(tc.get("name", "?"))
                shown = shown if len(shown) <= 80 else shown[:77] + "..."
                raise PlacementError(f"{path}: malformed test case {shown}: {exc}") from None
    return RunReport(path, session, _merge_reruns(cases))


#: the longest system, partition, environment or test name a run report may carry
MAX_NAME = 256


def is_name(v: Any) -> bool:
    """Whether ``v`` may go into one-line outputs and file names: a string of 1 to
    :data:`MAX_NAME` characters without a control character (a line break in a partition's
    name would put a forged line under the summary's)."""
    return isinstance(v, str) and 0 < len(v) <= MAX_NAME and not one_line.has_control(v)


def _whole_number(params: dict[str, Any], key: str) -> None:
    """A parameter the tables count by (threads per case) must be a whole number, as
    ReFrame writes it: ``'abc'`` or ``null`` there stopped the report with a traceback."""
    v = params.get(key, 0)
    if type(v) is bool or not re.fullmatch(r"\d{1,9}", str(v)):
        shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
        raise ValueError(f"its {key} {shown} is not a whole number")


def _name(tc: dict[str, Any], field: str) -> str:
    """A name the case carries into one-line outputs and file names, checked
    (:func:`is_name`)."""
    if field not in tc:
        raise ValueError(f"it has no {field} (ReFrame writes name, system, partition and "
                         "environ for every test case)")
    v = tc[field]
    if not is_name(v):
        shown = repr(v) if len(repr(v)) <= 80 else repr(v)[:77] + "..."
        raise ValueError(f"its {field} {shown} is not a name (a string of 1 to {MAX_NAME} "
                         "characters without control characters)")
    return v


def _case(tc: dict[str, Any], session: str) -> Case:
    name = _name(tc, "name")
    for part in ("system", "partition", "environ"):
        _name(tc, part)
    test = name.split()[0]
    params: dict[str, Any] = {}
    shown = tc.get("display_name", name)
    for k, v in (_display_params(shown) if type(shown) is str else _PARAM.findall(shown)):
        params[k] = tc.get(k, v)
    _node_param(params, tc)
    index = list(tc.get("reference_index") or [])
    for keys in (index, KNOWN_PARAMS):
        for k in keys:
            if k in tc and tc[k] is not None and not isinstance(tc[k], (dict, list)):
                params.setdefault(k, tc[k])
    _whole_number(params, "num_threads")
    perf: dict[str, PerfValue] = {}
    prefix = f"{tc['system']}:{tc['partition']}:"
    given = tc.get("perfvalues") or {}
    if not isinstance(given, dict):
        raise ValueError("its perfvalues are not an object of name: [value, reference, "
                         "lower, upper, unit, result]")
    for key, tup in given.items():
        var = key[len(prefix):] if key.startswith(prefix) else key.rsplit(":", 1)[-1]
        if type(tup) is list and len(tup) == 6:     # as ReFrame writes them
            value, ref, lower, upper, unit, result = tup
        else:
            value, ref, lower, upper, unit, result = (list(tup) + [None] * 6)[:6]
        perf[var] = PerfValue(_number(value), _number(ref), _number(lower), _number(upper),
                              unit, result)
    samples: dict[str, list[float]] = {}
    given = tc.get("perf_samples")
    if isinstance(given, dict):
        samples = {k: list(map(float, v)) for k, v in given.items() if isinstance(v, list)}
    launches: dict[str, list[float]] = {}
    given = tc.get("perf_launches")
    if isinstance(given, dict):
        launches = {k: list(map(float, v)) for k, v in given.items() if isinstance(v, list)}
    per_run: dict[str, list[tuple[int, float]]] = {}
    for var, pv in perf.items():
        if pv.value is None:
            continue
        m = _sample_var(var)
        if m:
            per_run.setdefault(m[0], []).append((m[1], pv.value))
        elif var not in launches:
            launches[var] = [pv.value]
    for base, vals in per_run.items():
        samples.setdefault(base, [v for _, v in sorted(vals)])
    return Case(test=test, params=params, system=tc["system"], partition=tc["partition"],
                environ=tc["environ"], result=tc.get("result") or "", fail_phase=tc.get("fail_phase"),
                perf=perf, samples=samples, launches=launches, index=index, session=session, raw=tc)


@functools.lru_cache(maxsize=4096)
def _display_params(shown: str) -> list[tuple[str, str]]:
    """The ``%name=value`` pairs of a display name (kept per name: ten thousand stored
    sessions repeat a few dozen cases' names; the caller only reads the list)."""
    return _PARAM.findall(shown)


@functools.lru_cache(maxsize=4096)
def _sample_var(var: str) -> tuple[str, int] | None:
    """A per-run copy's value name and run number (``gbps_run3``: gbps, 3), else None."""
    m = _SAMPLE_VAR.match(var)
    return (m.group("base"), int(m.group("i"))) if m else None


def _number(x: Any) -> float | None:
    """:func:`.stats.number`, a float returned as it is without a call (a run report's
    values nearly all are); an infinite one is NaN, a value not measured, as a NaN one is
    (JSON's ``Infinity``: a time of 0 makes a rate infinite)."""
    x = x if type(x) is float else number(x)
    return x if x is None or math.isfinite(x) else math.nan


#: the parameters that say where a case ran, never what it measured: the node-health
#: family's ``node``, ReFrame's ``--distribute`` ``.nid`` and ``.part`` (the partition again)
NODE_PARAMS = ("node", ".nid", ".part", "$nid")

#: what a scheduler writes where a case ran no job on a node (a build, a skipped case):
#: ReFrame's run report keeps it as a string, and it is never a node's name
_NOT_NODES = frozenset({"", "none", "null", "nil", "(null)", "n/a"})
_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@:\[\]-]{0,252}")


def _node_param(params: dict[str, Any], tc: dict[str, Any]) -> None:
    """The node a case was pinned to as its parameter ``node`` (part of its identity), read
    by :func:`node_named`; ReFrame's ``.nid`` and ``.part`` leave the parameters. A case of
    one node's run says no node (its key is unchanged, and so are its stored baselines)."""
    params.pop(".part", None)
    node = node_named(tc, params.pop(".nid", None))
    if node:
        params["node"] = node


def node_named(tc: dict[str, Any], nid: Any = None) -> str:
    """The one node a ReFrame run-report case (a raw dict) was pinned to: the ``node`` the
    node-health family logs, else ``--distribute``'s ``.nid`` (``nid`` when the caller has
    it, else read from the display name); "" when it does not say.

    This is the one reading of a case's node: :attr:`Case.node` holds what it gave when the
    case was read, and readers of the raw report (the node's load) call it. The job's node
    list is never read: a case of a plain run ran on whichever node the scheduler chose (no
    value of it was measured on two nodes), and a case that ran no job says ``['None']``.
    A name a scheduler could not have given (blank, a control character, ``None``) is none.
    """
    if nid is None:
        shown = tc.get("display_name", tc.get("name", ""))
        nid = dict(_display_params(shown)).get(".nid") if type(shown) is str else None
    for node in (tc.get("node"), nid):
        if isinstance(node, list) and len(node) == 1:
            node = node[0]
        if (isinstance(node, str) and node.strip().lower() not in _NOT_NODES
                and _NODE_NAME.fullmatch(node)):
            return node
    return ""


def _merge_reruns(cases: list[Case]) -> list[Case]:
    """One case per identity; repeated appearances become per-run samples.

    A retried case (same identity, a later run) replaces a failed attempt.
    """
    by_key: dict[tuple, list[Case]] = {}
    for c in cases:
        by_key.setdefault(c.key, []).append(c)
    merged = []
    for group in by_key.values():
        if len(group) == 1:         # nearly every case: nothing to merge
            merged.append(group[0])
            continue
        ok = [c for c in group if c.result == "pass"] or group
        head = ok[-1]
        if len(ok) > 1:
            for var in head.primary_vars():
                if var not in head.samples:
                    vals = [c.perf[var].value for c in ok
                            if var in c.perf and c.perf[var].value is not None]
                    if len(vals) > 1:
                        head.samples[var] = vals
        # every launch that measured counts, also one outside ReFrame's interval
        measured = [c for c in group if c.measured]
        if len(measured) > 1:
            for var in head.launches:
                head.launches[var] = [x for c in measured for x in c.launches.get(var, [])]
        merged.append(head)
    return merged


#: a run report with its session's start: (start, file name, path)
_Dated = tuple[_dt.datetime, str, Path]


def latest(runs_dir: str | Path, system: str | None = None) -> Path:
    """The run report in ``runs_dir`` whose session started last (of ``system``, if given).

    Chosen by the session's own recorded start, never by file modification time: a
    copied file or a clock set back would otherwise pick an older run. Reports that
    cannot be read, or say no start, are passed over with a line each; a clock that
    went backwards is said in one line.
    """
    runs_dir = Path(runs_dir)
    found = sorted(list(runs_dir.glob("run-report-*.json")) +
                   list(runs_dir.glob("run-report-*.json.gz")))
    dated: list[_Dated] = []
    for p in found:
        when, why = _session_start(p, system)
        if why:
            print(f"placement: skipped {why}", file=sys.stderr)
        elif when is not None:
            dated.append((when, p.name, p))
    if not dated:
        of = f" of system {system!r}" if system else ""
        raise PlacementError(f"no run reports{of} in {str(runs_dir)!r}: it reads files named "
                             "run-report-*.json or run-report-*.json.gz there (run the suite "
                             "first, e.g. make run, or give --run FILE for a report named "
                             "otherwise)")
    newest = max(dated)
    for line in _clock_notes(newest, dated):
        print(f"placement: {line}", file=sys.stderr)
    return newest[2]


def _session_start(path: Path, system: str | None) -> tuple[_dt.datetime | None, str]:
    """A report's session start and why it cannot be chosen ("" when it can; no start and
    no reason: another system's run)."""
    # an empty file is a run that could not write its report (a full disk); the path itself
    # is looked at: a link (dangling, or to a FIFO or device) is refused by the reader below
    try:
        st = os.lstat(path)
    except OSError as exc:
        return None, f"the run report {path}: {exc.strerror}"
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        return None, f"the empty run report {path} (its run could not write it)"
    try:
        data = read(path)       # the session and the systems only: the chosen one is loaded
        session = data["session_info"]
        if not isinstance(session, dict) or not isinstance(data["runs"], list):
            raise PlacementError(f"{path}: not a ReFrame run report (expected session_info an "
                                 "object, runs a list)")
        session_info.check(session, str(path))
        when = session_info.started(session)
    except PlacementError as exc:
        return None, f"the run report {path}: {str(exc).removeprefix(f'{path}: ')}"
    if when is None:
        return None, f"the run report {path}: its session_info has no time_start"
    if system and system not in _systems(data["runs"]):
        return None, ""
    return when, ""


def _systems(runs: list[Any]) -> set[str]:
    """The systems a report's test cases ran on (fixtures not counted)."""
    cases = [tc for r in runs if isinstance(r, dict) and isinstance(r.get("testcases"), list)
             for tc in r["testcases"]]
    return {tc.get("system") for tc in cases if isinstance(tc, dict) and not tc.get("fixture")}


def _clock_notes(newest: _Dated, dated: list[_Dated]) -> list[str]:
    """One line when the clock went backwards: the file written last holds an earlier
    session than the chosen one, or the chosen session started in this clock's future."""
    notes = []
    last_written = max(dated, key=lambda d: d[2].stat().st_mtime)
    if last_written[0] < newest[0]:
        notes.append(f"the clock went backwards: {last_written[2].name} was written last but "
                     f"its session started {last_written[0]:%Y-%m-%d %H:%M:%S %z}, before "
                     f"{newest[2].name}'s ({newest[0]:%Y-%m-%d %H:%M:%S %z}); the latest run "
                     f"is {newest[2].name}, by session time (a clock set back, or a copied file)")
    now = _dt.datetime.now(_dt.timezone.utc)
    if newest[0] > now + _dt.timedelta(minutes=5):
        notes.append(f"{newest[2].name} started {newest[0]:%Y-%m-%d %H:%M:%S %z}, after this "
                     f"machine's clock ({now:%Y-%m-%d %H:%M:%S %z}): the clock was set back "
                     "since, or that machine's clock was ahead")
    return notes


def results_dir() -> Path:
    """Where ReFrame writes results: ``$PLACEMENT_RESULTS`` or ``results/`` in the checkout."""
    from ...util import paths, repo_root
    return paths.env_path("PLACEMENT_RESULTS") or repo_root() / "results"


def expand(spec: str, system: str | None = None) -> list[Path]:
    """A ``--from``/``--run`` argument as run report paths.

    ``latest`` (the run in results/runs that started last, of ``system`` when given: see
    :func:`latest`), a run report, or a ``.run`` list that
    ``scripts/acceptance.sh`` writes for one acceptance run (every part of a run a
    time box cut and ``--resume`` finished; one path per line).
    """
    if spec == "latest":
        return [latest(results_dir() / "runs", system)]
    path = Path(spec)
    if path.suffix != ".run":
        return [path]
    if not os.path.lexists(path):
        raise PlacementError(f"run list {spec!r} not found")
    parts = run_list(path)
    if not parts:
        raise PlacementError(f"{spec}: an empty run list (expected one run report path per line)")
    return parts


def distinct(paths: Iterable[Path]) -> list[Path]:
    """``paths`` in their order, a file given again (by another path too) left out: one
    run report given twice is one part of a run, not two (it read ``parts=2``)."""
    seen: set[str] = set()
    out = []
    for p in paths:
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(Path(p))
    return out


def run_list(path: Path) -> list[Path]:
    """The run reports a ``.run`` list names, relative to its folder.

    acceptance.sh writes names relative to the runs folder, so a moved results
    folder or checkout keeps its lists; an absolute path of an older list that no
    longer exists is looked for there by its file name.
    """
    out = []
    text = regular_file.read_text(path, "run list", 2**20)
    if text.lstrip().startswith(("{", "[")):     # JSON: a run report given for its list
        raise PlacementError(f"{path}: a JSON file, not a run list (one run report's path "
                             "a line, as acceptance.sh writes it in results/runs/*.run)")
    for line in text.splitlines():
        p = Path(line.strip())
        if not line.strip():
            continue
        if not p.is_absolute():
            p = path.parent / p
        elif not p.exists() and (path.parent / p.name).exists():
            p = path.parent / p.name
        out.append(p)
    return out


def pool(reports: list[RunReport]) -> RunReport:
    """The parts of one run as one report; a case run again replaces its aborted attempt."""
    if len(reports) == 1:
        return reports[0]
    last = reports[-1]
    session = {**last.session, "parts": [r.uuid for r in reports]}
    return RunReport(last.path, session, _merge_reruns([c for r in reports for c in r.cases]))
