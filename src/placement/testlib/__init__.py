"""ReFrame building blocks (unregistered base classes and fixtures), as hpctestlib does.

Only ReFrame test files import this; the rest of the package does not need ReFrame.
"""

from .deprecation_fastpath import install as _install_fastpath

_install_fastpath()
