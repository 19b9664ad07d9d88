"""ReFrame site configuration: ``reframe -C config/settings.py ...``.

Puts ``common.py`` together with every system file in ``config/systems/``.
Systems are tried in file order, ``generic.py`` (which matches any host) last,
so a site adds its cluster by dropping one file into ``config/systems/``.
"""

import glob
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(HERE)   # append: ReFrame pops its own temporary entry by position

import common  # noqa: E402


def _systems():
    files = sorted(glob.glob(os.path.join(HERE, 'systems', '*.py')))
    files.sort(key=lambda f: os.path.basename(f) == 'generic.py')   # catch-all last
    out = []
    for path in files:
        name = 'placement_system_' + os.path.basename(path)[:-3]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out.extend(mod.site_configuration['systems'])
    return out


site_configuration = {
    'systems': _systems(),
    'environments': common.environments,
    'logging': common.logging,
    'general': common.general,
    'storage': common.storage,
    'modes': common.modes,
}
