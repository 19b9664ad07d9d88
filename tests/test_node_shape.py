"""A partition's topology file against the node a job ran on: each kind of difference, one line."""

from __future__ import annotations

import subprocess

from placement.checks import node_shape
from placement.engine import topology


def topo(name: str):
    return topology.load(f'topologies/{name}.xml')


def line(host: str, cpus: dict[int, tuple[int, int, int]]) -> str:
    return f'nodeshape host={host} cpus=' + ' '.join(
        f'{c}:{p}:{k}:{n}' for c, (p, k, n) in sorted(cpus.items())) + ' '


def xeon_node() -> dict[int, tuple[int, int, int]]:
    # 2 packages x 4 cores, one NUMA node each, as the Xeon E5620 study node's kernel says
    return {c: (c // 4, c % 4, c // 4) for c in range(8)}


def test_the_node_the_file_describes_agrees():
    shape = node_shape.parse(line('xeon-e5620', xeon_node()))
    assert shape.host == 'xeon-e5620' and len(shape.cpus) == 8
    assert node_shape.mismatch(topo('xeon-e5620'), shape) is None


def test_another_node_model_is_named_by_its_counts():
    shape = node_shape.parse(line('n1', {c: (0, c % 8, 0) for c in range(16)}))
    why = node_shape.mismatch(topo('xeon-e5620'), shape)
    assert why.startswith('the topology topologies/xeon-e5620.xml is not the node this job '
                          'ran on (n1): it describes 8 PUs, 2 package(s), 2 NUMA node(s), the '
                          'node has 16 PUs, 1 package(s), 1 NUMA node(s)')
    assert "extras['topology']" in why


def test_packages_numbered_round_robin_are_told_apart():
    # same counts, but the BIOS numbers PUs alternately over the packages
    shape = node_shape.parse(line('n2', {c: (c % 2, c // 2, c % 2) for c in range(8)}))
    why = node_shape.mismatch(topo('xeon-e5620'), shape)
    assert "its packages hold other PUs (the node's package of PU 0 holds 0,2,4,6)" in why


def test_numa_nodes_numbered_otherwise_are_told_apart():
    node = {c: (p, k, 1 - n) for c, (p, k, n) in xeon_node().items()}
    why = node_shape.mismatch(topo('xeon-e5620'), node_shape.parse(line('n3', node)))
    assert 'its NUMA nodes hold other PUs (node 0: 4-7; node 1: 0-3 here)' in why


def test_comet_lake_siblings_n_and_n_plus_8_against_adjacent_numbering():
    # QEMU's 1 x 8 x 2 guest: a core's hardware threads are PUs 2k and 2k+1
    qemu = {c: (0, c // 2, 0) for c in range(16)}
    why = node_shape.mismatch(topo('cometlake'), node_shape.parse(line('cometlake', qemu)))
    assert 'hardware-thread siblings 0,8 in the file, 0-1 on the node' in why


def test_no_line_or_an_empty_one_judges_nothing():
    assert node_shape.parse('bindprobe threads=2\n') is None
    assert node_shape.parse('nodeshape host=x cpus=\n') is None


def test_the_script_describes_this_machine():
    out = subprocess.run(['sh', '-c', node_shape.SCRIPT], capture_output=True, text=True,
                         check=True).stdout
    shape = node_shape.parse(out)
    live = topology.load(None)
    assert set(shape.cpus) >= set(live.cpus)
    assert node_shape.mismatch(live, shape) is None


def test_a_topology_cut_to_the_jobs_cpus_is_compared_on_them():
    # taskset -c 1 on this machine: the live topology holds PU 1 of the node's 0-1
    full = topology.load(None)
    if len(full.cpus) < 2:
        return
    cut = topology.restrict_to(full, {full.cpus[-1]})
    out = subprocess.run(['sh', '-c', node_shape.SCRIPT], capture_output=True, text=True,
                         check=True).stdout
    assert node_shape.mismatch(cut, node_shape.parse(out)) is None
