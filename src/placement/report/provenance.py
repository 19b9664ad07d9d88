"""Where a report's numbers come from: host, topology, compilers, versions, commit.

Run facts (host, ReFrame version, session) come from the run report; tool
versions (compilers, Spack lock, packages) are read where the report is
generated, which ``make run`` makes the same machine, and are labelled so.
"""

from __future__ import annotations

import hashlib
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

from ..judgement import RunReport

COMPILERS = ("gcc", "gfortran", "clang", "icx", "ifx")


def _first_line(cmd: list[str]) -> str | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (r.stdout or r.stderr).strip()
    return text.splitlines()[0] if text else None


def topology_summary() -> str:
    """One line per level of the live machine (hwloc), or why it is unknown."""
    try:
        from ..engine import topology
        return topology.load(None).summary()
    except Exception as exc:  # the report must not fail for a missing lstopo
        return f"unknown ({exc})"


def distinct(reports: list[RunReport], key: str) -> list[str]:
    """Every distinct non-empty value of a recorded variable, in run order."""
    seen: dict[str, None] = {}
    for r in reports:
        for c in r.cases:
            v = c.raw.get(key)
            if v:
                seen.setdefault(str(v), None)
    return list(seen)


def npb_builds(reports: list[RunReport]) -> list[str]:
    """Every distinct NPB build the runs used (Fortran and C benchmarks differ)."""
    return distinct(reports, "npb_build")


def npb_version(reports: list[RunReport]) -> str | None:
    """The NPB version the runs recorded (the first, if several)."""
    versions = distinct(reports, "npb_version")
    return versions[0] if versions else None


def spack_lock(root: Path) -> str | None:
    lock = root / "spack.lock"
    if lock.is_file():
        return "sha256:" + hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    return None


def collect(reports: list[RunReport], root: Path, local: bool = True) -> list[tuple[str, str]]:
    """(label, value) rows for the provenance table."""
    from ..judgement import git_commit
    rows: list[tuple[str, str]] = []
    for r in reports:
        s = r.session
        rows += [(f"run {s.get('uuid', '?')[:8]}", f"{s.get('time_start', '?')} on host "
                  f"{s.get('hostname', '?')}, ReFrame {s.get('version', '?')}, "
                  f"{s.get('num_cases', '?')} cases, {s.get('num_failures', '?')} failed"),
                 (f"run {s.get('uuid', '?')[:8]} command", str(s.get("cmdline", "?"))),
                 (f"run {s.get('uuid', '?')[:8]} report", str(r.path))]
        systems = sorted({c.sysenv for c in r.cases})
        if systems:
            rows.append((f"run {s.get('uuid', '?')[:8]} systems", ", ".join(systems)))
    rows += [("topology (compute node)", t) for t in distinct(reports, "node_topology")]
    rows += [("kernel.numa_balancing (compute node)", b)
             for b in distinct(reports, "numa_balancing")]
    rows.append(("NPB version", npb_version(reports) or "not recorded by the run"))
    rows += [("NPB build", b) for b in npb_builds(reports)]
    rows += [("NPB Spack spec", spec) for spec in distinct(reports, "npb_spec")]
    rows.append(("git commit (report written from)", git_commit(root) or "not a git checkout"))
    if not local:
        return rows
    rows.append(("report host", f"{platform.node()} ({platform.machine()}, "
                                f"{platform.platform(terse=True)})"))
    rows.append(("topology (report host)", topology_summary()))
    for cc in COMPILERS:
        v = _first_line([cc, "--version"])
        if v:
            rows.append((f"compiler {cc} (report host)", v))
    lock = spack_lock(root)
    if lock:
        rows.append(("spack.lock", lock))
    pkgs = []
    for p in ("reframe-hpc", "placement", "matplotlib", "scipy", "numpy", "PyYAML"):
        try:
            pkgs.append(f"{p} {metadata.version(p)}")
        except metadata.PackageNotFoundError:
            pass
    rows.append(("packages (report host)", ", ".join(pkgs) + f", Python {platform.python_version()}"))
    return rows
