"""Whether the partition (or the ssh host) a new system names exists, asked of its scheduler
before anything is written."""

from __future__ import annotations

import re
import shutil
import subprocess

from ..util import PlacementError


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
        if scheduler != "ssh":
            raise PlacementError(f"--host names the node of --scheduler ssh, not of "
                                 f"{scheduler}: leave it out, or give --scheduler ssh")
    if partition is not None and scheduler in ("local", "ssh"):
        raise PlacementError(f"--partition names a slurm, sge or pbs partition or queue; "
                             f"--scheduler {scheduler} has none: leave it out")
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
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise PlacementError(f"{' '.join(lister)} failed (exit {proc.returncode}): {last[0]}")
    names = [ln.split()[0].rstrip("*") for ln in proc.stdout.splitlines() if ln.strip()]
    if scheduler == "pbs":
        names = names[2:]                       # qstat -Q prints two header lines
    if partition not in names:
        raise PlacementError(f"{scheduler} has no partition or queue {partition!r} "
                             f"(it lists: {', '.join(names) or 'none'})")


def node_count(scheduler: str, partition: str | None) -> int | None:
    """The nodes in the partition or queue, as its scheduler lists them; None when it cannot
    say (PBS, or a lister that fails): the system file then asks the site.

    Why: ``extras['nodes']`` decides whether the two-node checks run and whether the node
    verdict compares nodes; a partition of four written as ``nodes: 1`` skipped both.
    Slurm prints one ``%D`` per state group (idle, down, ...), so the groups are summed;
    Grid Engine names one queue instance (``QUEUE@host``) per host.
    """
    if scheduler in ("local", "ssh"):
        return 1
    cmd = {"slurm": ["sinfo", "-h", "-p", str(partition), "-o", "%D"],
           "sge": ["qselect", "-q", str(partition)]}.get(scheduler)
    if cmd is None or shutil.which(cmd[0]) is None:
        return None
    try:
        proc = _run(cmd)
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not rows:
        return None
    if scheduler == "sge":
        return len({r.split("@", 1)[-1] for r in rows})
    return sum(int(r) for r in rows) if all(r.isdigit() for r in rows) else None
