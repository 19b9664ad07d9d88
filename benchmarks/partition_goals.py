"""The peer verdict's goals on the live 4-node test cluster, from sessions recorded for it.

Each condition is a live cluster (``tests/slurm_nodes.py``) with one or two nodes made
odd before it starts; each session is one acceptance run of the node-health family
with ``--distribute=all -t nodes`` (``scripts/acceptance.sh``, no confirmation session:
the peer verdict is a first-session verdict). Its run report is kept under
``tests/fixtures/peers/<set>/`` with a ``set.yaml`` saying when, where, under what load
and after which fixing of the peer rules (:data:`provenance.PEERS_FIXED`)
it was recorded, as the verdict benchmark's sets do.

Goals, per condition (:data:`CONDITIONS`), judged on the sets recorded after the rules
were fixed:

* ``unchanged``: no node named in at least 19 of 20 sessions;
* ``capped70`` / ``capped50``: the node whose CPU time is capped at 70 % / 50 % of its
  CPUs named, 20 of 20, from the first session, with no baseline;
* ``pu1of2``: the node allowed 1 PU of 2 named with a topology line, 20 of 20;
* ``twoodd``: two nodes capped at 50 %: both named or the no-majority line, never a pass.

A set of fewer than 20 sessions is judged on its share (19 of 20 is 95 %) and labelled
partial in the results. Sets recorded before every node had the largest CPU weight
(``tests/node_cgroups.py``; no ``nodes_weighted`` in their ``set.yaml``) with a capped
node are kept and listed, but not counted for a goal: under the host's other work no job
got as much CPU as the cap, so the capped node was not odd (it measured like its peers). Exit 1 when a
goal is missed.

    python benchmarks/partition_goals.py record CONDITION [--sessions N]
    python benchmarks/partition_goals.py judge
    python benchmarks/partition_goals.py write    # the pages' blocks from the results
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import provenance  # noqa: E402  (this folder: when the peer rules were last chosen)
from placement.judgement import peers, reading  # noqa: E402
from placement.util import atomic  # noqa: E402

SETS = ROOT / "tests" / "fixtures" / "peers"
RESULTS = ROOT / "benchmarks" / "results" / "partition_goals.json"
FULL = 20


@dataclass(frozen=True)
class Condition:
    """A cluster made odd on purpose, and what its sessions must show."""

    name: str
    what: str
    slow: dict = field(default_factory=dict)
    cpus: dict = field(default_factory=dict)
    #: the nodes the verdict must name ([]: none)
    odd: tuple[str, ...] = ()
    #: the share of sessions that must meet the goal
    share: float = 1.0
    topology: bool = False


CONDITIONS = {c.name: c for c in (
    Condition("unchanged", "4 nodes, none changed", share=19 / 20),
    Condition("capped70", "n3's CPU time capped at 70% of its CPUs", {"n3": 0.7}, odd=("n3",)),
    Condition("capped50", "n3's CPU time capped at 50% of its CPUs", {"n3": 0.5}, odd=("n3",)),
    Condition("pu1of2", "n2 allowed 1 PU of 2 (a cpuset)", cpus={"n2": "1"}, odd=("n2",),
              topology=True),
    Condition("twoodd", "n3 and n4 capped at 50% of their CPUs",
              {"n3": 0.5, "n4": 0.5}, odd=("n3", "n4")),
)}


def met(cond: Condition, judgement) -> bool:
    """Whether one session's peer verdict meets the condition's goal."""
    if cond.name == "unchanged":
        return not judgement.fails
    if cond.topology:
        return any(t.node in cond.odd for t in judgement.topology)
    if len(cond.odd) > 1:
        named = set(judgement.named)
        return judgement.fails and (judgement.no_majority or set(cond.odd) <= named)
    return any(o.node in cond.odd and o.slower for o in judgement.odd)


#: the live test cluster's partition, as ``config/systems/testnodes.py`` names it
WHERE = "testnodes:batch"


@dataclass(frozen=True)
class StoredSession:
    """One recorded session of a set, read once for each benchmark that judges it."""

    set: str
    cond: Condition
    path: Path
    report: reading.run_report.RunReport
    started: _dt.datetime
    #: the fixings of the peer rules before it started (0: before the first)
    window: int
    #: the host's load average before it, where its set kept one per session
    load: float | None
    #: whether every node had the largest CPU weight: a cap binds only then
    weighted: bool

    @property
    def validation(self) -> bool:
        """Started after the peer rules were last fixed."""
        return self.started > _utc(provenance.PEERS_FIXED)

    def partition(self) -> tuple[list, dict]:
        """The partition's values and fingerprints, as the peer verdict reads them."""
        return peers.cases.partitions(self.report)[WHERE]


