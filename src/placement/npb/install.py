"""Installing a verified NPB build: where it goes, reuse of an earlier one, the atomic swap.

An install is a folder holding ``bin/<bench>.<CLASS>.x`` and ``npb-build.json`` (what
was built from which tarball, with which compiler and flags, and each binary's
verification). The default folder is a cache outside any checkout,
``${XDG_CACHE_HOME:-~/.cache}/placement/npb-<first 12 hex of the tarball's sha256>``,
so clones and reruns share one build. Asking again for binaries an install already
holds rebuilds nothing; asking for more builds the union, so nothing installed is lost.

The build happens in a temporary folder beside the install and is renamed into
place only once every binary verified; two builders of one folder take turns
(:func:`placement.util.atomic.locked`), and the second then finds the first's binaries.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..util import PlacementError, atomic, regular_file, sha256
from . import build, locate

MANIFEST = "npb-build.json"
#: The benchmarks and classes a plain ``placement npb build`` makes: quick mode's.
DEFAULT_BENCHMARKS = tuple(b.lower() for b in locate.BENCHMARKS)
DEFAULT_CLASSES = ("S", "W")


@dataclass(frozen=True)
class Installed:
    """An install's binaries folder and whether this call built anything."""

    bin_dir: Path
    built: bool
    names: tuple[str, ...]


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/placement`` (``~/.cache/placement``): outside every checkout."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "placement"


def default_prefix(digest: str, environ: dict[str, str] | None = None) -> Path:
    return cache_dir(environ) / f"npb-{digest[:12]}"


def read_manifest(prefix: Path) -> dict:
    """The install's record, or {} where there is none (or it is not ours)."""
    try:
        data = json.loads((prefix / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _present(prefix: Path, names: list[str]) -> bool:
    return all(os.access(prefix / "bin" / n, os.X_OK) for n in names)


def _remove_leftovers(prefix: Path) -> None:
    """Temporary folders of a builder that was killed; call it holding the lock."""
    for pattern in (f".{prefix.name}.build-*", f".{prefix.name}.old-*"):
        for left in prefix.parent.glob(pattern):
            shutil.rmtree(left, ignore_errors=True)


def _swap_in(new: Path, prefix: Path) -> None:
    """Rename the verified build into place; an older install goes only once it is replaced."""
    old = None
    if prefix.is_dir() and not any(prefix.iterdir()):
        prefix.rmdir()                              # an empty folder made for it
    if prefix.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{prefix.name}.old-", dir=prefix.parent))
        os.rename(prefix, old / "install")
    os.rename(new, prefix)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def install(tarball: Path, prefix: Path | None, benchmarks: list[str], classes: list[str],
            progress: build.Progress) -> Installed:
    """Build (or reuse) the binaries; returns the ``bin`` folder to point ``NPB_DIR`` at."""
    build.omp_folder(tarball)                  # not NPB: say so before anything else
    digest = sha256(tarball)
    prefix = (prefix or default_prefix(digest)).absolute()
    is_ = regular_file.special(prefix)
    if is_ and is_ != "a directory":        # checked before the build, not at its end
        raise PlacementError(f"{prefix}: {is_}: an NPB install is never made through one; "
                             "choose another --prefix")
    with atomic.locked(prefix):
        _remove_leftovers(prefix)
        have = read_manifest(prefix)
        if not have and prefix.exists() and not (prefix.is_dir() and not any(prefix.iterdir())):
            raise PlacementError(f"{str(prefix)!r} exists and is not an NPB install made by "
                                 f"`placement npb build`: choose another --prefix (or an "
                                 f"empty folder)")
        if have and have.get("tarball_sha256") != digest:
            raise PlacementError(f"{str(prefix)!r} holds NPB built from another tarball "
                                 f"(sha256 {str(have.get('tarball_sha256'))[:12]}...): choose "
                                 f"another --prefix or remove it")
        names = [locate.binary_name(b, c) for b in benchmarks for c in classes]
        if have and _present(prefix, names):
            return Installed(prefix / "bin", False, tuple(names))
        # build the union with what is installed: adding a class never drops another
        benchmarks = list(dict.fromkeys(list(have.get("benchmarks", [])) + benchmarks))
        classes = list(dict.fromkeys(list(have.get("classes", [])) + classes))
        log = prefix.parent / f"{prefix.name}.build.log"
        work = Path(tempfile.mkdtemp(prefix=f".{prefix.name}.build-", dir=prefix.parent))
        try:
            compilers, verified = build.build(tarball, work / "install", benchmarks,
                                                  classes, log, progress)
            record = {"tarball": str(tarball.absolute()), "tarball_sha256": digest,
                      "benchmarks": benchmarks, "classes": classes,
                      "fc": compilers.fc, "fc_version": compilers.fc_version,
                      "fflags": compilers.fflags, "cc": compilers.cc,
                      "make": "make BENCH CLASS=X SHELL=/bin/bash",
                      "verified": {v.name: v.verification for v in verified}}
            atomic.write_text(work / "install" / MANIFEST, json.dumps(record, indent=1) + "\n")
            shutil.copy2(log, work / "install" / "build.log")
            _swap_in(work / "install", prefix)
        finally:
            with contextlib.suppress(OSError):
                shutil.rmtree(work)
        return Installed(prefix / "bin", True, tuple(v.name for v in verified))
