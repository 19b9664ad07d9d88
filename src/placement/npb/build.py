"""Building NPB's OpenMP binaries from NASA's source tarball, for a site without Spack.

The steps are the ones known to work with current gfortran (and the ones the Spack
recipe takes): ``config/make.def`` from NPB's template with ``-O3 -fopenmp`` and,
for gfortran 10 or newer, ``-fallow-invalid-boz`` (``common/randi8.f`` uses X'...'
constants), no ``-mcmodel`` (EP fails with it), a ``bin/`` folder, and ``make`` under
bash: BT's and SP's Makefiles use bash substitutions (``${ver:3}``) that dash, /bin/sh
on Debian and Ubuntu, rejects. Each benchmark and class is made on its own, so a
failure names the binary, and each binary is run once: NPB checks its own answer
(``Verification = SUCCESSFUL``).

Every failure is a :class:`~placement.util.PlacementError` with one line.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tarfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..util import PlacementError, regular_file
from . import budget, locate, output

#: NPB's OpenMP folder inside the tarball (``NPB3.4.1/NPB3.4-OMP`` in NASA's 3.4.1).
_OMP_DIR = re.compile(r"^(?:[^/]+/)?(NPB3\.\d+(?:\.\d+)?-OMP)/config/make\.def\.template$")
BASE_FFLAGS = "-O3 -fopenmp"
#: gfortran 10 made the X'...' constants of common/randi8.f an error without it.
BOZ_FLAG = "-fallow-invalid-boz"
#: Seconds one ``make BENCH CLASS=X`` may take (a hung compiler ends the build).
MAKE_TIMEOUT_S = 1800

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Compilers:
    """The Fortran and C compilers NPB is built with, and the Fortran flags they need."""

    fc: str
    cc: str
    fc_version: str

    @property
    def fflags(self) -> str:
        major = self.fc_version.split(".")[0]
        newer = "gfortran" in Path(self.fc).name and major.isdigit() and int(major) >= 10
        return f"{BASE_FFLAGS} {BOZ_FLAG}" if newer else BASE_FFLAGS


@dataclass(frozen=True)
class Verified:
    """One built binary's verification run."""

    name: str
    seconds: float
    verification: str


def parse_list(text: str, allowed: Iterable[str], what: str) -> list[str]:
    """``"bt,cg"`` -> ``["bt", "cg"]`` (order kept, repeats dropped), refusing unknown names."""
    allowed = list(allowed)
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if not items or bad:
        raise PlacementError(f"{what} {text!r} not accepted: choose from {','.join(allowed)} "
                             f"(comma-separated)")
    return list(dict.fromkeys(items))