def set_condition(folder: Path) -> tuple[Condition, bool, list]:
    """The set's condition, whether its nodes had the largest CPU weight (a cap binds only
    then) and the host loads it kept, one per session where it kept them."""
    info = yaml.safe_load((folder / "set.yaml").read_text())
    cond = CONDITIONS[info["condition"]]
    return cond, bool(info.get("nodes_weighted")) or not cond.slow, info.get("loads") or []


def set_sessions(folder: Path) -> list[StoredSession]:
    """Every session of the set in ``folder``, oldest first."""
    cond, weighted, loads = set_condition(folder)
    fixings = [_utc(t) for t in provenance.PEERS_FIXINGS]
    runs = sorted(folder.glob("run-*.json"))
    loads = loads if len(loads) == len(runs) else [None] * len(runs)
    out = []
    for p, load in zip(runs, loads):
        rep = reading.run_report.load(p)
        started = reading.session_info.started(rep.session)
        out.append(StoredSession(folder.name, cond, p, rep, started,
                                 sum(started > f for f in fixings), load, weighted))
    return out


def all_sessions() -> list[StoredSession]:
    """Every stored session of every set, set by set."""
    return [s for meta in sorted(SETS.glob("*/set.yaml")) for s in set_sessions(meta.parent)]


def judge_set(folder: Path) -> dict:
    """Every session of one set judged: how many met the goal, and the lines."""
    cond, weighted, _ = set_condition(folder)
    sessions = []
    for st in set_sessions(folder):
        js = [j for j in peers.cases.judge_report(st.report) if j.where == WHERE]
        ok = bool(js) and met(cond, js[0])
        # a node the condition left alone named too: the goal may be met, the line is wrong
        also = bool(js) and bool(cond.odd) and bool(set(js[0].named) - set(cond.odd))
        sessions.append({"file": st.path.name, "met": ok, "validation": st.validation,
                         "also_named": also, "window": st.window,
                         "loaded": st.load is not None and st.load >= LOADED,
                         "lines": js[0].lines() if js else [f"no {WHERE} values"]})
    valid = [s for s in sessions if s["validation"] and weighted]
    n, k = len(valid), sum(s["met"] for s in valid)
    return {"condition": cond.name, "what": cond.what, "sessions": n, "met": k,
            "also_named": sum(s["also_named"] for s in valid), "nodes_weighted": weighted,
            "in_sample": {"sessions": len(sessions) - n,
                          "met": sum(s["met"] for s in sessions if not s["validation"]),
                          "also_named": sum(s["also_named"] for s in sessions
                                            if not s["validation"])},
            "windows": _windows(sessions if weighted else []),
            "goal": f"{cond.share:.0%} of sessions", "goal_met": n > 0 and k >= cond.share * n,
            "partial": n < FULL,
            "role": "validation" if n else "in-sample" if weighted else "unweighted nodes",
            "per_session": sessions}


#: a session started at this host load average or more is a loaded one, counted apart too
LOADED = 1.5


def _windows(sessions: list[dict]) -> dict[str, dict[str, int]]:
    """Sessions and goals met after each fixing of the peer verdict (window ``i``: started
    after fixing ``i``, before the next), judged by the verdict as it is now."""
    out: dict[str, dict[str, int]] = {}
    for i in range(1, len(provenance.PEERS_FIXINGS) + 1):
        inside = [s for s in sessions if s["window"] == i]
        loaded = [s for s in inside if s.get("loaded")]
        out[str(i)] = {"sessions": len(inside), "met": sum(s["met"] for s in inside),
                       "loaded_sessions": len(loaded),
                       "loaded_met": sum(s["met"] for s in loaded)}
    return out


