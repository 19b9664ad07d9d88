"""Topology-aware thread placement and NUMA memory policies for regression tests.

The package turns an hwloc topology, a thread count and a strategy into an
ordered CPU list (:mod:`placement.maps`), renders it for every binding tool
(:mod:`placement.renderings`), turns a memory policy into a ``numactl`` prefix
(:mod:`placement.policies`) and checks that a run really was placed that way
(:mod:`placement.probe`).
"""

__version__ = "0.1.0"
