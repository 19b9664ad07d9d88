"""A file's sha256, read in blocks: what names NPB's cached build and checks a tarball in a
Spack mirror (``scripts/spack-mirror.py`` imports it, with the standard library alone)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256(path: Path) -> str:
    """The hex sha256 of the file ``path``, read 1 MiB at a time (a tarball need not fit in
    memory)."""
    digest = hashlib.sha256()
    with path.open("rb") as fp:
        for chunk in iter(lambda: fp.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
