"""Finding the NPB binaries (``bt.A.x``, ``cg.C.x``, ...) without ever building them.

The suite does not ship NPB. Binaries come, in this order, from a folder named
by the ReFrame variable ``npb_dir`` (``-S npb_dir=DIR``), from ``$NPB_DIR``,
from the Spack environment's view (``<repo>/.spack-env/view/bin``, then the
active ``$SPACK_ENV``'s), and from ``PATH``. NPB 3.x OpenMP names each binary
``<bench>.<CLASS>.x``, one per problem class, so a class that was not built is
missing on its own.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = ("BT", "CG", "EP", "FT", "SP", "LU", "MG", "IS")
CLASSES = ("S", "W", "A", "B", "C", "D", "E")

INSTALL_HINT = (
    "install NPB 3.4 (OpenMP) with `spack -e . install` (the Spack environment's view "
    "then holds bt.A.x ...), or build it from NASA's tarball with `placement npb build "
    "--tarball NPB3.4.x.tar.gz --classes S,W,A` and pass the folder it names with "
    "`-S npb_dir=DIR` or `NPB_DIR=DIR`")


def binary_name(benchmark: str, npb_class: str) -> str:
    """NPB's own name for a benchmark built for one class: ``bt.A.x``."""
    return f"{benchmark.lower()}.{npb_class.upper()}.x"


@dataclass(frozen=True)
class Located:
    """Where a binary was looked for and found (``path`` None when absent)."""

    path: str | None
    source: str
    searched: tuple[str, ...]

    def why_missing(self, benchmark: str, npb_class: str) -> str:
        name = binary_name(benchmark, npb_class)
        where = "; ".join(self.searched) or "nowhere"
        return f"NPB binary {name} not found (searched: {where}): {INSTALL_HINT}"


def candidate_dirs(npb_dir: str | None = None, repo: Path | None = None,
                   environ: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """The folders searched, in order, as (label, folder); PATH is searched after these."""
    env = os.environ if environ is None else environ
    out: list[tuple[str, str]] = []
    if npb_dir:
        out.append(("npb_dir variable", npb_dir))
    if env.get("NPB_DIR"):
        out.append(("NPB_DIR", env["NPB_DIR"]))
    if repo is not None:
        out.append(("Spack view", str(repo / ".spack-env" / "view" / "bin")))
    if env.get("SPACK_ENV"):
        out.append(("active Spack env", str(Path(env["SPACK_ENV"]) / ".spack-env" / "view" / "bin")))
    return out


def locate(benchmark: str, npb_class: str, npb_dir: str | None = None,
           repo: Path | None = None, environ: dict[str, str] | None = None) -> Located:
    """Find one binary; an explicitly named folder that lacks it still lets the search go on.

    Falling through keeps a partial build usable (class S in ``NPB_DIR``,
    class C from the Spack view), and the message lists every place tried.
    """
    name = binary_name(benchmark, npb_class)
    env = os.environ if environ is None else environ
    searched: list[str] = []
    for label, folder in candidate_dirs(npb_dir, repo, env):
        named = label in ("npb_dir variable", "NPB_DIR")
        # a folder the user named that does not exist is most likely a typo: say so
        searched.append(f"{label} {folder}" + (" (no such folder)"
                                               if named and not os.path.isdir(folder) else ""))
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return Located(os.path.abspath(path), label, tuple(searched))
    found = shutil.which(name, path=env.get("PATH"))
    searched.append("PATH")
    return Located(os.path.abspath(found) if found else None, "PATH", tuple(searched))
