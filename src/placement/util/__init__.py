"""Small shared pieces every stage may use: errors, atomic writes, the suite's paths,
sizes as typed, a file's sha256, a program's Spack spec and the ReFrame workarounds.

The front door of :mod:`placement.util`: other groups import from here only. It sits
below every stage and imports none of them, so any stage can lean on it without a circle.
"""

from .computed_once import once
from .digest import sha256
from .errors import PlacementError
from .lazy_module import LazyModule
from .paths import baseline_dir, baseline_file, reports_dir, repo_root, system_name
from .reframe_workarounds import DEPRECATION_FASTPATH, enabled
from .sizes import size_bytes

__all__ = [
    # modules
    "atomic", "computed_once", "cycles", "digest", "errors", "lazy_module", "one_line", "paths", "reframe_workarounds", "regular_file", "safe_yaml",
    "scheduler_queue", "sizes",
    "spack_spec",
    "local_jobs", "poll_clock",     # ReFrame workarounds: import ReFrame, only config/ loads them
    # names
    "DEPRECATION_FASTPATH", "LazyModule", "PlacementError", "baseline_dir", "baseline_file", "enabled", "once",
    "reports_dir", "repo_root", "sha256", "size_bytes", "system_name",
]
