"""Writing a file so that a reader sees the old content or the new, never half of either.

Two processes that read, change and write the same file (two ``placement
baseline record`` on one system) serialise on :func:`locked`; a writer killed
between its temporary file and the rename leaves a ``.<name>.*.tmp`` that the
next writer holding the lock removes (:func:`remove_leftovers`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it, then rename it over ``path``.

    The new file keeps the old one's permissions (0644 for a new file): reports and
    reference files are meant to be read by others, and ``mkstemp`` makes files private.
    An error (a full disk) names ``path``, and leaves the old file as it was.
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
    except OSError as exc:
        _unlink(tmp)
        raise OSError(exc.errno, f"{exc.strerror}; {path.name} was left as it was",
                      str(path)) from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def copy_text(src: Path, dst: Path) -> None:
    """Copy a text file through :func:`write_text`: ``dst`` is the whole of ``src`` or untouched."""
    write_text(dst, Path(src).read_text())


def remove_leftovers(path: Path) -> list[Path]:
    """Remove temporary files a killed writer of ``path`` left; call it holding :func:`locked`."""
    path = Path(path)
    gone = []
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        _unlink(str(tmp))
        gone.append(tmp)
    return gone


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock for updating ``path`` (on ``.<name>.lock`` beside it).

    ``flock`` is released by the kernel when the holder dies, so a killed
    process never leaves the file locked.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
