"""``placement npb build``: NPB's OpenMP binaries from a source tarball, for a site without Spack.

Builds the benchmarks and classes asked for (:mod:`placement.npb.build`), runs
each binary once to check NPB's own verification, installs them atomically
(:mod:`placement.npb.install`; by default into a cache outside the checkout,
reused by later calls) and says how to point the suite at them. Progress goes to
stderr; stdout gets the ``NPB_DIR`` line, or with ``--print-dir`` only the folder,
for a script (the Makefile's ``make test``) to read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..npb import build as npb_build, install, locate

description = "NPB without Spack: build the OpenMP binaries from a tarball"


def setup_parser(p: argparse.ArgumentParser) -> None:
    ns = p.add_subparsers(dest="npb_command", required=True, parser_class=type(p))
    b = ns.add_parser("build", help="build, verify and install NPB's OpenMP binaries")
    b.add_argument("--tarball", required=True,
                   help="NASA's NPB 3.x source tarball (NPB3.4.x.tar.gz)")
    b.add_argument("--classes", default=",".join(install.DEFAULT_CLASSES),
                   help="problem classes, comma-separated, of "
                        f"{','.join(locate.CLASSES)} (default: S,W)")
    b.add_argument("--benchmarks", default=",".join(install.DEFAULT_BENCHMARKS),
                   help="benchmarks, comma-separated (default: all eight: "
                        f"{','.join(install.DEFAULT_BENCHMARKS)})")
    b.add_argument("--prefix", help="install folder (binaries in PREFIX/bin; default: "
                                    "~/.cache/placement/npb-<tarball sha256 prefix>)")
    b.add_argument("--print-dir", action="store_true",
                   help="print only the binaries' folder on stdout (for scripts)")


def npb(args: argparse.Namespace) -> int:
    return {"build": build}[args.npb_command](args)


def build(args: argparse.Namespace) -> int:
    benchmarks = npb_build.parse_list(args.benchmarks.lower(),
                                      install.DEFAULT_BENCHMARKS, "--benchmarks")
    classes = npb_build.parse_list(args.classes.upper(), locate.CLASSES, "--classes")

    def progress(line: str) -> None:
        print(f"npb build: {line}", file=sys.stderr, flush=True)

    prefix = Path(args.prefix) if args.prefix else None
    done = install.install(Path(args.tarball), prefix, benchmarks, classes, progress)
    if args.print_dir:
        print(done.bin_dir)
        return 0
    what = f"{len(done.names)} binaries" if done.built else "the binaries asked for"
    state = "built and verified" if done.built else "already built and verified"
    print(f"NPB: {what} {state} in {done.bin_dir}\n"
          f"point the suite at them with:\n  export NPB_DIR={done.bin_dir}\n"
          f"or for one run: reframe ... -S npb_dir={done.bin_dir}")
    return 0
