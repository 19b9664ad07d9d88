"""A report's folder: made fresh, or one a report wrote earlier; never anyone else's files.

``placement report --output DIR`` writes into a folder it names. Emptying that folder
of every ``*.md``/``*.png`` (what a report holds) would delete a checkout's README.md
given ``--output .``, and a symbolic link planted at ``reports/<system>-<date>`` (the
name follows from the run's start) would lead the report to delete and write files in
the link's target. So a folder is either made here (``mkdir`` fails on anything already
at the name, a link included) or is one a report wrote: it holds the marker
:data:`MARKER`, which lists the files that report wrote, and only those are removed
before it is written again. What people put there (``discussion.md``, raw runs) stays.
An empty folder without the marker is taken as a new one, and one that holds just what a
report wrote before reports left a marker (its pages, tables and figures) as a report's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..util import PlacementError, atomic, regular_file

#: the file a report leaves in its folder: the names of the files it wrote, one a line
MARKER = ".placement-report"
#: a person's reading of the numbers, never replaced
DISCUSSION = "discussion.md"
_HEADER = ("# Written by `placement report`: the files below are its own and are replaced when "
           "it writes this folder again; any other file here is left alone.\n")


def _refuse(out: Path, why: str) -> PlacementError:
    return PlacementError(f"{out}: {why}; give --output a new or empty folder, or one a "
                          "report wrote; nothing was written or removed")


def _make(out: Path, root: Path) -> bool:
    """Make ``out`` and the folders between it and ``root``, following no link below
    ``root``; True when ``out`` itself was made here."""
    if os.path.lexists(root) and not root.is_dir():
        raise _refuse(root, "not a folder")    # mkdir said only "File exists"
    root.mkdir(parents=True, exist_ok=True)      # the caller's own folder
    below = [out, *[p for p in out.parents if root in p.parents]]
    made = False
    for p in reversed(below):
        try:
            os.mkdir(p, 0o755)
            made = True
        except FileExistsError:
            made = False
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                raise _refuse(p, "a symbolic link, never followed") from None
            if not stat.S_ISDIR(st.st_mode):
                raise _refuse(p, "not a folder") from None
    return made


def written_before(out: Path) -> list[str]:
    """The files the marker in ``out`` names (plain names in ``out``, never ``..`` or a
    path), ``[]`` when ``out`` is empty; a folder with other files and no marker is one
    line."""
    marker = out / MARKER
    if not os.path.lexists(marker):
        earlier = _unmarked_report(out)
        if earlier is None:
            raise _refuse(out, f"holds files no report wrote (no {MARKER} marker of one)")
        return earlier
    text = regular_file.read_text(marker, "report marker", 2**20)
    names = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return [n for n in names if "/" not in n and n not in (".", "..", MARKER, DISCUSSION)]


#: what a report wrote before it left a marker: its pages, tables and figures, and the
#: points a history page keeps beside it (node pages kept them before they left a marker)
_EARLIER = (".png", ".html", ".md", ".csv")
_EARLIER_NAMES = (".history-points.json",)


def _unmarked_report(out: Path) -> list[str] | None:
    """The files of a report written before reports left their marker (its index.html and
    numbers.csv there, nothing but regular files of its kinds and discussion.md), ``[]`` for
    an empty folder, None for any other folder."""
    entries = list(out.iterdir())
    if not entries:
        return []
    names = {p.name for p in entries}
    if not {"index.html", "numbers.csv"} <= names or not all(
            stat.S_ISREG(os.lstat(p).st_mode)
            and (p.suffix in _EARLIER or p.name in _EARLIER_NAMES) for p in entries):
        return None
    return sorted(names - {DISCUSSION})


def seal(out: Path, kept: set[str]) -> None:
    """Write the marker: every regular file in ``out`` now that was not there to keep."""
    mine = sorted(p.name for p in out.iterdir() if p.name not in kept | {MARKER, DISCUSSION}
                  and stat.S_ISREG(os.lstat(p).st_mode))
    atomic.write_text(out / MARKER, _HEADER + "".join(f"{n}\n" for n in mine))


#: the hidden folder inside a report's folder that holds its earlier report while the new
#: one is written: put back when writing fails, removed when it is done
STASH_PREFIX = ".placement-previous-"


def _stash(out: Path, names: list[str]) -> Path:
    """Move the named files (or links) of ``out`` into a fresh hidden folder in it; all of
    them or, when moving fails or is interrupted, none."""
    stash = Path(tempfile.mkdtemp(prefix=STASH_PREFIX, dir=out))
    try:
        for n in names:
            with contextlib.suppress(FileNotFoundError):
                if not stat.S_ISDIR(os.lstat(out / n).st_mode):
                    os.rename(out / n, stash / n)
    except BaseException:
        _unstash(out, stash)
        raise
    return stash


def _unstash(out: Path, stash: Path) -> None:
    """Move the files of ``stash`` back into ``out`` (over any of the same name) and remove
    it."""
    for p in stash.iterdir():
        os.replace(p, out / p.name)
    stash.rmdir()


def _restore(out: Path, kept: set[str], stash: Path) -> None:
    """Remove what was written in ``out`` since ``kept`` was listed and move the stashed
    files back: the earlier report as it was."""
    for p in out.iterdir():
        if p.name not in kept and not stat.S_ISDIR(os.lstat(p).st_mode):
            p.unlink()
    _unstash(out, stash)


def _recover(out: Path) -> None:
    """Put back the earlier report a killed write left in its hidden folder (over the
    files it had written), so that it, not half of the killed one, is what is replaced."""
    for old in sorted(out.glob(STASH_PREFIX + "*")):
        if stat.S_ISDIR(os.lstat(old).st_mode):
            with contextlib.suppress(OSError):
                _unstash(out, old)


@contextlib.contextmanager
def claimed(out: Path, root: Path | None = None) -> Iterator[Path]:
    """``out`` ready to write a report into (made, or emptied of what a report wrote there),
    sealed with its marker when the block ends. When the block fails or is interrupted (a
    full disk, a value no page can show, Ctrl-C) no half-written report is left: a folder
    made here is removed again, and a report written there before is put back as it was
    (its files wait in a hidden folder while the new one is written).

    ``root`` (default ``out``'s parent) is the folder the caller named: no link between it
    and ``out`` is followed. A write error names the folder (matplotlib's names no file).
    """
    out = Path(out)
    made = _make(out, Path(root) if root is not None else out.parent)
    if not made:
        _recover(out)
    stash = None if made else _stash(out, written_before(out))
    kept = {p.name for p in out.iterdir()}
    try:
        yield out
    except BaseException as exc:
        if made:
            shutil.rmtree(out, ignore_errors=True)
            said = "; the folder was removed, nothing was kept"
        else:
            try:
                _restore(out, kept, stash)
                said = "; the report written there before was put back"
            except OSError:
                said = f"; the report written there before is kept in {stash}"
        if isinstance(exc, OSError):
            raise PlacementError(
                f"cannot write the report in {out}"
                + (f" ({exc.filename})" if exc.filename else "")
                + f": {exc.strerror or exc}{said}") from None
        raise
    seal(out, kept)
    if stash is not None:
        shutil.rmtree(stash, ignore_errors=True)
