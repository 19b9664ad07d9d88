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
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from . import regular_file
from .errors import PlacementError


def write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it, then rename it over ``path``.

    The new file gets ``mode``, else keeps the old one's permissions (0644 for a new file):
    reports and reference files are meant to be read by others, and ``mkstemp`` makes
    files private. A symbolic link at ``path`` is replaced, never written through (its
    target's mode is not read). An error (a full disk) names ``path``, and leaves the old
    file as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            st = os.lstat(path)
            mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o644
        except FileNotFoundError:
            mode = 0o644
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


def copy_text(src: Path, dst: Path, what: str = "file", max_bytes: int = 2**30) -> None:
    """Copy a text file through :func:`write_text`: ``dst`` is the whole of ``src`` or
    untouched, readable by no one ``src`` was not (a 0600 file's copy is 0600). ``src`` must
    be a regular file (:mod:`.regular_file`): a link is never copied from."""
    text = regular_file.read_text(Path(src), what, max_bytes)
    write_text(dst, text, mode=stat.S_IMODE(os.lstat(src).st_mode))


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
    lock = path.with_name(f".{path.name}.lock")
    try:        # a link planted at the lock's name is never followed, nor created through
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        regular_file.refuse_special(lock, "lock file")
        raise PlacementError(f"{lock}: cannot open the lock ({exc.strerror}); nothing was "
                             "written") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
