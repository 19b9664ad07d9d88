"""The seed studies' nodes, emulated: each study system's own partitions, reached over ssh.

``tests/numa_node.py`` boots a QEMU guest of each study node's shape (Xeon E5620:
2 packages x 4 cores, 2 NUMA nodes; Comet Lake: 1 package x 8 cores x 2 threads;
Bulldozer: 4 packages x 2 dies x 8 cores, 8 NUMA nodes). Here each study system
(``xeon_e5620.py``, ``cometlake.py``, ``bulldozer.py``) is loaded as it is and
copied as ``seed-<name>`` with only the scheduler and the access replaced (ReFrame's
``ssh`` scheduler, the guest's ssh configuration from
``PLACEMENT_TEST_SEED_SSH_CONFIG``): its topology file, explicit map, environments
and thread sweep are the system's own (NPB's budgets scaled for the emulator,
``EMULATED_BUDGET_SCALE``). Each partition also gets a ``-captured``
twin without the topology file, whose node topology is captured in the guest, so a
file QEMU cannot reproduce (Comet Lake's sibling numbering) is told apart from a
map that is wrong. Hostname patterns match no real host: select ``--system seed-<name>``.
"""

import copy
import importlib.util
import os

from common import EMULATED_BUDGET_SCALE

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = ('xeon_e5620', 'cometlake', 'bulldozer')
SSH_CONFIG = os.environ.get('PLACEMENT_TEST_SEED_SSH_CONFIG', '')


def _systems(stem: str) -> list[dict]:
    spec = importlib.util.spec_from_file_location(f'placement_seed_{stem}',
                                                  os.path.join(HERE, f'{stem}.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.site_configuration['systems']


def _over_ssh(part: dict) -> dict:
    """The partition with only its scheduler and access replaced (and one job at a time)."""
    out = copy.deepcopy(part)
    out.update({'scheduler': 'ssh', 'access': ['-F', SSH_CONFIG] if SSH_CONFIG else [],
                'sched_options': {'ssh_hosts': ['127.0.0.1']}, 'max_jobs': 1})
    out['features'] = sorted(set(out.get('features', [])) - {'sge', 'slurm', 'exclusive'}
                             | {'ssh'})
    # the guest runs under QEMU's TCG: NPB's budgets scaled as on the emulated NUMA node
    out['extras'] = {**out.get('extras', {}), 'npb_budget_scale': EMULATED_BUDGET_SCALE}
    return out


def _emulated(system: dict) -> dict:
    out = copy.deepcopy(system)
    out['name'] = f"seed-{system['name']}"
    out['descr'] = f"{system['descr']}, emulated by QEMU (tests/numa_node.py)"
    out['hostnames'] = [r'^placement-seed-never-matches$']
    parts = []
    for part in system['partitions']:
        own = _over_ssh(part)
        captured = copy.deepcopy(own)
        captured['name'] = f"{part['name']}-captured"
        captured['descr'] = f"{part['descr']}, node topology captured in the guest"
        captured['extras'] = {k: v for k, v in captured.get('extras', {}).items()
                              if k != 'topology'}
        parts += [own, captured]
    out['partitions'] = parts
    return out


site_configuration = {
    'systems': [_emulated(s) for stem in SEEDS for s in _systems(stem)],
}
