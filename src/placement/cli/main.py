"""The ``placement`` command: maps, topology summaries, and the subcommands of other modules.

Every user error is reported as one line on stderr with exit code 2, never a
traceback; each subcommand module exposes ``register(subparsers)``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import __version__
from ..engine import POLICIES, STRATEGIES, hybrid_launch, launch, lint, renderings, topology
from ..util import PlacementError, atomic


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors also exit 2, on one line
        self.print_usage(sys.stderr)
        raise SystemExit(_fail(message))


def _fail(message: str) -> int:
    print(f"placement: error: {message}", file=sys.stderr)
    return 2


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return int(text)


def cmd_maps(args: argparse.Namespace) -> int:
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


def _hybrid_maps(topo, args: argparse.Namespace) -> int:
    """``maps --ranks N``: ranks x threads, rendered for a launcher."""
    from ..engine import hybrid, hybrid_launch
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


def cmd_topo(args: argparse.Namespace) -> int:
    if args.synthetic:
        from ..engine import generate_xml, synthetic
        desc_file = Path(args.synthetic)
        if not desc_file.exists():
            raise PlacementError(f"synthetic description {str(desc_file)!r} not found")
        xml = generate_xml(synthetic.read_description(desc_file))
        if args.output:
            atomic.write_text(Path(args.output), xml)
        else:
            sys.stdout.write(xml)
        return 0
    print(topology.load(args.topology).summary())
    return 0


def _register_core(sub) -> None:
    p = sub.add_parser("maps", help="compute a thread map and render it")
    p.add_argument("--topology", help="hwloc XML file (default: the live machine)")
    p.add_argument("--threads", type=_positive_int,
                   help="threads (per rank with --ranks; default there: one per core)")
    p.add_argument("--ranks", type=_positive_int,
                   help="MPI ranks on the node: a hybrid placement (formats list, mpirun, "
                        "srun, srun-mask, env, per-rank, json)")
    p.add_argument("--domain", default="package",
                   help="with --ranks: what confines a rank: package (default), numa, l3, "
                        "node, or cores:N")
    p.add_argument("--unit", choices=("cores", "threads"), default="cores",
                   help="with --ranks: one OpenMP place per core (default) or per PU")
    p.add_argument("--strategy", choices=STRATEGIES, default="scatter")
    p.add_argument("--cpus", help="CPU list for --strategy explicit, e.g. 0,4,1,5 or 0-7")
    p.add_argument("--policy", default="first-touch",
                   help=f"memory policy: {', '.join(POLICIES)}, optionally NAME:NODES")
    p.add_argument("--format", default="list",
                   choices=tuple(dict.fromkeys(("list",) + renderings.FORMATS
                                               + hybrid_launch.FORMATS)),
                   help="list (default), gomp, omp, kmp, likwid, numactl, taskset, hwloc, json, "
                        "env; with --ranks: list, mpirun, srun, srun-mask, env, per-rank, json")
    p.add_argument("--oversubscribe", action="store_true",
                   help="allow more threads than PUs (the map wraps round)")
    p.set_defaults(func=cmd_maps)

    t = sub.add_parser("topo", help="summarise a topology, or generate XML from a description")
    t.add_argument("--topology", help="hwloc XML file (default: the live machine)")
    t.add_argument("--synthetic", help="generate hwloc XML from a .synthetic description file")
    t.add_argument("--output", help="with --synthetic: write the XML here (atomically)")
    t.set_defaults(func=cmd_topo)


#: Subcommands whose module is imported only when that subcommand runs (or shows its help),
#: with the one line `placement --help` lists for them. `placement report` needs the HTML
#: renderer (markdown-it-py); `placement judge` inside a job, `placement maps` or an acceptance
#: step start without it, so an installation that lacks it fails only where it is used.
DEFERRED_HELP = {
    "report": "write a static report (HTML, Markdown, PNG, CSV) from ReFrame run reports or "
              "the stored baselines",
}


def _report_registrar() -> Callable:
    from ..report import cli as report_cli
    return report_cli.register


def _deferred(name: str) -> Callable:
    """A registrar that lists the subcommand NAME by its help line alone."""
    def register(sub) -> None:
        sub.add_parser(name, help=DEFERRED_HELP[name])
    return register


def _registrars(command: str | None) -> list[Callable]:
    """Each subcommand group's ``register``: the engine's here, the others (report,
    baseline, judge, acceptance) from their own modules (imported when the parser is built),
    those of DEFERRED_HELP only when COMMAND is theirs or None (the whole parser)."""
    from ..acceptance import run as acceptance
    from . import baseline_cli, npb_cli, site_new
    from ..judgement import repeats
    report = _report_registrar() if command in (None, "report") else _deferred("report")
    return [_register_core, report, baseline_cli.register, repeats.judge_cli.register,
            acceptance.register, site_new.register, npb_cli.register]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand (None: the whole parser, as the reference docs show
    it), or the one that runs COMMAND ("" for none, e.g. ``placement --help``)."""
    parser = _Parser(prog="placement", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"placement {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for reg in _registrars(command):
        reg(sub)
    return parser


def _command_of(argv: Sequence[str]) -> str:
    """The subcommand ARGV names: its first word that is not an option ("" when none).
    The top-level options (--help, --version) take no value, so the first word is it."""
    return next((a for a in argv if not a.startswith("-")), "")


def _terminated(signum, _frame):
    # SIGTERM (a time box, a kill) unwinds like Ctrl-C: temporary files are removed
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminated)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command_of(argv)).parse_args(argv)
    try:
        return args.func(args)
    except PlacementError as exc:
        return _fail(str(exc))
    except BrokenPipeError:              # `placement topo | head`: the reader had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # no flush error at exit
        return 141
    except OSError as exc:
        return _fail(f"{exc.filename or ''}: {exc.strerror}".strip(": "))
    except KeyboardInterrupt:            # Ctrl-C: one line, not a traceback
        print("placement: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
