"""``placement topo``: summarise a node's topology, or write hwloc XML from a synthetic
description (:mod:`placement.engine`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..engine import generate_xml, synthetic, topology
from ..util import PlacementError, atomic, regular_file

description = "summarise a topology, or generate XML from a description"


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--topology", help="hwloc XML file (default: the live machine)")
    p.add_argument("--synthetic", help="generate hwloc XML from a .synthetic description file")
    p.add_argument("--output", help="with --synthetic: write the XML here (atomically)")


def topo(args: argparse.Namespace) -> int:
    if args.output and not args.synthetic:
        raise PlacementError("--output writes the XML of --synthetic: give --synthetic FILE "
                             "too (a live or --topology machine is summarised, never written)")
    if args.synthetic and args.topology:
        raise PlacementError("--topology and --synthetic each name the machine: give one")
    if args.synthetic:
        desc_file = Path(args.synthetic)
        if not desc_file.exists():
            raise PlacementError(f"synthetic description {str(desc_file)!r} not found")
        out = Path(args.output) if args.output else None
        if out is not None:     # replaced by a rename: never a FIFO, a device or the input
            regular_file.refuse_special(out, "topology XML file")
            if out.exists() and out.resolve() == desc_file.resolve():
                raise PlacementError(f"--output {out} is the synthetic description itself: "
                                     "give another file; nothing was written")
        xml = generate_xml(synthetic.read_description(desc_file))
        if out is not None:
            atomic.write_text(out, xml)
        else:
            sys.stdout.write(xml)
        return 0
    print(topology.load(args.topology).summary())
    return 0
