"""``placement maps``: compute a thread map (or a hybrid ranks x threads layout) and render it
in a binder's or a launcher's words (:mod:`placement.engine`)."""

from __future__ import annotations

import argparse
import sys

from ..engine import POLICIES, STRATEGIES, hybrid, hybrid_launch, launch, lint, renderings, topology
from ..util import PlacementError
from .arguments import positive_int

description = "compute a thread map and render it"


def setup_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("--topology", help="hwloc XML file (default: the live machine)")
    p.add_argument("--threads", type=positive_int,
                   help="threads (per rank with --ranks; default there: one per core)")
    p.add_argument("--ranks", type=positive_int,
                   help="MPI ranks on the node: a hybrid placement (formats list, mpirun, "
                        "srun, srun-mask, env, per-rank, json)")
    p.add_argument("--domain",
                   help="with --ranks: what confines a rank: package (default), numa, l3, "
                        "node, or cores:N")
    p.add_argument("--unit", choices=("cores", "threads"),
                   help="with --ranks: one OpenMP place per core (default) or per PU")
    p.add_argument("--strategy", choices=STRATEGIES,
                   help="without --ranks: how threads are placed (default scatter)")
    p.add_argument("--cpus", help="CPU list for --strategy explicit, e.g. 0,4,1,5 or 0-7")
    p.add_argument("--policy",
                   help=f"without --ranks: memory policy (default first-touch): {', '.join(POLICIES)}, optionally NAME:NODES")
    p.add_argument("--format", default="list",
                   choices=tuple(dict.fromkeys(("list",) + renderings.FORMATS
                                               + hybrid_launch.FORMATS)),
                   help="list (default), gomp, omp, kmp, likwid, numactl, taskset, hwloc, json, "
                        "env; with --ranks: list, mpirun, srun, srun-mask, env, per-rank, json")
    p.add_argument("--oversubscribe", action="store_true",
                   help="without --ranks: allow more threads than PUs (the map wraps round)")


#: the options of one mode only, and their defaults there: given to the other, they were
#: silently ignored (``--cpus`` with ``--strategy compact`` printed a compact map)
HYBRID_ONLY = {"domain": "package", "unit": "cores"}
SINGLE_ONLY = {"strategy": "scatter", "policy": "first-touch", "cpus": None,
               "oversubscribe": False}


def unused_options(args: argparse.Namespace) -> None:
    """Refuses an option the chosen mode does not read; else fills in its defaults."""
    mine, other = (HYBRID_ONLY, SINGLE_ONLY) if args.ranks is not None else \
        (SINGLE_ONLY, HYBRID_ONLY)
    given = [k for k in other if getattr(args, k) not in (None, False)]
    if given:
        where = "without --ranks" if args.ranks is not None else "with --ranks"
        raise PlacementError(f"--{given[0]} is only read {where}: leave it out, or "
                             f"{'drop' if args.ranks is not None else 'give'} --ranks")
    for k, default in mine.items():
        if getattr(args, k) is None:
            setattr(args, k, default)
    if args.cpus is not None and args.strategy != "explicit":
        raise PlacementError(f"--cpus is the CPU list of --strategy explicit, not of "
                             f"{args.strategy}: give --strategy explicit, or leave --cpus out")


def maps(args: argparse.Namespace) -> int:
    unused_options(args)
    topo = topology.load(args.topology)
    if args.ranks is not None:
        return _hybrid_maps(topo, args)
    if args.threads is None:
        raise PlacementError("--threads is required (threads per rank with --ranks)")
    if args.format not in ("list",) + renderings.FORMATS:
        raise PlacementError(f"format {args.format!r} is for --ranks; without it choose one of "
                             f"list, {', '.join(renderings.FORMATS)}")
    ls = launch.settings(topo, args.threads, args.strategy, args.policy,
                         explicit=args.cpus, oversubscribe=args.oversubscribe,
                         binder=args.format if args.format in launch.BINDERS else "gomp")
    for w in ls.warnings:
        print(f"placement: warning: {w}", file=sys.stderr)
    if args.format == "list":
        print(" ".join(map(str, ls.placement.cpus)) if ls.placement.bound
              else "(none: the OS places threads)")
    elif args.format in ("numactl", "taskset", "hwloc"):
        print(" ".join(ls.prefix + ["<program>"]))        # binding and policy in one prefix
    else:
        text = renderings.render(ls.placement, args.format)
        if text:
            print(text)
        if ls.policy.prefix and args.format != "json":
            print(" ".join(ls.policy.prefix) + " <program>")
    return 0


def _hybrid_maps(topo: topology.Topology, args: argparse.Namespace) -> int:
    """``maps --ranks N``: ranks x threads, rendered for a launcher."""
    if args.format not in hybrid_launch.FORMATS:
        raise PlacementError(f"format {args.format!r} renders one process's threads; with "
                             f"--ranks choose one of {', '.join(hybrid_launch.FORMATS)}")
    ranks, threads = args.ranks, args.threads
    if threads is None:                       # one thread per place of each rank
        one = hybrid.compute(topo, ranks, 1, args.domain, args.unit)
        threads = one.cores_per_rank if args.unit == "cores" else len(one.rank_sets[0])
    hp = hybrid.compute(topo, ranks, threads, args.domain, args.unit)
    for w in lint.hybrid_warnings(topo, hp):
        print(f"placement: warning: {w}", file=sys.stderr)
    print(hybrid_launch.render(hp, topo, args.format, hybrid_launch.ompi_major()))
    return 0
