"""The ``placement`` command: one module per command, as Spack's ``spack.cmd``.

:mod:`.main` assembles the parser from the command modules: :mod:`.maps`, :mod:`.topo`,
:mod:`.report`, :mod:`.baseline`, :mod:`.judge`, :mod:`.acceptance`, :mod:`.site` and
:mod:`.npb`. Each has a ``description``, ``setup_parser(parser)`` and a function named for
the command; the logic lives in the library groups. :mod:`.arguments` holds the argument
types several commands share.

The front door of :mod:`placement.cli`, the top layer: nothing in the package imports it
except ``python -m placement``; the ``placement`` script is ``placement.cli:main``.
"""

from .main import build_parser, main

__all__ = ["acceptance", "arguments", "baseline", "build_parser", "judge", "main", "maps",
           "npb", "report", "site", "topo"]
