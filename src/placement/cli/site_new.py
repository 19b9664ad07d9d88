"""``placement site new NAME``: a system file written from the cluster's own compute node.

As ``spack compiler find`` writes configuration from what is on the machine, this
asks the scheduler for a compute node of the partition, captures its topology
there (``lstopo --of xml`` through the partition's scheduler and launcher, the
job :mod:`placement.testlib.node_topology` submits), writes
``config/systems/NAME.py`` (one file per system, the lines a site tunes marked
``# site:``) with the topology beside it, shows the thread sweep and the maps the
system gets, then runs the binding and memory-policy checks there and says in
one line whether the node is ready. Run again on a changed node, it says what
changed (PUs, packages, NUMA nodes, numbering) before replacing the file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..engine import maps, topology
from ..util import PlacementError, atomic

#: Scheduler -> (ReFrame's scheduler backend, default launcher).
SCHEDULERS = {
    "slurm": ("squeue", "srun"),
    "sge": ("sge-access", "local"),
    "pbs": ("pbs", "mpirun"),
    "local": ("local", "local"),
    "ssh": ("ssh", "local"),
}
LAUNCHERS = ("local", "srun", "mpirun", "mpiexec")
#: The checks that say whether a node places threads and memory as computed.
READY_CHECKS = r"BindingRenderingCheck|MemoryPolicyCheck"
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def _root() -> Path:
    """The suite's checkout (config/, reframe_tests/): from a Spack view the package is
    installed apart from it, so :func:`..util.paths.repo_root` finds it."""
    from ..util import paths
    return paths.repo_root()


def systems_dir() -> Path:
    """Where system files go: ``PLACEMENT_SYSTEMS`` (a site's own folder) or config/systems."""
    from ..util import paths
    return paths.env_path("PLACEMENT_SYSTEMS") or _root() / "config" / "systems"


def topology_file(name: str) -> Path:
    """The node's topology, beside the system file (topologies/ for the checkout's own)."""
    from ..util import paths
    env = paths.env_path("PLACEMENT_SYSTEMS")
    return env / f"{name}.xml" if env else _root() / "topologies" / f"{name}.xml"


def _run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


#: An ssh destination: ``[user@]host``, the host RFC 1123 labels (or an IPv4 address) and the
#: user a login name; neither can start with '-', so ssh never reads it as an option
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"(?:[a-z_][a-z0-9_.-]{{0,31}}@)?{_LABEL}(?:\.{_LABEL})*")


def check_host(host: str) -> str:
    """``host`` when it is an ssh destination (``[user@]name``); else one line, exit 2.

    The value goes to ssh's command line (ReFrame's ssh scheduler) and into the system
    file: ``-oProxyCommand=...`` would be an ssh option that runs a command.
    """
    if not _HOST.fullmatch(host) or len(host) > 253 + 33:
        raise PlacementError(f"--host {host!r} is not a host name: expected [user@]host, the "
                             "host dot-separated labels of letters, digits and '-' (RFC 1123), "
                             "never starting with '-'")
    return host


def check_partition(scheduler: str, partition: str | None, host: str | None) -> None:
    """One line, exit 2, when the partition or host the answers name does not exist."""
    if host is not None:
        check_host(host)
    if scheduler == "ssh":
        if not host:
            raise PlacementError("--scheduler ssh needs --host (the compute node to reach)")
        return
    if scheduler == "local":
        return
    if not partition:
        raise PlacementError(f"--scheduler {scheduler} needs --partition (the partition or "
                             "queue whose nodes the system describes)")
    lister = {"slurm": ["sinfo", "-h", "-o", "%R"], "sge": ["qconf", "-sql"],
              "pbs": ["qstat", "-Q"]}[scheduler]
    if shutil.which(lister[0]) is None:
        raise PlacementError(f"{lister[0]} is not on PATH: is this a {scheduler} submit host?")
    proc = _run(lister)
    if proc.returncode != 0:
        raise PlacementError(f"{' '.join(lister)} failed: "
                             f"{(proc.stderr or proc.stdout).strip().splitlines()[-1:] or '?'}")
    names = [ln.split()[0].rstrip("*") for ln in proc.stdout.splitlines() if ln.strip()]
    if scheduler == "pbs":
        names = names[2:]                       # qstat -Q prints two header lines
    if partition not in names:
        raise PlacementError(f"{scheduler} has no partition or queue {partition!r} "
                             f"(it lists: {', '.join(names) or 'none'})")