def _utc(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def pooled(sets: dict) -> dict:
    """Each condition over its counted sets: validation sessions and in-sample ones summed."""
    out: dict = {}
    for r in sets.values():
        if r["role"] == "unweighted nodes":
            continue
        c = out.setdefault(r["condition"], {"what": r["what"], "goal": r["goal"], "sessions": 0,
                                            "met": 0, "also_named": 0,
                                            "in_sample": {"sessions": 0, "met": 0,
                                                          "also_named": 0}})
        for k in ("sessions", "met", "also_named"):
            c[k] += r[k]
            c["in_sample"][k] += r["in_sample"][k]
        for w, fig in r["windows"].items():
            into = c.setdefault("windows", {}).setdefault(w, dict.fromkeys(fig, 0))
            for k, v in fig.items():
                into[k] += v
    for name, c in out.items():
        share = CONDITIONS[name].share
        c["goal_met"] = c["sessions"] > 0 and c["met"] >= share * c["sessions"]
        c["partial"] = c["sessions"] < FULL
    return out


def cmd_judge() -> int:
    sets = {f.name: judge_set(f) for f in sorted(SETS.glob("*/")) if (f / "set.yaml").is_file()}
    if not sets:
        print("partition_goals: no sets under tests/fixtures/peers (record some first)",
              file=sys.stderr)
        return 2
    for name, r in sets.items():
        if r["role"] == "unweighted nodes":
            print(f"{name}: {r['condition']}: recorded before the nodes' CPU weight, not "
                  "counted")
    conditions = pooled(sets)
    for name, c in conditions.items():
        label = f" (partial: {c['sessions']} of {FULL})" if c["partial"] else ""
        ins = c["in_sample"]
        print(f"{name}: goal met in {c['met']} of {c['sessions']} validation sessions{label}: "
              f"{'met' if c['goal_met'] else 'MISSED' if c['sessions'] else 'none yet'}; in-sample (recorded before the peer "
              f"rules were fixed) {ins['met']} of {ins['sessions']}; after each fixing: "
              + ", ".join(f"{w}: {x['met']} of {x['sessions']} (at a host load of "
                          f"{LOADED} or more: {x['loaded_met']} of {x['loaded_sessions']})"
                          for w, x in c.get("windows", {}).items()))
    atomic.write_text(RESULTS, json.dumps({"peers_fixed": provenance.PEERS_FIXED,
                                           "peers_fixings": list(provenance.PEERS_FIXINGS),
                                           "conditions": conditions, "sets": sets},
                                          indent=1) + "\n")
    write_page(conditions)
    return 0 if all(c["goal_met"] for c in conditions.values() if c["sessions"]) else 1


PAGE = ROOT / "docs" / "reference" / "benchmarks.md"
BEGIN, END = "<!-- partition-goals: benchmarks/partition_goals.py -->", "<!-- /partition-goals -->"


def page_block(conditions: dict) -> str:
    """The benchmarks page's table of goals, one row per condition, generated from the
    judged sets: the validation sessions, and beside them the in-sample ones."""
    fixings = provenance.PEERS_FIXINGS
    earlier = [f"after fixing {i} ({t[:10]})" for i, t in enumerate(fixings[:-1], 1)]
    rows = ["| condition | goal | met in (validation sessions) | another node named too | "
            f"of them at a host load of {LOADED} or more | in-sample | "
            + " | ".join(earlier) + (" |" if earlier else ""),
            "|---|---|---:|---:|---:|---:|" + "---:|" * len(earlier)]
    for name in CONDITIONS:
        c = conditions.get(name)
        if c is None:
            continue
        ins = c["in_sample"]
        partial = f" (partial: {c['sessions']} of {FULL})" if c["partial"] else ""
        also = f"{c['also_named']} of {c['sessions']}" if CONDITIONS[name].odd else "-"
        wins = c.get("windows", {})
        before = "".join(f" {wins.get(str(i), {}).get('met', 0)} of "
                         f"{wins.get(str(i), {}).get('sessions', 0)} |"
                         for i in range(1, len(fixings)))
        last = wins.get(str(len(fixings)), {})
        rows.append(f"| {c['what']} | {c['goal']} | {c['met']} of {c['sessions']}{partial} | "
                    f"{also} | {last.get('loaded_met', 0)} of {last.get('loaded_sessions', 0)} "
                    f"| {ins['met']} of {ins['sessions']} |{before}")
    return "\n".join([BEGIN, *rows, END])


README = ROOT / "README.md"
README_BEGIN = "<!-- partition-figures: benchmarks/partition_goals.py -->"
README_END = "<!-- /partition-figures -->"
#: the README's words for each condition's goal
SAID = {"unchanged": "an unchanged partition with no node named",
        "capped70": "a node capped at 70% of its CPU time named slower",
        "capped50": "a node capped at 50% named slower",
        "pu1of2": "a node left 1 PU of 2 named by its topology",
        "twoodd": "two odd nodes of four both named, or no majority (never a pass)"}


def readme_block(conditions: dict) -> str:
    """The README's lines: each condition's validation sessions, no baseline; where the
    sessions come from, and those the rules were chosen on, are the benchmarks page's."""
    n = sum(c["sessions"] for c in conditions.values())
    rows = [README_BEGIN,
            f"A partition's nodes against their peers, first session, no baseline ({n} "
            "validation sessions on a live 4-node test Slurm sharing one 2-CPU virtual "
            "machine, 20 per condition the goal; [benchmarks](docs/reference/benchmarks.md)):"]
    for name in CONDITIONS:
        c = conditions.get(name)
        if c is None:
            continue
        ins = c["in_sample"]
        if c["sessions"]:
            also = (f", another node named too in {c['also_named']}"
                    if c["also_named"] else "")
            rows.append(f"- {SAID[name]}: {c['met']} of {c['sessions']}{also}")
        elif ins["sessions"]:
            prev = c.get("windows", {}).get(str(len(provenance.PEERS_FIXINGS) - 1), {})
            since = (f" (the {prev['sessions']} sessions recorded after the verdict's "
                     f"previous fixing, judged by it now: {prev['met']} of {prev['sessions']})"
                     if prev.get("sessions") else "")
            rows.append(f"- {SAID[name]}: no validation session yet{since}")
    return "\n".join([*rows, README_END])


def write_page(conditions: dict) -> None:
    """The table into the benchmarks page and the lines into the README, between their
    markers."""
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(conditions))
    page_blocks.replace(README, README_BEGIN, README_END, readme_block(conditions))


