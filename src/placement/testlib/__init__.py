"""ReFrame building blocks (unregistered base classes and fixtures), as hpctestlib does.

Only ReFrame test files import this; the rest of the package does not need ReFrame
(``placement site new`` and the baseline seeding reach in lazily, through this front door).
"""

from .deprecation_fastpath import install as _install_fastpath

_install_fastpath()

__all__ = ["builds", "datamap_pages", "hybrid", "kernels", "node_load", "node_topology", "npb",
           "placed", "references", "samples"]
