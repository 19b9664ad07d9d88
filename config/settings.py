"""ReFrame site configuration: ``reframe -C config/settings.py ...``.

Puts ``common.py`` together with every system file in ``config/systems/``.
Systems are tried in file order, ``generic.py`` (which matches any host) last,
so a site adds its cluster by dropping one file into ``config/systems/`` (or into
its own folder named by ``PLACEMENT_SYSTEMS``; ``placement site new`` writes one). A system
file holds ``systems`` only: anything else it defines is refused (environments,
logging, storage and modes are shared, in ``common.py``), never silently ignored.
"""

import glob
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(HERE)   # append: ReFrame pops its own temporary entry by position

import common  # noqa: E402
from reframe.core.exceptions import ConfigError  # noqa: E402
from placement.util.reframe_workarounds import QUIET_GENERIC, enabled  # noqa: E402


def _system_files():
    """config/systems/*.py, then a site's own folder (``PLACEMENT_SYSTEMS``), generic.py last."""
    files = sorted(glob.glob(os.path.join(HERE, 'systems', '*.py')))
    site = os.environ.get('PLACEMENT_SYSTEMS')
    if site:
        files += sorted(glob.glob(os.path.join(site, '*.py')))
    files.sort(key=lambda f: os.path.basename(f) == 'generic.py')   # catch-all last
    return files


def _systems(files):
    """The ``systems`` of every file; a file defining anything else is an error."""
    out = []
    for path in files:
        name = 'placement_system_' + os.path.basename(path)[:-3]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        conf = getattr(mod, 'site_configuration', {})
        extra = sorted(set(conf) - {'systems'})
        if extra or 'systems' not in conf:
            raise ConfigError(
                f'{path}: a system file defines only site_configuration["systems"] '
                f'(found: {", ".join(sorted(conf)) or "nothing"}); put environments, '
                'logging, storage, general and modes in config/common.py')
        out.extend(conf['systems'])
    return out


def _quiet_generic_redefinition():
    """Drop ReFrame's load-time warning that our ``generic`` replaces its builtin one.

    ``generic`` is redefined on purpose (the catch-all system keeps ReFrame's
    name, so ``--system generic`` and stored results read as usual); ReFrame
    warns on every load. Only those two lines are dropped, nothing else, and
    only while this file is being loaded (ReFrame then builds its own logger).
    Only on the ReFrame versions of ``QUIET_GENERIC`` (docs/reference/workarounds.md).
    """
    if not enabled(QUIET_GENERIC):
        return
    try:
        from reframe.core.logging import getlogger
        logger = getlogger().logger
    except (ImportError, AttributeError):
        return
    if logger is None:
        return

    def keep(record):
        msg = str(record.msg)
        return not ("redefinition of " in msg and "'generic" in msg and "'<builtin>'" in msg)

    logger.addFilter(keep)


_quiet_generic_redefinition()

site_configuration = {
    'systems': _systems(_system_files()),
    'environments': common.environments,
    'logging': common.logging,
    'general': common.general,
    'storage': common.storage,
    'modes': common.modes,
}
