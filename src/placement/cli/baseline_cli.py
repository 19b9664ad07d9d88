"""``placement baseline record|diff|control``: a system's reference file from a run, what
would change, and the site's control value.

``record`` merges the run's measured values into ``config/baselines/<system>.yaml``
(``PLACEMENT_BASELINES`` moves the folder): cases in the run replace theirs,
others stay (``--replace`` starts from scratch). Each judged variable's
launches are stored as one session; ``--add`` keeps the sessions already
stored and adds the run's (the newest ``--keep`` stay), and several
``--from`` record several sessions at once, so the verdict can judge a new
session against the spread between sessions. The previous file is kept as
``<system>.yaml.prev`` (itself written whole or not at all); each write is a
temporary file and a rename, and two records of one system at once take turns
(a lock on ``.<system>.yaml.lock``). ``control`` names the value whose change is the
node's shift (a fixed control case, like a reference build), under the same lock.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..judgement import baselines, entry_name, fraction_arg, parse_entry, reading, verdict
from ..util import PlacementError, atomic

HEADER = ("# ReFrame reference file ($ref), written by `placement baseline record`.\n"
          "# Leaves: perfvar: [value, lower, upper, unit]; lower/upper are fractions of value.\n"
          "# _samples: each judged variable's runs (one per launch), for the verdict.\n")


def _verdicts(path: Path, old: dict, report: reading.run_report.RunReport, system: str,
              args: argparse.Namespace, detail: bool) -> list[str]:
    """The run judged against the stored runs: a summary line, then the cases worth a look."""
    if not old:
        return []
    new = baselines.store.from_run(report, system)
    judged = baselines.samples.judge_entries(old, new, str(path), args.min_effect)
    if not judged:
        return [f"verdict: no variable of this run has stored runs in {path}"]
    out = [f"verdict against {path} ({len(judged)} values, each session one draw, "
           f"Benjamini-Hochberg at {verdict.over_sessions.ALPHA:g}, minimum effect {args.min_effect:.0%}): "
           f"{baselines.samples.summary(judged)}"]
    out += baselines.samples.context_lines(judged)
    if detail:
        for j in judged:
            if j.verdict is None or j.verdict.outcome != "unchanged":
                text = j.verdict.text() if j.verdict else j.note
                out.append(f"  {entry_name(j.entry)}: {text}")
    return out


def _target(args: argparse.Namespace) -> Path:
    from ..util import baseline_file, system_name
    system_name(args.system)
    return Path(args.baselines) if args.baselines else baseline_file(args.system)


def _plan(args: argparse.Namespace) -> tuple[Path, dict, dict, reading.run_report.RunReport]:
    """The file, its content, what it becomes, and the newest run recorded.

    Every ``--from`` is read before anything is written; after the first,
    each adds its session to those already gathered.
    """
    path = _target(args)
    old = baselines.store.load(path)  # corrupt: error before anything is written
    merged, report = old, None
    for i, spec in enumerate(args.source or ["latest"]):
        report = reading.run_report.pool([reading.run_report.load(p) for p in reading.run_report.expand(spec, args.system)])
        new = baselines.store.from_run(report, args.system, pools=True)
        if not getattr(args, "replace", False):
            baselines.store.check_units(old, new, str(path))
        if args.add or i > 0:
            new = baselines.samples.add_sessions(merged, new, args.keep, str(path))
        merged = new if args.replace and i == 0 else baselines.store.merge(merged, new)
    merged = baselines.store.session_intervals(merged, str(path))
    if baselines.samples.CONTROL_KEY in old:     # a site's choice, not a value: it stays
        merged[baselines.samples.CONTROL_KEY] = old[baselines.samples.CONTROL_KEY]
    return path, old, merged, report


def _index(*datas: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in datas:
        for k, v in d.items():
            if isinstance(v, dict) and "$index" in v:
                out[k] = list(v["$index"])
    return out


def cmd_record(args: argparse.Namespace) -> int:
    path = _target(args)
    # read, merge and write under one lock: two records at once must not drop either's entries
    with atomic.locked(path):
        atomic.remove_leftovers(path)
        other = baselines.store.foreign(baselines.store.load(path), args.system, str(path))
        if other and not args.replace:
            raise PlacementError(f"{other}; not merged into it: move it away, or record "
                                 "with --replace to start it afresh; nothing was written")
        path, old, merged, report = _plan(args)
        d = baselines.store.diff(old, merged)
        verdicts = _verdicts(path, old, report, args.system, args, detail=False)
        data = {baselines.store.PROVENANCE_KEY: baselines.store.provenance(
            report, args.system, baselines.store.thresholds_used(report, args.system)), **merged}
        prev = baselines.store.write_atomic(path, data, HEADER)
    print(f"wrote {path}: {len(d.added)} added, {len(d.changed)} changed, "
          f"{len(d.removed)} removed" + (f" (previous version: {prev})" if prev else ""))
    uncounted = baselines.contents.unrecorded(old, str(path), written=True)
    if uncounted:
        print(f"note: {uncounted}")
    for line in verdicts:
        print(line)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    path, old, merged, report = _plan(args)
    other = baselines.store.foreign(old, args.system, str(path))
    if other:
        print(f"warning: {other}")
    uncounted = baselines.contents.unrecorded(old, str(path))
    if uncounted:
        print(f"note: {uncounted}")
    d = baselines.store.diff(old, merged)
    for line in _verdicts(path, old, report, args.system, args, detail=True):
        print(line)
    if d.empty:
        print(f"{path}: no change")
        return 0
    print(f"{path}: {len(d.added)} added, {len(d.changed)} changed, {len(d.removed)} removed")
    for line in d.lines(_index(old, merged)):
        print(line)
    return 0


def cmd_control(args: argparse.Namespace) -> int:
    """Show, set or clear the system's control value (the node's shift is its change)."""
    path = _target(args)
    key = baselines.samples.CONTROL_KEY
    if args.entry is None and not args.clear:
        data = baselines.store.load(path)
        print(f"{path}: control value {data[key]}" if key in data else
              f"{path}: no control value: the node's shift is the median of the values")
        return 0
    if args.entry is not None and args.clear:
        raise PlacementError("give a value or --clear, not both")
    with atomic.locked(path):
        atomic.remove_leftovers(path)
        data = baselines.store.load(path)
        if not data:
            raise PlacementError(f"{path}: no reference file for system {args.system!r}: "
                                 "record a run first (`placement baseline record`)")
        if args.clear:
            data.pop(key, None)
        else:
            e = parse_entry(args.entry)
            stored = list(map(entry_name, baselines.samples.entries(data, str(path))))
            if e is None or entry_name(e) not in stored:
                what = ("is not a value Test[index values].var" if e is None
                        else f"has no stored runs in {path}")
                raise PlacementError(f"control value {args.entry!r} {what}; accepted: a value "
                                     "as `placement baseline diff` prints it, one of "
                                     f"{len(stored)} with stored runs, e.g. "
                                     + ", ".join(stored[:3]))
            data[key] = entry_name(e)
        baselines.store.write_atomic(path, data, HEADER)
    print(f"{path}: " + (f"control value {data[key]}" if key in data else
                         "no control value: the node's shift is the median of the values"))
    return 0


def _keep_arg(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"invalid session count {text!r} "
                                         "(a whole number from 1 to 1000)")
    return int(text)


def register(sub) -> None:
    p = sub.add_parser("baseline", help="record or compare a system's reference file")
    bs = p.add_subparsers(dest="baseline_command", required=True, parser_class=type(p))
    for name, func, helptext in (
            ("record", cmd_record, "write config/baselines/<system>.yaml from a run"),
            ("diff", cmd_diff, "show what `record` would add, change or remove")):
        q = bs.add_parser(name, help=helptext)
        q.add_argument("--system", required=True, help="system name (the file's name)")
        q.add_argument("--from", dest="source", action="append",
                       help="run report path, 'latest' (newest in results/runs; default), or "
                            "an acceptance run's .run list (all its parts); repeat it to "
                            "record several sessions, oldest first")
        q.add_argument("--add", action="store_true",
                       help="keep the stored sessions of each variable and add this run's "
                            "(the verdict then sees the spread between sessions)")
        q.add_argument("--keep", type=_keep_arg, default=baselines.samples.KEEP_SESSIONS,
                       help="sessions kept per variable with --add or several --from "
                            f"(default {baselines.samples.KEEP_SESSIONS}, newest kept)")
        q.add_argument("--replace", action="store_true",
                       help="drop entries the run does not have, instead of keeping them")
        q.add_argument("--min-effect", type=fraction_arg, default=verdict.over_sessions.MIN_EFFECT,
                       help="smallest change of the median a regression needs (default 3%%)")
        q.add_argument("--baselines", help=argparse.SUPPRESS)  # explicit file (tests)
        q.set_defaults(func=func)
    q = bs.add_parser("control", help="show, set or clear the value whose change is the "
                                      "node's shift (a control case, like a reference build)")
    q.add_argument("--system", required=True, help="system name (the file's name)")
    q.add_argument("entry", nargs="?", metavar="VALUE",
                   help="Test[index values].var, as `placement baseline diff` prints it")
    q.add_argument("--clear", action="store_true",
                   help="no control value: the node's shift is the median of the values")
    q.add_argument("--baselines", help=argparse.SUPPRESS)  # explicit file (tests)
    q.set_defaults(func=cmd_control)
