"""The ``placement`` command: one parser, the subcommands of every group.

:mod:`.main` holds the parser and the map/render/lint/launch subcommands;
:mod:`.baseline_cli` is ``placement baseline`` and :mod:`.site_new` is
``placement site new``, :mod:`.npb_cli` is ``placement npb build``. ``placement judge`` and ``placement report`` live with their
stages (:mod:`placement.judgement.repeats.judge_cli`, :mod:`placement.report.cli`).

The front door of :mod:`placement.cli`, the top layer: nothing in the package imports it
except ``python -m placement``; the ``placement`` script is ``placement.cli:main``.
"""

from .main import build_parser, main

__all__ = ["baseline_cli", "build_parser", "main", "npb_cli", "site_new"]
