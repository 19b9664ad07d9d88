#!/usr/bin/env python3
"""Fills a Spack source mirror from PyPI and local tarballs, in Spack 1.1's layout.

    scripts/spack-mirror.py MIRROR_DIR [--env DIR] [--file NAME=TARBALL ...]
    scripts/spack-mirror.py MIRROR_DIR --sources FILE.jsonl [--file ...]

`spack mirror create` fetches from each recipe's URL; on a node that reaches
PyPI but not GitHub or upstream sites that fails, and PyPI's
`files.pythonhosted.org/packages/source/...` URLs of the recipes may answer
404. This script asks Spack (`spack -e ENV python scripts/spack_sources.py`)
what the environment's concrete specs fetch, then, for every file whose URL
is on PyPI, finds the file with the recipe's sha256 in PyPI's simple index and
stores it at `_source-cache/archive/<sha[:2]>/<sha>.<ext>`, the only place
Spack 1.1 looks. `--file npb=NPB3.4.1.tar.gz` puts a local tarball in under
the recipe's checksum (a tarball that differs is stored all the same and said,
with the command that installs that spec alone unchecked: `spack -e . install
--no-checksum npb`), and a source already in the mirror whose content is not the
recipe's file is said the same way. What cannot be fetched (a GitHub
archive the project's recipe repository gives no PyPI sdist for, an upstream
site) is named with the reason. Stored sources are readable by all (0644), so
one mirror serves a site's users.

Exit: 0 every source is in the mirror; 1 some are missing (one summary line
last); 2 bad input (one line, no traceback).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import stat
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PYPI_HOSTS = ("files.pythonhosted.org", "pypi.io", "pypi.org", "pypi.python.org")
SIMPLE = "https://pypi.org/simple/{project}/"
#: a --sources file is one JSON line per source (a few hundred bytes each): far below this
MAX_SOURCES_BYTES = 8 << 20
#: where Spack 1.1 keeps a source in a mirror: relative, inside it, named by its sha256
LAYOUT = re.compile(r"_source-cache/archive/([0-9a-f]{2})/([0-9a-f]{64})(\.[A-Za-z0-9][A-Za-z0-9.]*)?")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from placement.util import sha256  # noqa: E402  (the standard library alone)


#: what a source that is not the recipe's file asks of the install (scripts/spack-env-copy.sh
#: looks for these words)
NO_CHECKSUM = "install with --no-checksum"


def unchecked(name: str, env: Path) -> str:
    """The advice for one source that is not the recipe's file: that spec alone unchecked,
    so that Spack still checks every other source of the environment."""
    where = "." if env.resolve() == Path.cwd().resolve() else str(env)
    return f"{NO_CHECKSUM} that spec alone: spack -e {where} install --no-checksum {name}"


class BadInput(Exception):
    """Input the user must fix: reported as one line, exit 2."""


@dataclass(frozen=True)
class Source:
    """One file a concrete spec fetches, as the recipe declares it."""
    name: str
    version: str
    url: str
    sha256: str
    path: str  # place in the mirror, relative to its root


def archive_path(sha256: str, ext: str) -> str:
    """Spack 1.1's content-addressed place of a source in a mirror."""
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise BadInput(f"not a sha256: {sha256!r}")
    name = f"{sha256}.{ext.lstrip('.')}" if ext else sha256
    return f"_source-cache/archive/{sha256[:2]}/{name}"


def pypi_project(url: str) -> str:
    """The PyPI project of a files.pythonhosted.org / pypi.io URL ('' if not PyPI)."""
    m = re.match(r"https?://([^/]+)/packages/[^/]+/[^/]/([^/]+)/[^/]+$", url)
    if not m or m.group(1) not in PYPI_HOSTS:
        return ""
    return re.sub(r"[-_.]+", "-", m.group(2)).lower()


def read_sources(lines: list[str]) -> tuple[list[Source], list[str]]:
    """Sources to fetch, and lines naming what has no URL source (git, none)."""
    sources: dict[str, Source] = {}
    other: list[str] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row.get("kind") != "url":
                other.append(f"{row['name']}@{row['version']}: fetched by {row.get('kind')} "
                             f"{row.get('url') or row.get('why', '')}, not a file mirror entry")
                continue
            src = Source(row["name"], row["version"], row["url"], row["sha256"], row["path"])
            if not all(isinstance(v, str) for v in vars(src).values()):
                raise TypeError("name, version, url, sha256 and path must be strings")
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise BadInput(f"sources line {n} is not a source record ({err})") from None
        if src.url.startswith("file:"):
            continue  # in the package repository itself (compiler-wrapper's cc.sh)
        if not in_layout(src):
            raise BadInput(f"sources line {n}: path {src.path!r} is not "
                           f"_source-cache/archive/<sha[:2]>/<sha>.<ext> of its sha256")
        sources.setdefault(src.path, src)
    return list(sources.values()), other


def in_layout(src: Source) -> bool:
    """Whether the source's mirror path is Spack's place for its sha256 (never `../`)."""
    m = LAYOUT.fullmatch(str(src.path))
    return bool(m) and m.group(2) == src.sha256 and m.group(1) == src.sha256[:2]


def read_sources_file(path: Path) -> list[str]:
    """The lines of a --sources file: a regular file of bounded size (not a device or FIFO)."""
    try:
        info = path.stat()
    except OSError as err:
        raise BadInput(f"--sources {path}: {err.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise BadInput(f"--sources {path} is not a regular file "
                       "(expected the JSON lines of scripts/spack_sources.py)")
    if info.st_size > MAX_SOURCES_BYTES:
        raise BadInput(f"--sources {path} has {info.st_size} bytes, more than the "
                       f"{MAX_SOURCES_BYTES} a list of sources takes")
    try:
        return path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(f"--sources {path}: {getattr(err, 'strerror', None) or err}") from None


