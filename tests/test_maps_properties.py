"""Properties every strategy must keep, on random synthetic hwloc topologies."""

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placement.engine import maps, renderings, topology
from placement.engine.synthetic import generate_xml

SHAPES = st.tuples(
    st.integers(1, 4),   # packages
    st.integers(1, 2),   # dies (one NUMA node each) per package
    st.integers(1, 3),   # L2 (modules) per die
    st.integers(1, 2),   # cores per L2
    st.integers(1, 2),   # hardware threads per core
    st.randoms(use_true_random=False),
)


@lru_cache(maxsize=None)
def _build(pk, die, l2, core, smt, perm) -> topology.Topology:
    desc = (f"pack:{pk} die:{die} [numa] l3:1 l2:{l2} core:{core} "
            f"pu:{smt}(indexes={','.join(map(str, perm))})")
    return topology.from_xml(generate_xml(desc), source=desc)


def make(shape) -> topology.Topology:
    pk, die, l2, core, smt, rnd = shape
    n = pk * die * l2 * core * smt
    perm = list(range(n))
    rnd.shuffle(perm)      # OS numbering unrelated to the tree: the engine must not care
    return _build(pk, die, l2, core, smt, tuple(perm))


PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BOUND = [s for s in maps.STRATEGIES if s not in ("none", "explicit")]


@PROPS
@given(SHAPES, st.sampled_from(BOUND), st.data())
def test_distinct_valid_pus(shape, strategy, data):
    topo = make(shape)
    per_core_places = strategy.endswith("-cores")
    limit = topo.count("Core") if per_core_places else len(topo.pus)
    threads = data.draw(st.integers(1, limit))
    placement = maps.compute(topo, threads, strategy)
    assert len(placement.places) == threads
    assert all(p <= set(topo.cpus) and p for p in placement.places)
    assert len(set(placement.places)) == threads          # no two threads share a place


@PROPS
@given(SHAPES, st.data())
def test_scatter_first_k_on_k_packages(shape, data):
    topo = make(shape)
    packages = topo.count("Package")
    k = data.draw(st.integers(1, packages))
    first = maps.compute(topo, k, "scatter").cpus
    assert len({topo.by_os[c].ancestor("Package") for c in first}) == k


@PROPS
@given(SHAPES)
def test_compact_fills_a_core_before_the_next(shape):
    topo = make(shape)
    order = maps.compute(topo, len(topo.pus), "compact").cpus
    cores = [topo.by_os[c].ancestor("Core") for c in order]
    # each core's PUs are consecutive in the map, and cores appear once each
    runs = [c for i, c in enumerate(cores) if i == 0 or cores[i - 1] != c]
    assert len(runs) == len(set(runs)) == topo.count("Core")


@PROPS
@given(SHAPES, st.sampled_from(BOUND), st.sampled_from(renderings.FORMATS), st.data())
def test_every_rendering_round_trips(shape, strategy, fmt, data):
    topo = make(shape)
    threads = data.draw(st.integers(1, topo.count("Core")))
    placement = maps.compute(topo, threads, strategy)
    text = renderings.render(placement, fmt)
    got = renderings.parse(text, fmt)
    if fmt in ("numactl", "taskset", "hwloc"):       # set-based tools keep the set
        assert got == sorted(placement.cpu_set)
    elif fmt in ("gomp", "likwid"):                 # one PU per thread, its own in the place
        assert got == renderings.pinned_cpus(placement)
    else:
        assert got == placement.cpus


def test_strategies_reject_bad_thread_counts():
    topo = make((1, 1, 1, 1, 1, __import__("random").Random(0)))
    for bad in (0, -1, True):
        with pytest.raises(maps.PlacementError):
            maps.compute(topo, bad, "compact")