def system_file(name: str, scheduler: str, partition: str | None, launcher: str,
                access: list[str], host: str | None, topo_path: Path | None) -> str:
    """The text of ``config/systems/NAME.py``; the lines a site tunes are marked ``# site:``."""
    backend = SCHEDULERS[scheduler][0]
    pname = partition or ("node" if scheduler == "ssh" else "default")
    lines = [
        f'"""{name}: written by `placement site new` from its compute node\'s own topology.',
        "",
        f"Scheduler {scheduler}, partition {pname}, launcher {launcher}. Edit the lines marked",
        "``# site:``; run `placement site new` again after a node change to see what changed.",
        '"""',
        "",
        "import os",
        "",
        "from common import ROOT, available_environs",
        "",
        "HERE = os.path.dirname(os.path.abspath(__file__))",
        "",
        "site_configuration = {",
        "    'systems': [",
        "        {",
        f"            'name': {name!r},",
        f"            'descr': {f'{name} ({scheduler})'!r},",
        f"            'hostnames': [{f'^{name}'!r}],      # site: the hosts ReFrame runs on",
        "            'modules_system': 'nomod',",
        "            'partitions': [",
        "                {",
        f"                    'name': {re.sub(r'[^a-zA-Z0-9_-]', '_', pname)!r},",
        f"                    'descr': {f'{scheduler} {pname}: one whole node per job'!r},",
        f"                    'scheduler': {backend!r},"
        + ("   # site: 'slurm' polls with sacct where accounting is on"
           if backend == "squeue" else ""),
        f"                    'launcher': {launcher!r},",
        f"                    'access': {access!r},   # site: account, QoS, exclusivity",
    ]
    if scheduler == "ssh":
        lines.append(f"                    'sched_options': {{'ssh_hosts': [{host!r}]}},")
    lines += [
        "                    'environs': available_environs(),",
        "                    'max_jobs': 1,                  # site: jobs at once",
        "                    'time_limit': '20m',",
    ]
    if topo_path is not None:
        rel = _relative(topo_path)
        lines.append(f"                    'extras': {{'topology': {rel}, 'nodes': 1}},"
                     "   # site: nodes in the partition")
    else:
        lines.append("                    'extras': {'topology': None, 'nodes': 1},")
    features = {"slurm": ["slurm", "srun", "exclusive"] if launcher == "srun"
                else ["slurm", "exclusive"], "sge": ["sge"], "pbs": ["pbs"], "ssh": ["ssh"],
                "local": []}[scheduler]
    if launcher == "mpirun":
        features.append("mpirun")
    lines += [f"                    'features': {features!r},",
              "                },",
              "            ],",
              "        },",
              "    ],",
              "}",
              ""]
    return "\n".join(lines)


def _relative(path: Path) -> str:
    """The topology path as the system file writes it: from ROOT or HERE when inside them."""
    path = path.resolve()
    for base, var in ((systems_dir().resolve(), "HERE"), (_root(), "ROOT")):
        try:
            rel = path.relative_to(base)
        except ValueError:
            continue
        return f"os.path.join({var}, {', '.join(repr(p) for p in rel.parts)})"
    return repr(str(path))


def default_access(scheduler: str, partition: str | None) -> list[str]:
    return {"slurm": [f"--partition={partition}", "--exclusive"],
            "sge": [f"-q {partition}", "-S /bin/bash"], "pbs": [f"-q {partition}"],
            "local": [], "ssh": []}[scheduler]


def _load_settings(rconfig, settings: Path):
    """ReFrame's configuration with every system file; one line when one of them does not
    load. Loading runs each system file (the site's own folder's too): a syntax error or a
    file that defines more than its systems ended ``site new`` for another system in a
    traceback."""
    try:
        return rconfig.load_config(str(settings))
    except Exception as exc:        # noqa: BLE001 - a site's Python file can raise anything
        if isinstance(exc, SyntaxError):
            why = f"{exc.filename}, line {exc.lineno}: SyntaxError: {exc.msg}"
        else:
            why = " ".join(str(exc).split()) or type(exc).__name__
            why = why if len(why) <= 400 else why[:400] + "..."
            why = why if type(exc).__name__ in why else f"{type(exc).__name__}: {why}"
        raise PlacementError(f"the system files do not load ({why}): fix or remove that file "
                             "first; nothing was written") from None


def capture(name: str, settings: Path) -> str:
    """The compute node's hwloc XML, through the new system's partition (ReFrame's job API)."""
    from reframe.core import config as rconfig
    from reframe.core import runtime as rruntime
    from ..testlib import node_topology

    site = _load_settings(rconfig, settings)
    site.select_subconfig(name)
    rruntime.init_runtime(site)
    part = rruntime.runtime().system.partitions[0]
    if node_topology.is_local(part):
        return topology.live_xml()
    with tempfile.TemporaryDirectory(prefix=".capture-", dir=topology_file(name).parent) as tmp:
        dest = Path(tmp) / "node.xml"
        node_topology.capture(part, dest)
        return dest.read_text()


