"""Writing a file so that a reader sees the old content or the new, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it, then rename it over ``path``.

    The new file keeps the old one's permissions (0644 for a new file): reports and
    reference files are meant to be read by others, and ``mkstemp`` makes files private.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as fp:
            fp.write(text)
            fp.flush()
            os.fsync(fp.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
