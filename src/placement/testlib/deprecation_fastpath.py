"""Skip ReFrame 4.10's stack walk for deprecation warnings it has already suppressed.

ReFrame instantiates every test case at load time and, for each one, reads the
deprecated ``variables`` alias inside ``suppress_deprecations()``. Its
``user_deprecation_warning`` still calls ``inspect.stack()`` before the warning
filter drops the warning: about 20 ms per case, a minute for the NPB matrix on
every ``reframe`` command. When the innermost warning filter ignores ReFrame
deprecations, the warning would be dropped anyway, so it returns at once; in every
other case ReFrame's own function runs unchanged. Installed only on the ReFrame
versions of :data:`placement.util.reframe_workarounds.DEPRECATION_FASTPATH`.
"""

from __future__ import annotations

import warnings

from reframe.core import fields, variables
from reframe.core import warnings as rfm_warnings

from ..util import DEPRECATION_FASTPATH, enabled

_original = rfm_warnings.user_deprecation_warning


def _suppressed() -> bool:
    if not warnings.filters:
        return False
    action, _msg, category, _mod, _line = warnings.filters[0]
    return action == "ignore" and category is rfm_warnings.ReframeDeprecationWarning


def user_deprecation_warning(message, from_version="0.0.0"):
    if _suppressed():
        return None
    return _original(message, from_version)


def install() -> None:
    """Use the fast path in the modules that warn while tests are instantiated."""
    if not enabled(DEPRECATION_FASTPATH):
        return
    for module in (variables, fields):
        if getattr(module, "user_deprecation_warning", None) is _original:
            module.user_deprecation_warning = user_deprecation_warning