def find_compilers(environ: dict[str, str] | None = None) -> Compilers:
    """``$FC``/``$CC`` or gfortran/gcc on PATH; a missing one is named with how to get it."""
    env = os.environ if environ is None else environ
    found = {}
    for var, default in (("FC", "gfortran"), ("CC", "gcc")):
        name = env.get(var) or default
        path = shutil.which(name, path=env.get("PATH"))
        if path is None:
            raise PlacementError(f"the {'Fortran' if var == 'FC' else 'C'} compiler {name!r} "
                                 f"is not on PATH: install it (Debian: apt-get install "
                                 f"{default}) or name another with {var}=...")
        found[var] = path
    try:
        version = subprocess.run([found["FC"], "-dumpversion"], capture_output=True, text=True,
                                 timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PlacementError(f"the Fortran compiler {found['FC']} does not run: {exc}") from None
    return Compilers(found["FC"], found["CC"], version or "unknown")


def omp_folder(tarball: Path) -> str:
    """The member path of NPB's OpenMP folder, or a one-line error for anything else."""
    if not tarball.is_file():       # a FIFO or device (a link to one too) is said as such
        is_ = regular_file.kind(tarball.stat().st_mode) if tarball.exists() else ""
        raise PlacementError(f"NPB tarball {str(tarball)!r} "
                             f"{f'is {is_}, not a file' if is_ else 'not found'}: give the "
                             f"path of NASA's NPB 3.x source tarball (NPB3.4.x.tar.gz)")
    try:
        with tarfile.open(tarball) as tar:
            for member in tar:
                m = _OMP_DIR.match(member.name.lstrip("./"))
                if m:
                    return member.name[:member.name.index(m.group(1))] + m.group(1)
    except OSError as exc:
        if exc.errno is not None:   # unreadable (permissions, I/O), not a bad archive
            raise PlacementError(f"NPB tarball {str(tarball)!r} cannot be read "
                                 f"({exc.strerror})") from None
        raise PlacementError(f"{str(tarball)!r} is not a readable tar archive: expected "
                             f"NASA's NPB 3.x source tarball (NPB3.4.x.tar.gz)") from None
    except (tarfile.TarError, EOFError):
        raise PlacementError(f"{str(tarball)!r} is not a readable tar archive: expected "
                             f"NASA's NPB 3.x source tarball (NPB3.4.x.tar.gz)") from None
    raise PlacementError(f"{str(tarball)!r} is not NPB: it holds no NPB3.x-OMP/config/"
                         f"make.def.template (expected NASA's NPB 3.x source tarball)")


#: the most NPB's OpenMP folder may expand to: NPB 3.4.1's is about 3 MB, so this bounds
#: every NPB 3.x with room and refuses a tarball of zeros before it fills the cache
MAX_UNPACKED = 256 * 2**20
#: the most members it may hold (NPB 3.4.1's has under 400)
MAX_MEMBERS = 20000


def _member_problem(m: tarfile.TarInfo, folder: str) -> str:
    """Why a member of NPB's folder is not one a source tarball holds, ``""`` when it is."""
    parts = Path(m.name).parts
    if m.name.startswith("/") or ".." in parts:
        return "leads out of the folder (an absolute path or '..')"
    if m.isdev() or m.isfifo():
        return "is a device or FIFO"
    if m.issym() or m.islnk():
        target = m.linkname if m.islnk() else str(Path(m.name).parent / m.linkname)
        if m.linkname.startswith("/") or ".." in Path(os.path.normpath(target)).parts \
                or not os.path.normpath(target).startswith(folder):
            return "is a link that leads out of the folder"
    return ""


def _members(tar: tarfile.TarFile, tarball: Path, folder: str) -> list[tarfile.TarInfo]:
    """NPB's OpenMP folder's members, each checked, their sizes bounded in sum."""
    members, total = [], 0
    for m in tar:
        if not (m.name == folder or m.name.startswith(folder + "/")):
            continue
        why = _member_problem(m, folder)
        if why:
            raise PlacementError(f"{tarball}: the member {repr(m.name)[:80]} {why}: not NASA's NPB "
                                 "source tarball; nothing was unpacked")
        total += m.size
        members.append(m)
        if total > MAX_UNPACKED or len(members) > MAX_MEMBERS:
            raise PlacementError(f"{tarball}: its NPB folder expands to more than "
                                 f"{MAX_UNPACKED // 2**20} MiB or {MAX_MEMBERS} files, more than "
                                 "any NPB 3.x source; nothing was unpacked")
    return members


def unpack(tarball: Path, folder: str, dest: Path) -> Path:
    """Extract only NPB's OpenMP folder into ``dest``; returns the folder's path there.

    Each member is checked first (no absolute path, ``..``, device or link out of the
    folder) and their sizes bounded in sum; the data filter checks them again as it writes.
    """
    try:
        with tarfile.open(tarball) as tar:
            members = _members(tar, tarball, folder)
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, EOFError) as exc:
        raise PlacementError(f"{tarball}: cannot be unpacked ({exc.__class__.__name__}): not "
                             "a whole NPB source tarball; nothing was installed") from None
    return dest / folder


def configure(src: Path, compilers: Compilers, pairs: list[tuple[str, str]]) -> None:
    """``config/make.def`` from NPB's template with our compilers and flags, ``suite.def``
    naming what is built (the record of the build), and the ``bin/`` folder make expects."""
    template = regular_file.read_text(src / "config" / "make.def.template",
                                      "NPB make.def template", 2**20)
    # NPB 3.4 names the Fortran compiler FC, NPB 3.3 F77
    fc_key = "FC" if re.search(r"^FC\s*=", template, re.M) else "F77"
    values = {fc_key: compilers.fc, "FFLAGS": compilers.fflags, "CC": compilers.cc,
              "CFLAGS": "-O3 -fopenmp", "UCC": compilers.cc}
    for key, value in values.items():
        template, n = re.subn(rf"^{key}\s*=.*$", f"{key} = {value}", template, flags=re.M)
        if n != 1:
            raise PlacementError(f"NPB's config/make.def.template has {n} '{key} =' lines, "
                                 f"expected one: not an NPB 3.x OpenMP source")
    (src / "config" / "make.def").write_text(template)
    (src / "config" / "suite.def").write_text("".join(f"{b}\t{c}\n" for b, c in pairs))
    (src / "bin").mkdir(exist_ok=True)


def _last_error(log: str) -> str:
    """The first compiler or make error line of a failed make, for the one-line message."""
    for line in log.splitlines():
        if re.search(r"\b(Error|error:|Bad substitution|No rule|not found)", line):
            return line.strip()[:200]
    tail = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return tail[-1][:200] if tail else "no output"


