"""``python -m placement`` is the ``placement`` command."""
import sys

from .cli import main

sys.exit(main())