def changes(old: topology.Topology, new: topology.Topology) -> list[str]:
    """What differs between the stored node and the one just captured, one line each."""
    out = []
    for what, a, b in (("PUs", len(old.pus), len(new.pus)),
                       ("packages", old.count("Package"), new.count("Package")),
                       ("NUMA nodes", len(old.numa_nodes), len(new.numa_nodes)),
                       ("cores", old.count("Core"), new.count("Core"))):
        if a != b:
            out.append(f"{what}: {a} -> {b}")
    if not out:
        if old.cpus != new.cpus:
            out.append("numbering: the PUs are listed in another order "
                       f"({' '.join(map(str, old.cpus[:8]))} ... -> "
                       f"{' '.join(map(str, new.cpus[:8]))} ...)")
        elif {n: c for n, c in old.numa_nodes.items()} != {n: c for n, c in
                                                           new.numa_nodes.items()}:
            out.append("numbering: the NUMA nodes hold other PUs")
    return out


def _ready_checks(name: str, settings: Path, out_dir: Path) -> tuple[dict[str, int], list[str]]:
    """Run the binding and memory-policy checks on the new system: counts and failures."""
    report = out_dir / "report.json"
    reframe = Path(sys.executable).with_name("reframe")
    cmd = [str(reframe if reframe.exists() else "reframe"), "-C", str(settings), "--system", name,
           "-c", str(_root() / "reframe_tests" / "binding_probe.py"), "-n", READY_CHECKS,
           "-p", "gnu", "--prefix", str(out_dir / "rfm"), "--report-file", str(report), "-r"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if not report.exists():
        raise PlacementError(f"the checks did not run on {name}: "
                             f"{(proc.stderr or proc.stdout).strip()[-300:]}")
    counts = {"pass": 0, "fail": 0, "skip": 0}
    failed = []
    for run in json.loads(report.read_text())["runs"][-1:]:
        for tc in run["testcases"]:
            counts[tc["result"] if tc["result"] in counts else "fail"] += 1
            if tc["result"] not in ("pass", "skip"):
                failed.append(f"{tc['display_name']}: {tc['fail_reason']}")
    return counts, failed


def _existing(paths: list[Path], name: str, force: bool) -> dict[Path, tuple[str, int] | None]:
    """Each path's text and mode (None: absent), to put back on failure; one line when one is
    there without ``--force`` (a site's tuned file, the catch-all ``generic``, a study's
    topology), or is a link, FIFO or device (never written through)."""
    from ..util import regular_file
    there = [p for p in paths if os.path.lexists(p)]
    for p in there:
        regular_file.refuse_special(p, "system or topology file")
    if there and not force:
        raise PlacementError(
            f"system {name!r} exists ({', '.join(map(str, there))}): `site new` replaces a "
            "system or topology only with --force (it then says what changed on the node); "
            "nothing was written")
    return {p: ((regular_file.read_text(p, "system or topology file", 64 * 2**20),
                 os.stat(p).st_mode & 0o777) if p in there else None) for p in paths}


def _not_the_checkout_s(name: str) -> None:
    """One line when a site's own folder (``PLACEMENT_SYSTEMS``) would get a system the
    checkout already defines (config/systems/NAME.py, ``_`` read as ``-``): ReFrame selects
    the checkout's, so ``site new bulldozer`` captured through the study's Grid Engine queue
    and ``site new generic`` wrote a second catch-all that no run would use. --force does
    not change that."""
    own = _root() / "config" / "systems"
    if systems_dir().resolve() == own.resolve():
        return
    for path in sorted(own.glob("*.py")):
        if name in (path.stem, path.stem.replace("_", "-")):
            raise PlacementError(
                f"system {name!r} is the checkout's own ({path}): one of that name in "
                f"{systems_dir()} would never be the one ReFrame selects; give the new system "
                "another name; nothing was written")


def _restore(saved: dict[Path, tuple[str, int] | None]) -> None:
    """Put each file back as :func:`_existing` found it (remove one that was not there)."""
    for p, old in saved.items():
        if old is None:
            p.unlink(missing_ok=True)
        else:
            atomic.write_text(p, old[0], mode=old[1])


def _capture_and_write(name: str, scheduler: str, args: argparse.Namespace, launcher: str,
                       access: list[str], dest: Path, topo_dest: Path,
                       settings: Path) -> topology.Topology:
    """A first file without a topology (its partition captures the node's), the node's
    topology parsed and compared with the stored one, then both files written."""
    atomic.write_text(dest, system_file(name, scheduler, args.partition, launcher, access,
                                        args.host, None))
    xml = capture(name, settings)
    # a capture that does not parse is named as the capture, not as the stored file; once
    # parsed, the topology is the one written to topo_dest
    new_topo = topology.from_xml(xml, source=f"the topology captured now for {topo_dest}")
    new_topo.source = str(topo_dest)
    if topo_dest.exists():
        try:
            old = topology.load(topo_dest)
        except PlacementError:
            old = None
        diff = changes(old, new_topo) if old else ["the stored topology could not be read"]
        if diff:
            print(f"the node changed since {topo_dest} was captured:")
            for line in diff:
                print(f"  {line}")
        else:
            print(f"the node is as {topo_dest} describes it")
    atomic.write_text(topo_dest, xml)
    atomic.write_text(dest, system_file(name, scheduler, args.partition, launcher, access,
                                        args.host, topo_dest))
    return new_topo


def new(args: argparse.Namespace) -> int:
    name = args.name
    if not _NAME.fullmatch(name):
        raise PlacementError(f"system name {name!r}: use lower-case letters, digits, '-' and "
                             "'_', starting with a letter (at most 40)")
    scheduler = args.scheduler
    launcher = args.launcher or SCHEDULERS[scheduler][1]
    check_partition(scheduler, args.partition, args.host)
    access = args.access if args.access else default_access(scheduler, args.partition)
    dest = systems_dir() / f"{name}.py"
    topo_dest = topology_file(name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    topo_dest.parent.mkdir(parents=True, exist_ok=True)
    settings = _root() / "config" / "settings.py"
    _not_the_checkout_s(name)
    saved = _existing([dest, topo_dest], name, args.force)
    print(f"site {name}: {scheduler}"
          + (f" partition {args.partition}" if args.partition else "")
          + (f" host {args.host}" if args.host else "") + f", launcher {launcher}")
    try:        # every failure until both files are written puts back what was there
        new_topo = _capture_and_write(name, scheduler, args, launcher, access, dest, topo_dest,
                                      settings)
    except BaseException:
        _restore(saved)
        raise
    print(f"wrote {dest} (lines a site tunes are marked '# site:') and {topo_dest}")
    from ..testlib import node_topology, placed
    print(f"node: {node_topology.one_line(new_topo)}")
    sweep = placed.sweep_for([len(new_topo.pus)])
    print(f"thread sweep: {', '.join(map(str, sweep))}")
    full = len(new_topo.pus)
    for strat in ("compact", "scatter"):
        cpus = maps.compute(new_topo, full, strat).cpus
        print(f"{strat} map, {full} threads: {' '.join(map(str, cpus))}")
    if args.no_check:
        print(f"NOT CHECKED {name}: run `placement site new {name} ...` without --no-check, or "
              f"reframe --system {name} -n '{READY_CHECKS}' -r")
        return 0
    with tempfile.TemporaryDirectory(prefix="placement-site-") as tmp:
        counts, failed = _ready_checks(name, settings, Path(tmp))
    for line in failed[:5]:
        print(f"  failed: {line}")
    summary = f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    if counts["fail"] or not counts["pass"]:
        print(f"NODE NOT READY {name}: binding and memory-policy checks: {summary}")
        return 1
    print(f"NODE READY {name}: binding and memory-policy checks: {summary}")
    return 0


def register(sub) -> None:
    site = sub.add_parser("site", help="describe a cluster: a system file from its compute node")
    ssub = site.add_subparsers(dest="site_command", required=True)
    p = ssub.add_parser("new", help="capture a partition's compute node and write its system file")
    p.add_argument("name", help="the system's name (config/systems/NAME.py)")
    p.add_argument("--scheduler", required=True, choices=tuple(SCHEDULERS))
    p.add_argument("--partition", help="the partition or queue (slurm, sge, pbs)")
    p.add_argument("--host", help="the compute node (ssh)")
    p.add_argument("--launcher", choices=LAUNCHERS,
                   help="default: srun under slurm, mpirun under pbs, else local")
    p.add_argument("--access", action="append",
                   help="a scheduler option for every job (repeatable; default: the partition "
                        "and whole-node exclusivity)")
    p.add_argument("--no-check", action="store_true",
                   help="write the file without running the binding checks")
    p.add_argument("--force", action="store_true",
                   help="replace the system file and topology of an existing system (after "
                        "saying what changed on the node); without it an existing one is "
                        "left as it is")
    p.set_defaults(func=new)