def make(src: Path, benchmark: str, npb_class: str, log: Path) -> Path:
    """``make BENCH CLASS=X SHELL=/bin/bash``; the binary, or a one-line error naming it."""
    name = locate.binary_name(benchmark, npb_class)
    cmd = ["make", benchmark, f"CLASS={npb_class}", "SHELL=/bin/bash"]
    try:
        proc = subprocess.run(cmd, cwd=src, capture_output=True, text=True,
                              timeout=MAKE_TIMEOUT_S)
        out = proc.stdout + proc.stderr
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        out, rc = f"make did not finish in {MAKE_TIMEOUT_S} s", 124
    except FileNotFoundError:
        raise PlacementError("make is not on PATH: install it (Debian: apt-get install make)") \
            from None
    _log(log, f"$ {' '.join(cmd)}\n{out}\n")
    binary = src / "bin" / name
    if rc != 0 or not binary.is_file():
        raise PlacementError(f"building {name} failed (make exit {rc}): {_last_error(out)} "
                             f"(full log: {log})")
    return binary


def _log(log: Path, text: str, start: bool = False) -> None:
    """Add ``text`` to the build log (``start``: begin it empty). Its name beside the prefix
    is known in advance, so it is never opened through a link or at a FIFO planted there
    (the log was written into the file a planted link named)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(log, flags | (os.O_TRUNC if start else os.O_APPEND), 0o644)
    except OSError as exc:
        is_ = regular_file.special(log)
        raise PlacementError(f"{log}: {is_}: the NPB build log is never written through one; "
                             "remove it or choose another --prefix" if is_ else
                             f"{log}: cannot write the NPB build log ({exc.strerror})") from None
    with os.fdopen(fd, "w") as fp:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PlacementError(f"{log}: {regular_file.kind(os.fstat(fd).st_mode)}, not a "
                                 "regular file: the NPB build log is never written through "
                                 "one; remove it or choose another --prefix")
        fp.write(text)


def verify(binary: Path, benchmark: str, npb_class: str, log: Path) -> Verified:
    """Run the binary once; NPB compares its answer with the class's reference values.

    The run checks the answer, not the speed: threads wait passively, so a node
    busy with other work slows it down without collapsing it, and the watchdog is
    the collapse budget of a serial run (a hang, not a slow node, ends it).
    """
    name = binary.name
    limit = budget.COLLAPSE_FACTOR * budget.run_budget(benchmark.upper(), npb_class, 1, 1)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    start = time.monotonic()
    try:
        proc = subprocess.run([str(binary)], cwd=binary.parent, capture_output=True, text=True,
                              timeout=limit, env=env)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired:
        out, rc = "", 124
    seconds = time.monotonic() - start
    _log(log, f"$ {name}\n{out}\n")
    result = output.parse_result(out)
    if rc == 124:
        raise PlacementError(f"{name} did not finish its verification run in {limit:.0f} s "
                             f"(full log: {log})")
    if rc != 0 or not result.verified:
        said = result.verification or "no 'Verification =' line"
        raise PlacementError(f"{name} failed verification (exit {rc}, {said}): the build is "
                             f"not usable (full log: {log})")
    return Verified(name, seconds, result.verification or "")


def build(tarball: Path, dest: Path, benchmarks: list[str], classes: list[str],
          log: Path, progress: Progress) -> tuple[Compilers, list[Verified]]:
    """Unpack, configure, make and verify every benchmark x class into ``dest/bin``.

    ``dest`` is a fresh folder that the caller renames into place only when
    this returns: a failure leaves nothing installed. ``log`` (make's and the
    verification runs' output) lies outside it, so a failure's log is kept.
    """
    compilers = find_compilers()
    folder = omp_folder(tarball)
    src = unpack(tarball, folder, dest / "src")
    pairs = [(b, c) for b in benchmarks for c in classes]
    configure(src, compilers, pairs)
    _log(log, "", start=True)
    progress(f"building {len(pairs)} binaries of {folder} with {Path(compilers.fc).name} "
             f"{compilers.fc_version} (FFLAGS = {compilers.fflags})")
    bin_dir = dest / "bin"
    bin_dir.mkdir()
    done: list[Verified] = []
    for bench, cls in pairs:
        binary = make(src, bench, cls, log)
        shutil.copy2(binary, bin_dir / binary.name)
        result = verify(bin_dir / binary.name, bench, cls, log)
        progress(f"  {result.name:10} built, verification {result.verification} "
                 f"({result.seconds:.2f} s)")
        done.append(result)
    shutil.rmtree(src)          # the sources and objects are not needed to run
    return compilers, done