def _session(env: dict, results: Path) -> Path | None:
    """One acceptance run of the node-health family; the run report it wrote."""
    before = set((results / "runs").glob("run-report-*.json"))
    subprocess.run([str(ROOT / "scripts" / "acceptance.sh"), "-m", "quick", "-s",
                    "testnodes:batch", "--", "--distribute=all", "-t", "nodes"],
                   cwd=ROOT, env=env, check=False)
    new = sorted(set((results / "runs").glob("run-report-*.json")) - before)
    return new[-1] if new else None


def cmd_record(cond: Condition, sessions: int) -> int:
    from slurm_nodes import SlurmNodes
    stamp = _dt.datetime.now(_dt.timezone.utc)
    name = f"{cond.name}-{stamp:%Y%m%dT%H%M}"
    target = SETS / name
    target.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="peer-goals-"))
    cluster = SlurmNodes(work / "cluster", 4, cond.slow, cond.cpus).start()
    loads, kept = [], 0
    try:
        env = {**os.environ, **cluster.env, "PLACEMENT_RESULTS": str(work / "results"),
               "PLACEMENT_REPORTS": str(work / "reports"),
               "ACCEPTANCE_CONFIRM": "0"}
        for _ in range(sessions):
            loads.append(round(os.getloadavg()[0], 2))
            report = _session(env, work / "results")
            if report is None:
                continue
            when = reading.session_info.started(reading.run_report.read(report)["session_info"])
            shutil.copyfile(report, target / f"run-{when:%Y%m%dT%H%M%S%z}.json")
            kept += 1
            _write_set(target, cond, stamp, loads, kept)   # a set cut short stays described
    finally:
        cluster.stop()
    print(f"recorded {kept} session(s) of {cond.name} in {target}")
    return 0 if kept else 1


def _write_set(target: Path, cond: Condition, stamp: _dt.datetime, loads: list[float],
               kept: int) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    info = {"role": "validation: recorded after the peer rules were fixed "
                    "(peers_fixed, benchmarks/rules_provenance.yaml); no rule was chosen on it",
            "condition": cond.name,
            "what": f"{kept} sessions of the node-health family (scripts/acceptance.sh -m "
                    f"quick -s testnodes:batch -- --distribute=all -t nodes) on the live "
                    f"4-node test cluster: {cond.what}; on the {os.cpu_count()}-CPU host, its "
                    "load average before each session in loads",
            "host": "vm", "cpus": os.cpu_count(), "nodes_weighted": True,
            # NPB CG and EP join the family's values where NPB_DIR names their binaries
            "npb": bool(os.environ.get("NPB_DIR")),
            "recorded_after_rules_fixed": provenance.PEERS_FIXED, "commit": commit,
            "written": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"), "loads": loads}
    atomic.write_text(target / "set.yaml", yaml.safe_dump(info, sort_keys=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="record sessions of one condition on a live cluster")
    rec.add_argument("condition", choices=sorted(CONDITIONS))
    rec.add_argument("--sessions", type=int, default=FULL)
    sub.add_parser("judge", help="judge every recorded set against its goal")
    sub.add_parser("write", help="write the pages' blocks from the committed results")
    args = ap.parse_args(argv)
    if args.action == "record":
        return cmd_record(CONDITIONS[args.condition], args.sessions)
    if args.action == "write":
        write_page(json.loads(RESULTS.read_text())["conditions"])
        return 0
    return cmd_judge()


if __name__ == "__main__":
    sys.exit(main())
