"""The text of a system file (``config/systems/NAME.py``, the lines a site tunes marked
``# site:``), where it and its topology go, and the names, schedulers and launchers it takes.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from pathlib import Path

from ..util import PlacementError

#: Scheduler -> (ReFrame's scheduler backend, default launcher).
SCHEDULERS = {
    "slurm": ("squeue", "srun"),
    "sge": ("sge-access", "local"),
    "pbs": ("pbs", "mpirun"),
    "local": ("local", "local"),
    "ssh": ("ssh", "local"),
}
LAUNCHERS = ("local", "srun", "mpirun", "mpiexec")
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


def check_name(name: str) -> str:
    """``name`` when it can name a system; else one line, exit 2."""
    if not _NAME.fullmatch(name):
        raise PlacementError(f"system name {name!r}: use lower-case letters, digits, '-' and "
                             "'_', starting with a letter (at most 40)")
    return name


def root() -> Path:
    """The suite's checkout (config/, reframe_tests/): from a Spack view the package is
    installed apart from it, so :func:`..util.paths.repo_root` finds it."""
    from ..util import paths
    return paths.repo_root()


def systems_dir() -> Path:
    """Where system files go: ``PLACEMENT_SYSTEMS`` (a site's own folder) or config/systems."""
    from ..util import paths
    return paths.env_path("PLACEMENT_SYSTEMS") or root() / "config" / "systems"


def topology_file(name: str) -> Path:
    """The node's topology, beside the system file (topologies/ for the checkout's own)."""
    from ..util import paths
    env = paths.env_path("PLACEMENT_SYSTEMS")
    return env / f"{name}.xml" if env else root() / "topologies" / f"{name}.xml"


@dataclass
class Answers:
    """What a system file is written from: the site's answers (name, scheduler, partition,
    launcher, access, ssh host) and what ``site new`` found (the partition's node count, the
    login host's pattern, the node captured, whether a task starts on a second node)."""

    name: str
    scheduler: str
    partition: str | None
    launcher: str
    access: list[str]
    host: str | None = None
    #: nodes in the partition as its scheduler lists them; None: it could not say
    nodes: int | None = None
    #: the ``hostnames`` pattern of the host ``site new`` runs on; None: it could not tell
    login: str | None = None
    #: the node whose topology was captured (its hwloc HostName); None: not known yet
    captured: str | None = None
    #: why a task cannot be started on a second node ("" it can; None: not probed)
    two_nodes: str | None = None


def login_pattern(hostname: str | None = None) -> str | None:
    """A ``hostnames`` pattern matching this host (``^short(\\.|$)``, short or fully qualified),
    or None when its name says nothing (empty, ``localhost``): a system whose pattern is
    its own name (``^mycluster``) matched no login node, so ReFrame never selected it."""
    short = (hostname if hostname is not None else socket.gethostname()).split(".")[0]
    if not short or short.startswith("localhost"):
        return None
    return "^" + re.escape(short) + r"(\.|$)"


def _hostnames_line(a: Answers) -> str:
    if a.login is None:
        return (f"            'hostnames': [{f'^{a.name}'!r}],      # site: the login hosts' "
                "names (this host's name said nothing): ReFrame selects the system by them")
    pattern = f"r'{a.login}'" if "'" not in a.login and not a.login.endswith("\\") \
        else repr(a.login)
    return (f"            'hostnames': [{pattern}],   # site: the login hosts (written: the one "
            "`site new` ran on)")


def _extras_lines(a: Answers, topo_path: Path | None) -> list[str]:
    """``extras``: the topology, the node count (the scheduler's), one topology per node
    where nodes can differ, and whether a task starts on a second node."""
    pad = " " * 20
    topo = _relative(topo_path) if topo_path is not None else "None"
    captured = f"captured on {a.captured}" if a.captured else "captured on a compute node"
    lines = [f"{pad}'extras': {{", f"{pad}    'topology': {topo},   # {captured}"]
    if a.nodes is None:
        lines.append(f"{pad}    'nodes': 1,   # site: nodes in the partition ({a.scheduler} "
                     "did not say)")
    elif a.scheduler in ("local", "ssh"):
        lines.append(f"{pad}    'nodes': 1,   # one node: {a.host or 'this host'}")
    else:
        lines.append(f"{pad}    'nodes': {a.nodes},   # the partition's nodes as {a.scheduler} "
                     "lists them")
    if a.nodes is None or a.nodes > 1:
        lines.append(f"{pad}    'topology_per_node': True,   # a pinned case: its node's own "
                     "(nodes can differ)")
    if a.two_nodes is not None:
        why = (f"   # site: no task started on a second node: {a.two_nodes}"[:200]
               if a.two_nodes else "   # a task started on a second node")
        lines.append(f"{pad}    'two_node_launch': {not a.two_nodes!r},{why}")
    return lines + [f"{pad}}},"]


def _captured_lines(a: Answers) -> list[str]:
    """The docstring's word on which node the topology is from, and what that leaves open."""
    if not a.captured:
        return []
    if a.nodes == 1:
        return ["", f"The topology was captured on node {a.captured}."]
    of = f"one of {a.nodes}" if a.nodes else "one node"
    return ["", f"The topology was captured on node {a.captured} ({of}): a case pinned to a "
            "node", "(``--distribute``) captures that node's own; a case pinned to none uses "
            "this one."]


def system_file(a: Answers, topo_path: Path | None) -> str:
    """The text of ``config/systems/NAME.py``; the lines a site tunes are marked ``# site:``."""
    name, scheduler, partition, launcher, access, host = (
        a.name, a.scheduler, a.partition, a.launcher, a.access, a.host)
    backend = SCHEDULERS[scheduler][0]
    pname = partition or ("node" if scheduler == "ssh" else "default")
    lines = [
        f'"""{name}: written by `placement site new` from its compute node\'s own topology.',
        "",
        f"Scheduler {scheduler}, partition {pname}, launcher {launcher}. Edit the lines marked",
        "``# site:``; run `placement site new` again after a node change to see what changed.",
        *_captured_lines(a),
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
        _hostnames_line(a),
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
    lines += _extras_lines(a, topo_path)
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
    for base, var in ((systems_dir().resolve(), "HERE"), (root(), "ROOT")):
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


