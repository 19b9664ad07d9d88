"""The ``placement`` command assembled from one module per command, as Spack's ``spack.cmd``.

Each command module of this package (:data:`COMMANDS`) has a ``description`` (its line in
``placement --help``), ``setup_parser(parser)`` (its arguments) and a function named for
the command that runs it and returns the exit status; the logic is in the library groups.
Every user error is reported as one line on stderr with exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from .. import __version__
from ..util import PlacementError

#: The commands, in the order ``placement --help`` lists them; each is a module of this package.
COMMANDS = ("maps", "topo", "report", "baseline", "judge", "acceptance", "site", "npb")

#: The parser's description, the first line ``placement --help`` prints.
DESCRIPTION = ("The ``placement`` command: maps, topology summaries, and the subcommands of "
               "other modules.")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors also exit 2, on one line
        raise SystemExit(_fail(f"{message} (see {self.prog} --help)"))


def _fail(message: str) -> int:
    print(f"placement: error: {message}", file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (the reference docs show it whole)."""
    parser = _Parser(prog="placement", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"placement {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        module = importlib.import_module(f".{name}", __package__)
        p = sub.add_parser(name, help=module.description)
        module.setup_parser(p)
        p.set_defaults(func=getattr(module, name))
    _name_choices(parser)
    return parser


def _name_choices(parser: argparse.ArgumentParser) -> None:
    """Each subcommand's place named by its choices (``{record,diff,control}``), not its
    internal name, in usage errors: a missing one then says what is accepted."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            if action.metavar is None:
                action.metavar = "{" + ",".join(action.choices) + "}"
            for sub in action.choices.values():
                _name_choices(sub)


def _command_parser(parser: argparse.ArgumentParser,
                    argv: Sequence[str]) -> argparse.ArgumentParser:
    """The deepest subcommand's parser that ``argv`` names (``placement baseline record``)."""
    for word in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            parser = subs[0].choices[word]
    return parser


def _terminated(signum, _frame):
    # SIGTERM (a time box, a kill) unwinds like Ctrl-C: temporary files are removed
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminated)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:       # said by the subcommand they were given to, whose help lists its options
        _command_parser(parser, argv).error(f"unrecognized arguments: {' '.join(extra)}")
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
