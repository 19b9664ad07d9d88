"""A partition acceptance run's own cost: the summary and the report of a 1,000-node run.

A ``--distribute=all`` run of the node-health family writes one family case per node (its
14 member cases, about 53 values). The run judged here is made of the recorded sessions of
the live 4-node test cluster (``tests/fixtures/peers/unchanged-*``): node i of the new run
is one recorded node-session, renamed ``nid<i>`` and packed as ``NodeHealthCheck`` writes
its case (:mod:`placement.judgement.reading.family`); two other resamplings are its baseline
(``placement baseline record``), so each node has entries of its own. One node in fifty is
made 30 % slower, so the peer verdict names nodes and the summary prints their lines.

Timed, each in a fresh process as ``scripts/acceptance.sh`` runs them: the summary
(``placement acceptance summary``, which judges the run once and writes its verdict record)
and the report (``placement report --run NEW --record VERDICT --no-compare``, ReFrame's
comparison with the previous run being ReFrame's cost): wall seconds, the process's own CPU
seconds (user and system, imports included) and its peak resident memory. Optionally
(``--listing``) ReFrame's own peak memory listing the family on a 1,000-node slurm.conf
(``benchmarks/distribute_scale.py``'s cluster, ``--distribute=all -l``).

Only the node-sessions of the newest family's members on the newest session's host are
used (older sessions ran other cases and sizes, some on another host).

Goal: the summary and the report of a 1,000-node run each under 60 s of CPU time and 2 GB
(on the shared 2-core development machine the wall time is that plus waiting for a core,
printed beside it); exits 1 when missed. Writes ``benchmarks/results/partition_cost.json`` and the table of
``docs/reference/partition-cost.md``.

    .venv/bin/python benchmarks/partition_cost.py [--sizes 250,500,1000] [--listing]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid as uuid_module
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from placement.util import atomic  # noqa: E402
from placement.judgement.reading import family  # noqa: E402

SOURCE = "tests/fixtures/peers/unchanged-*/run-*.json"
RESULTS = ROOT / "benchmarks" / "results" / "partition_cost.json"
PAGE = ROOT / "docs" / "reference" / "partition-cost.md"
BEGIN, END = "<!-- partition-cost: benchmarks/partition_cost.py -->", "<!-- /partition-cost -->"
GOAL_NODES, GOAL_S, GOAL_MB = 1000, 60.0, 2048
SYSTEM, MODE = "testnodes", "quick"
#: every fiftieth node (from the eighth) 30 % slower
SLOW_EVERY, SLOW_FIRST, SLOW = 50, 7, 1.3
#: a member's fields that are the family job's, never the member's own
_JOB = ("system", "partition", "environ", "session_uuid", "job_nodelist", "jobid", "fixture")


def node_sessions() -> tuple[list[list[dict]], list[dict], dict]:
    """Every recorded node-session (one node's member cases in one session), the builds
    (fixtures) of the first session, and that session as the run's frame."""
    paths = sorted(ROOT.glob(SOURCE))
    if not paths:
        raise SystemExit(f"partition_cost: no recorded sessions match {SOURCE}")
    out, frame, builds = [], None, []
    for p in reversed(paths):
        data = json.loads(p.read_text())
        by_node: dict[str, list[dict]] = {}
        for tc in data["runs"][0]["testcases"]:
            if tc.get("fixture"):
                builds += [] if frame else [tc]
            elif tc.get("node"):
                by_node.setdefault(tc["node"], []).extend(_member_cases(tc))
        out += [by_node[n] for n in sorted(by_node) if _members(by_node[n]) == _members(
            out[0] if out else by_node[n])]
        frame = frame or data
    return out, builds, frame


def _member_cases(tc: dict) -> list[dict]:
    """A recorded case as the member cases it holds: a family case (a session recorded with
    the family as one job per node) as its members, each under its own member key as
    ReFrame names a test of its own; a member case recorded as a job of its own as itself."""
    if not family.is_family(tc):
        return [tc]
    return [{**{k: v for k, v in m.items() if k != "family_case"}, "unique_name": key}
            for key, m in family.members(tc)]


def _members(cases: list[dict]) -> tuple[list[str], list[str]]:
    """A node-session's member cases by name and its fingerprints: sessions of an older
    family (other cases) or of another host are left out, as their values do not compare."""
    return (sorted(tc["name"] for tc in cases),
            sorted(json.dumps(tc.get("fingerprint"), sort_keys=True) for tc in cases))


def _slower(tc: dict, factor: float) -> None:
    """Every launch of ``tc`` worse by ``factor``: times multiplied, rates divided."""
    prefix = f"{tc['system']}:{tc['partition']}:"
    for var, runs in (tc.get("perf_launches") or {}).items():
        unit = ((tc.get("perfvalues") or {}).get(prefix + var) or [None] * 5)[4] or ""
        f = 1 / factor if unit.endswith("/s") else factor
        tc["perf_launches"][var] = [x * f for x in runs]


def family_case(cases: list[dict], node: str) -> dict:
    """One node's member cases as the family's one case on ``node``, as ``NodeHealthCheck``
    writes it: each member's fields under ``family``, its values as ``<member>.<var>``."""
    first = cases[0]
    fam = {**{k: first[k] for k in _JOB if k in first}, "job_nodelist": [node],
           "name": "NodeHealthCheck %scale=small", "unique_name": f"NodeHealthCheck_{node}",
           "display_name": f"NodeHealthCheck %scale=small %.part={first['system']}:"
                           f"{first['partition']} %.nid={node}",
           "result": "pass", "fail_phase": None, "node": node, "perfvalues": {}, "family": {}}
    for tc in cases:
        key, prefix = tc["unique_name"], f"{tc['system']}:{tc['partition']}:"
        for k, v in (tc.get("perfvalues") or {}).items():
            fam["perfvalues"][f"{prefix}{key}.{k[len(prefix):]}"] = v
        fields = {k: v for k, v in tc.items() if k not in _JOB and k != "perfvalues"}
        fam["family"][key] = {**fields, "display_name": tc["name"], "node": node}
        if tc["result"] != "pass":
            fam["result"], fam["fail_phase"] = "fail", "performance"
    return fam


def partition(src: tuple, nodes: int, shift: int, changed: bool) -> dict:
    """A run of ``nodes`` nodes: node i is recorded node-session ``(i + shift*7) mod K``;
    ``changed``: every fiftieth node made slower."""
    sessions, builds, frame = src
    uuid = str(uuid_module.uuid5(uuid_module.NAMESPACE_URL, f"partition-cost/{nodes}/{shift}"))
    out = {**{k: v for k, v in frame.items() if k != "runs"},
           "session_info": {**frame["session_info"], "uuid": uuid}}
    cases = copy.deepcopy(builds)
    for i in range(nodes):
        member_cases = copy.deepcopy(sessions[(i + 7 * shift) % len(sessions)])
        if changed and i % SLOW_EVERY == SLOW_FIRST:
            for tc in member_cases:
                _slower(tc, SLOW)
        cases.append({**family_case(member_cases, f"nid{i:05d}"), "session_uuid": uuid})
    for tc in cases[:len(builds)]:
        tc["session_uuid"] = uuid
    out["runs"] = [{**frame["runs"][0], "testcases": cases}]
    return out


#: run in the fresh process: the command, then its own CPU seconds and peak memory
_CHILD = ("import resource, sys\n"
          "from placement.cli.main import main\n"
          "rc = main(sys.argv[1:])\n"
          "u = resource.getrusage(resource.RUSAGE_SELF)\n"
          "print('COST', rc, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)\n")


def timed(args: list[str], env: dict, ok: tuple[int, ...] = (0,)) -> tuple[dict, list[str]]:
    """One ``placement ARGS`` in a fresh interpreter: wall, CPU, peak MB; its lines."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", _CHILD, *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    lines = r.stdout.splitlines()
    cost = next((ln.split() for ln in lines if ln.startswith("COST ")), None)
    if cost is None or int(cost[1]) not in ok:
        raise SystemExit(f"partition_cost: placement {args[0]} failed ({r.returncode}): "
                         f"{(r.stderr or r.stdout).strip()[-600:]}")
    return ({"wall_s": round(wall, 2), "cpu_s": round(float(cost[2]), 2),
             "peak_mb": round(float(cost[3]))}, [ln for ln in lines if not ln.startswith("COST ")])


def measure(src: tuple, nodes: int) -> dict:
    """The baseline recorded, then the summary and the report of one ``nodes``-node run."""
    with tempfile.TemporaryDirectory(prefix="partition-cost.") as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "PLACEMENT_BASELINES": str(tmp / "baselines"),
               "PLACEMENT_RESULTS": str(tmp / "results"),
               "PYTHONPATH": os.pathsep.join([str(ROOT / "src"),
                                              os.environ.get("PYTHONPATH", "")])}
        (tmp / "baselines").mkdir()
        runs = []
        for shift, changed in ((0, True), (1, False), (2, False)):
            runs.append(tmp / f"run-report-{shift}.json")
            runs[-1].write_text(json.dumps(partition(src, nodes, shift, changed)))
        record, _ = timed(["baseline", "record", "--system", SYSTEM, "--from", str(runs[1]),
                           "--from", str(runs[2])], env)
        summary, lines = timed(["acceptance", "summary", str(runs[0]), "--system", SYSTEM,
                                "--mode", MODE], env, ok=(0, 1, 4))
        verdict = runs[0].parent / f"verdict-{runs[0].name}"
        report, out = timed(["report", "--run", str(runs[0]), "--system", SYSTEM,
                             "--no-compare", "--record", str(verdict),
                             "--output", str(tmp / "reports")], env)
        folder = Path(out[0].strip())
        row = {"nodes": nodes, "values": _values(runs[0]),
               "run_report_mb": round(runs[0].stat().st_size / 2**20, 1),
               "summary": summary, "report": report, "baseline_record": record,
               "acceptance_line": next((ln for ln in lines if ln.startswith("ACCEPTANCE")), ""),
               "slow_nodes": sum(1 for i in range(nodes) if i % SLOW_EVERY == SLOW_FIRST),
               "nodes_named": sum(ln.count("nid") for ln in lines if ln.startswith("NODES")),
               "report_pages_mb": round(sum(p.stat().st_size for p in folder.rglob("*")
                                            if p.is_file()) / 2**20, 1)}
    print(f"{nodes:>5} nodes, {row['values']} values: summary {summary['cpu_s']:.1f} s CPU "
          f"({summary['wall_s']:.1f} s wall), {summary['peak_mb']} MB; report "
          f"{report['cpu_s']:.1f} s CPU ({report['wall_s']:.1f} s wall), {report['peak_mb']} MB",
          flush=True)
    return row


def _values(run: Path) -> int:
    data = json.loads(run.read_text())
    return sum(len(tc.get("perfvalues") or {}) for tc in data["runs"][0]["testcases"])


def listing_rss(nodes: int) -> dict:
    """ReFrame's peak memory and seconds listing the family with ``--distribute=all`` on a
    slurm.conf of ``nodes`` nodes, two started (``distribute_scale``'s cluster)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from slurm_nodes import CONF_VAR, SlurmNodes
    with tempfile.TemporaryDirectory(prefix=f"partition-cost-{nodes}-") as tmp:
        cluster = SlurmNodes(Path(tmp) / "cluster", nodes)
        cluster.root.mkdir()
        os.chmod(cluster.root, 0o700)
        try:
            cluster.start(started=2)
            env = {**os.environ, CONF_VAR: str(cluster.conf), "SLURM_CONF": str(cluster.conf),
                   "PLACEMENT_RESULTS": str(Path(tmp) / "results")}
            cmd = [str(ROOT / ".venv" / "bin" / "reframe"), "-C", str(ROOT / "config" / "settings.py"),
                   "-c", str(ROOT / "reframe_tests" / "node_health.py"),
                   "--system", "testnodes:batch", "-t", "nodes", "-t", "quick",
                   "--prefix", str(Path(tmp) / "rfm"), "--distribute=all", "-l"]
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", _PEAK, *cmd], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=1800, check=False)
            took = time.perf_counter() - t
        finally:
            cluster.stop()
    lines = proc.stdout.splitlines()
    if proc.returncode or not lines or not lines[-1].startswith("PEAK "):
        raise SystemExit(f"partition_cost: reframe -l failed: {proc.stdout[-600:]}")
    found = [ln for ln in lines if ln.startswith("Found ")]
    return {"nodes": nodes, "cases": int(found[-1].split()[1]) if found else 0,
            "wall_s": round(took, 2), "peak_mb": round(float(lines[-1].split()[1]))}


#: run in a fresh process: the command as its one child, then that child's peak memory
#: (its own children, Slurm's commands, are far smaller)
_PEAK = ("import resource, subprocess, sys\n"
         "rc = subprocess.run(sys.argv[1:]).returncode\n"
         "print('PEAK', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
         "sys.exit(rc)\n")


def exponent(rows: list[dict], part: str) -> float | None:
    """The slope of log(CPU seconds) of ``part`` on log(nodes): 1 for a linear cost."""
    if len(rows) < 2:
        return None
    import numpy as np
    return float(np.polyfit(np.log([r["nodes"] for r in rows]),
                            np.log([r[part]["cpu_s"] for r in rows]), 1)[0])


def page_block(result: dict) -> str:
    """The reference page's table, generated from the results JSON."""
    rows = ["| nodes | values | run report (MB) | summary CPU s | summary wall s | summary "
            "peak MB | report CPU s | report wall s | report peak MB | nodes in NODES lines / "
            "made slower |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in result["sizes"]:
        s, p = r["summary"], r["report"]
        rows.append(f"| {r['nodes']} | {r['values']} | {r['run_report_mb']} | {s['cpu_s']:.1f} "
                    f"| {s['wall_s']:.1f} | {s['peak_mb']} | {p['cpu_s']:.1f} | "
                    f"{p['wall_s']:.1f} | {p['peak_mb']} | {r['nodes_named']} / "
                    f"{r['slow_nodes']} |")
    exp = result["exponent"]
    text = [f"Fitted exponent of the CPU time in the number of nodes: summary "
            f"**{exp['summary']:.2f}**, report **{exp['report']:.2f}**." if exp["summary"]
            is not None else "",
            f"Goal: at {GOAL_NODES} nodes, the summary and the report each under "
            f"{GOAL_S:.0f} s of CPU time and {GOAL_MB} MB; met: **{'yes' if result['met'] else 'no'}**. "
            f"{result['cpus']} CPUs, load average {result['load'][0]:.1f} at the start and "
            f"{result['load'][1]:.1f} at the end (wall time is CPU time plus waiting for a "
            f"core)."]
    lst = result.get("listing")
    if lst:
        peak = (f"peak {lst['peak_mb']} MB" if lst.get("peak_mb") is not None
                else "its peak memory not measured")
        text.append(f"ReFrame listing the family on a {lst['nodes']}-node slurm.conf "
                    f"(`--distribute=all -l`, {lst['cases']} cases): {lst['wall_s']:.1f} s, "
                    f"{peak}.")
    return "\n".join([BEGIN, *rows, "", " ".join(t for t in text if t), END])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="250,500,1000")
    ap.add_argument("--listing", action="store_true",
                    help="also ReFrame's peak memory listing a 1,000-node partition")
    args = ap.parse_args(argv)
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",")})
    except ValueError:
        print(f"partition_cost: --sizes {args.sizes!r}: comma-separated node counts",
              file=sys.stderr)
        return 2
    if GOAL_NODES not in sizes or min(sizes) < 3:
        print(f"partition_cost: --sizes needs {GOAL_NODES} and no size under 3", file=sys.stderr)
        return 2
    src = node_sessions()
    load0 = os.getloadavg()[0]
    rows = [measure(src, n) for n in sizes]
    big = next(r for r in rows if r["nodes"] == GOAL_NODES)
    met = all(big[k]["cpu_s"] < GOAL_S and big[k]["peak_mb"] < GOAL_MB
              for k in ("summary", "report"))
    result = {"goal": {"nodes": GOAL_NODES, "seconds": GOAL_S, "peak_mb": GOAL_MB},
              "met": met, "source": SOURCE, "node_sessions": len(src[0]),
              "cpus": os.cpu_count(), "load": [load0, os.getloadavg()[0]],
              "exponent": {k: exponent(rows, k) for k in ("summary", "report")},
              "sizes": rows}
    if args.listing:
        result["listing"] = listing_rss(GOAL_NODES)
        print(f"reframe -l, {GOAL_NODES} nodes: {result['listing']}", flush=True)
    atomic.write_text(RESULTS, json.dumps(result, indent=1) + "\n")
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(result))
    print(f"goal ({GOAL_NODES} nodes: summary and report under {GOAL_S:.0f} s and "
          f"{GOAL_MB} MB each): {'met' if met else 'MISSED'}; wrote {RESULTS}, {PAGE}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
