"""Reading a file the tool was pointed at: the regular file at that path, bounded, or one line.

A baseline, a run report or a run list is named by a path that others can plant
things at. A symbolic link there would be followed to what it points at (a
baseline linked to ``/etc/shadow`` loads as YAML and ``baseline record`` copies it
to ``.prev`` for everyone to read); a FIFO blocks the reader for ever and a device
(``/dev/zero``) never ends. So each such path is opened with ``O_NOFOLLOW`` (the
last component is never followed) and ``O_NONBLOCK`` (opening a FIFO does not wait
for a writer), must be a regular file once open, and is read up to a size no file
the tool writes reaches. Compressed files are bounded by their expanded size too.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from pathlib import Path

from .errors import PlacementError

#: what the file mode says a path is, for the one line that refuses it
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def kind(mode: int) -> str:
    """What a file of ``mode`` is, in words (``""`` for a regular file)."""
    return next((words for test, words in _KINDS if test(mode)), "" if stat.S_ISREG(mode)
                else "not a regular file")


def special(path: Path) -> str:
    """What ``path`` is when it is there and is not a regular file (a symbolic link, a FIFO,
    a device), else ``""``; the path itself is looked at, never what a link points to."""
    try:
        return kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return ""


def refuse_special(path: Path, what: str) -> None:
    """One line when ``path`` is a symbolic link, FIFO, device or folder where a ``what``
    (a regular file the tool reads or replaces) belongs."""
    is_ = special(path)
    if is_:
        raise _not_regular(path, is_, what)


def read_bytes(path: Path, what: str, max_bytes: int) -> bytes:
    """The whole of the regular file ``path``, at most ``max_bytes``; else one line."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_special(path, what)
        raise PlacementError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):    # before fdopen, which names a folder by its fd ("3")
        os.close(fd)
        raise _not_regular(path, kind(st.st_mode), what)
    with os.fdopen(fd, "rb") as fp:
        if st.st_size > max_bytes:
            raise _too_large(path, what, max_bytes, f"{st.st_size} bytes, ")
        try:
            raw = fp.read(max_bytes + 1)
        except OSError as exc:
            raise PlacementError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    if len(raw) > max_bytes:        # grew since the stat
        raise _too_large(path, what, max_bytes)
    return raw


def read_text(path: Path, what: str, max_bytes: int) -> str:
    """:func:`read_bytes` as UTF-8 text; another encoding is one line that quotes none of it."""
    raw = read_bytes(path, what, max_bytes)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlacementError(f"{path}: not UTF-8 text (byte {exc.start}); a {what} is UTF-8, "
                             "nothing was read or written") from None


#: how much :func:`gunzip` expands at a time
_GUNZIP_PIECE = 16 * 2**20


def gunzip(raw: bytes, path: Path, what: str, max_bytes: int) -> bytes:
    """``raw`` (gzip data) expanded, stopping past ``max_bytes``: a small file of zeros never
    fills the memory before it is refused."""
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    # a piece at a time: one call bounded by max_bytes held its output twice (1.2 GB for
    # a 512 MiB bound) before the refusal
    pieces, size, rest = [], 0, raw
    try:
        while not inflate.eof and size <= max_bytes:
            piece = inflate.decompress(rest, _GUNZIP_PIECE)
            rest = inflate.unconsumed_tail
            if not piece and not rest:
                break                   # input ended before the stream did
            pieces.append(piece)
            size += len(piece)
    except zlib.error:
        raise PlacementError(f"{path}: not a whole gzip file (the {what} is damaged or cut "
                             "short); nothing was read") from None
    if size > max_bytes:
        raise PlacementError(f"{path}: expands to more than {max_bytes // 2**20} MiB, more "
                             f"than any {what} a run writes; nothing was read")
    out = b"".join(pieces)
    del pieces
    if not inflate.eof:
        raise PlacementError(f"{path}: not a whole gzip file (the {what} is cut short); "
                             "nothing was read")
    return out


def _not_regular(path: Path, is_: str, what: str) -> PlacementError:
    return PlacementError(f"{path}: {is_}, not a regular file: a {what} is never read or "
                          "written through one (put the file itself there); nothing was read "
                          "or written")


def _too_large(path: Path, what: str, max_bytes: int, size: str = "") -> PlacementError:
    return PlacementError(f"{path}: {size}larger than any {what} this project writes (at most "
                          f"{max_bytes // 2**20} MiB accepted); nothing was read or written")
