"""The text of a system file (``config/systems/NAME.py``, the lines a site tunes marked
``# site:``), where it and its topology go, and the names, schedulers and launchers it takes.
"""

from __future__ import annotations

import re
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