def spack_sources(env: Path) -> list[str]:
    """Asks Spack what the environment fetches (the recipes hold URL and checksum)."""
    if not (env / "spack.lock").is_file():
        raise BadInput(f"{env}/spack.lock not found (concretize the environment first)")
    cmd = ["spack", "-e", str(env), "python", str(HERE / "spack_sources.py")]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise BadInput("spack is not on PATH (or give --sources FILE)") from None
    if res.returncode != 0:
        raise BadInput(f"`{' '.join(cmd)}` failed: {res.stderr.strip().splitlines()[-1:]}")
    return res.stdout.splitlines()


def store(mirror: Path, rel: str, data_from: Path | bytes) -> None:
    """Writes via a temporary file and rename, so a mirror never holds half a file;
    the file is 0644 (the temporary file's 0600 would hide it from a site's other users)."""
    dest = mirror / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out:
            if isinstance(data_from, Path):
                with data_from.open("rb") as f:
                    while block := f.read(1 << 20):
                        out.write(block)
            else:
                out.write(data_from)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        os.unlink(tmp)
        raise


def pypi_url_for(project: str, sha256: str) -> str:
    """The URL of the file with this sha256 in PyPI's simple index ('' if none)."""
    req = urllib.request.Request(SIMPLE.format(project=project),
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        index = json.load(resp)
    for f in index.get("files", []):
        if f.get("hashes", {}).get("sha256") == sha256:
            return f["url"]
    return ""


def fetch_pypi(mirror: Path, src: Source) -> str:
    """'' when stored, else why not."""
    project = pypi_project(src.url)
    if not project:
        host = re.sub(r"^\w+://([^/]+)/.*", r"\1", src.url)
        if host == "github.com":
            return (f"a GitHub tarball ({src.url}); give the version its PyPI sdist in "
                    f"config/spack-repo (as py-clustershell has) or --file {src.name}=PATH")
        return f"not on PyPI ({host}); put the tarball in with --file {src.name}=PATH"
    try:
        url = pypi_url_for(project, src.sha256)
        if not url:
            return f"PyPI project {project} has no file with the recipe's sha256"
        with urllib.request.urlopen(url, timeout=300) as resp:
            data = resp.read()
    except (urllib.error.URLError, OSError, ValueError) as err:
        return f"PyPI unreachable for {project}: {err}"
    if hashlib.sha256(data).hexdigest() != src.sha256:
        return f"{url} does not have the recipe's sha256"
    store(mirror, src.path, data)
    return ""


def parse_files(items: list[str]) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise BadInput(f"--file {item!r}: expected NAME=TARBALL, e.g. npb=NPB3.4.1.tar.gz")
        if not Path(path).is_file():
            raise BadInput(f"--file {item!r}: {path} is not a file")
        files[name] = Path(path)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mirror", type=Path, help="the source mirror folder (made if absent)")
    ap.add_argument("--env", type=Path, default=HERE.parent,
                    help="the concretized Spack environment (default: this checkout)")
    ap.add_argument("--sources", type=Path, help="JSON lines of scripts/spack_sources.py, "
                    "instead of asking Spack")
    ap.add_argument("--file", action="append", default=[], metavar="NAME=TARBALL",
                    help="a local tarball for package NAME (e.g. npb=NPB3.4.1.tar.gz)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        files = parse_files(args.file)
        if args.mirror.exists() and not args.mirror.is_dir():
            raise BadInput(f"mirror {args.mirror} exists and is not a folder")
        if args.sources:
            lines = read_sources_file(args.sources)
        else:
            lines = spack_sources(args.env)
        sources, other = read_sources(lines)
    except BadInput as err:
        print(f"spack-mirror: {err}", file=sys.stderr)
        return 2
    missing = list(other)
    stored = present = 0
    others: list[str] = []  # in the mirror, but not the recipe's file
    for src in sorted(sources, key=lambda s: s.name):
        label = f"{src.name}@{src.version}"
        if (args.mirror / src.path).is_file():
            present += 1
            got = sha256(args.mirror / src.path)
            if got != src.sha256:
                others.append(label)
                print(f"  {label}: {src.path} is another file (sha256 {got[:12]}...) "
                      f"than the recipe's: {unchecked(src.name, args.env)}")
            continue
        if src.name in files:
            got = sha256(files[src.name])
            store(args.mirror, src.path, files[src.name])
            stored += 1
            note = ""
            if got != src.sha256:
                others.append(label)
                note = (f" (its sha256 {got[:12]}... differs from the recipe's: "
                        f"{unchecked(src.name, args.env)})")
            print(f"  {label}: {files[src.name]} -> {src.path}{note}")
            continue
        why = fetch_pypi(args.mirror, src)
        if why:
            missing.append(f"{label}: {why}")
        else:
            stored += 1
            print(f"  {label}: PyPI -> {src.path}")
    for line in missing:
        print(f"  MISSING {line}")
    total = len(sources) + len(other)
    tail = f", {len(others)} not the recipe's file ({NO_CHECKSUM})" if others else ""
    print(f"spack-mirror: {stored} stored, {present} already there, {len(missing)} missing "
          f"of {total} sources in {args.mirror}{tail}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
