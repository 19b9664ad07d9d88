"""A test node's CPU cap is a share of the node's own PUs, not of the host's.

Why: a node given 4 PUs of a 16-PU host and slowed to 60 % must get 2.4 CPUs' worth;
a share of the host's 16 would allow 9.6, more than the node has: no cap at all.
"""

from __future__ import annotations

import node_cgroups


def test_a_cpuset_node_is_capped_at_a_share_of_its_own_pus() -> None:
    node = node_cgroups.NodeCgroup('n2', cpu_fraction=0.6, cpus='4-7', ncpus=16)
    assert node.node_pus == 4
    assert node.quota_us == round(0.6 * 4 * node_cgroups.PERIOD_US)


def test_a_node_without_a_cpuset_is_capped_at_a_share_of_the_host() -> None:
    node = node_cgroups.NodeCgroup('n2', cpu_fraction=0.5, ncpus=2)
    assert node.quota_us == node_cgroups.PERIOD_US


def test_an_uncapped_node_has_no_quota() -> None:
    assert node_cgroups.NodeCgroup('n1', cpus='0', ncpus=16).quota_us is None
