"""Topology-aware thread placement and NUMA memory policies for regression tests.

The package turns an hwloc topology, a thread count and a strategy into an
ordered CPU list (:mod:`placement.engine.maps`), renders it for every binding tool
(:mod:`placement.engine.renderings`), turns a memory policy into a ``numactl`` prefix
(:mod:`placement.engine.policies`) and checks that a run really was placed that way
(:mod:`placement.checks.probe`).
"""

__version__ = "0.1.0"
