"""``placement baseline record|diff|control``: a system's reference file from a run, what
would change, and the site's control value (:mod:`placement.judgement.baselines.recording`).
"""

from __future__ import annotations

import argparse

from pathlib import Path

from ..acceptance import record as verdict_record
from ..judgement import baselines, reading, verdict
from ..util import PlacementError
from .arguments import fraction, session_count

description = "record or compare a system's reference file"


def setup_parser(p: argparse.ArgumentParser) -> None:
    bs = p.add_subparsers(dest="baseline_command", required=True, parser_class=type(p))
    for name, helptext in (
            ("record", "write config/baselines/<system>.yaml from a run"),
            ("diff", "show what `record` would add, change or remove")):
        q = bs.add_parser(name, help=helptext)
        q.add_argument("--system", required=True, help="system name (the file's name)")
        q.add_argument("--from", dest="source", action="append",
                       help="run report path, 'latest' (newest in results/runs; default), or "
                            "an acceptance run's .run list (all its parts); repeat it to "
                            "record several sessions, oldest first")
        q.add_argument("--add", action="store_true",
                       help="keep the stored sessions of each variable and add this run's "
                            "(the verdict then sees the spread between sessions)")
        q.add_argument("--keep", type=session_count, default=None,
                       help="sessions kept per variable with --add or several --from "
                            f"(default {baselines.samples.KEEP_SESSIONS}, newest kept)")
        q.add_argument("--replace", action="store_true",
                       help="drop entries the run does not have, instead of keeping them")
        q.add_argument("--min-effect", type=fraction, default=verdict.over_sessions.MIN_EFFECT,
                       help="smallest change of the median a regression needs (default 3%%)")
        q.add_argument("--baselines", help=argparse.SUPPRESS)  # explicit file (tests)
        if name == "record":
            q.add_argument("--force", action="store_true",
                           help="record a run whose verdict record says FAIL or names an odd "
                                "node (its failure becomes what later runs are judged against)")
    q = bs.add_parser("control", help="show, set or clear the value whose change is the "
                                      "node's shift (a control case, like a reference build)")
    q.add_argument("--system", required=True, help="system name (the file's name)")
    q.add_argument("entry", nargs="?", metavar="VALUE",
                   help="Test[index values].var, as `placement baseline diff` prints it")
    q.add_argument("--clear", action="store_true",
                   help="no control value: the node's shift is the median of the values")
    q.add_argument("--baselines", help=argparse.SUPPRESS)  # explicit file (tests)


def baseline(args: argparse.Namespace) -> int:
    return {"record": record, "diff": diff, "control": control}[args.baseline_command](args)


def _sources(args: argparse.Namespace) -> baselines.recording.Sources:
    if args.keep is not None and not args.add and len(args.source or []) < 2:
        raise PlacementError("--keep counts the sessions kept with --add or several --from; "
                             "one run replaces the stored sessions: give --add, or leave "
                             "--keep out")
    keep = baselines.samples.KEEP_SESSIONS if args.keep is None else args.keep
    return baselines.recording.Sources(args.system, args.source or [], args.add, keep,
                                       args.replace, args.min_effect)


def _refuse_a_failed_run(args: argparse.Namespace) -> None:
    """A run whose verdict record says FAIL, or names an odd node, is not recorded without
    ``--force``: later runs would be judged against its failure (a healthy node called
    faster than a baseline a slow node's run wrote). Each ``--from`` is its own run, with
    its record beside its newest part."""
    if args.force:
        return
    for spec in args.source or ["latest"]:
        parts = reading.run_report.expand(spec, args.system)
        rec = verdict_record.beside([Path(parts[-1])]) if parts else None
        odd = [o.node for o in rec.odd_nodes] if rec is not None else []
        if rec is not None and (rec.outcome == "FAIL" or odd):
            said = f"its verdict record says {rec.outcome}" + (
                f" and names odd node(s) {', '.join(odd)}" if odd else "")
            raise PlacementError(f"{parts[-1]}: {said}: a baseline from it would make that "
                                 "what later runs are judged against; record a run that "
                                 "passed, or give --force to record this one")


def record(args: argparse.Namespace) -> int:
    _refuse_a_failed_run(args)
    path = baselines.recording.target(args.system, args.baselines)
    done = baselines.recording.record(path, _sources(args))
    d = done.diff
    print(f"wrote {path}: {len(d.added)} added, {len(d.changed)} changed, "
          f"{len(d.removed)} removed"
          + (f" (previous version: {done.previous})" if done.previous else ""))
    if done.uncounted:
        print(f"note: {done.uncounted}")
    if done.unmeasured:
        print(f"note: {baselines.recording.unmeasured_line(done.unmeasured)}")
    for line in done.verdicts:
        print(line)
    return 0


def diff(args: argparse.Namespace) -> int:
    rec = baselines.recording
    path = rec.target(args.system, args.baselines)
    src = _sources(args)
    missing: list[str] = []
    old, merged, report = rec.plan(path, src, missing)
    other = baselines.store.foreign(old, args.system, str(path))
    if other:
        print(f"warning: {other}")
    uncounted = baselines.contents.unrecorded(old, str(path))
    if uncounted:
        print(f"note: {uncounted}")
    if missing:
        print(f"note: {rec.unmeasured_line(sorted(set(missing)))}")
    d = baselines.store.diff(old, merged)
    for line in rec.verdict_lines(path, old, report, src, detail=True):
        print(line)
    if d.empty:
        print(f"{path}: no change")
        return 0
    print(f"{path}: {len(d.added)} added, {len(d.changed)} changed, {len(d.removed)} removed")
    for line in d.lines(rec.index(old, merged)):
        print(line)
    return 0


def control(args: argparse.Namespace) -> int:
    """Show, set or clear the system's control value (the node's shift is its change)."""
    path = baselines.recording.target(args.system, args.baselines)
    if args.entry is None and not args.clear:
        if not path.exists():       # a misspelt system is not one with no control value
            raise PlacementError(f"{path}: no reference file of system {args.system!r}: "
                                 "record a run first (`placement baseline record`)")
        print(baselines.recording.control_line(path, baselines.store.load(path)))
        return 0
    if args.entry is not None and args.clear:
        raise PlacementError("give a value or --clear, not both")
    data, written = baselines.recording.set_control(path, args.system,
                                                    None if args.clear else args.entry)
    print(baselines.recording.control_line(path, data)
          + ("" if written else " (no change: nothing written)"))
    return 0
