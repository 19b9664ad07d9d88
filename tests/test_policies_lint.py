"""Memory policies become the right numactl prefix; lint warns about the studies' pitfalls."""

from pathlib import Path

import pytest

from placement.engine import lint, maps, policies, topology

TOPO = Path(__file__).resolve().parents[1] / "topologies"


def load(name):
    return topology.load(TOPO / f"{name}.xml")


@pytest.mark.parametrize("spec,strategy,threads,prefix", [
    ("first-touch", "scatter", 4, []),
    ("local", "scatter", 4, ["numactl", "--localalloc"]),
    ("interleave", "scatter", 4, ["numactl", "--interleave=0,2,4,6"]),  # die 0 of each package
    ("interleave", "compact", 4, ["numactl", "--interleave=0"]),
    ("interleave", "none", 4, ["numactl", "--interleave=0-7"]),
    ("preferred", "scatter", 4, ["numactl", "--preferred=0"]),
    ("bind", "scatter", 2, ["numactl", "--membind=0,2"]),
    ("interleave:1,3", "scatter", 2, ["numactl", "--interleave=1,3"]),
    ("preferred:5", "compact", 1, ["numactl", "--preferred=5"]),
])
def test_policy_prefix_on_bulldozer(spec, strategy, threads, prefix):
    topo = load("bulldozer")
    placement = maps.compute(topo, threads, strategy)
    assert policies.resolve(spec, topo, placement).prefix == prefix


@pytest.mark.parametrize("spec,message", [
    ("interleave:9", "lacks"),
    ("sometimes", "unknown memory policy"),
    ("local:0", "takes no node list"),
    ("preferred:0,1", "exactly one node"),
])
def test_policy_errors(spec, message):
    topo = load("xeon-e5620")
    with pytest.raises(policies.PlacementError, match=message):
        policies.resolve(spec, topo, maps.compute(topo, 2, "compact"))


def test_lint_flags_the_xeon_gomp_0_7_pitfall():
    topo = load("xeon-e5620")
    warnings = lint.warnings(topo, maps.compute(topo, 4, "explicit", explicit="0-7"))
    assert any("package 0 holds 4 threads" in w for w in warnings)
    assert lint.warnings(topo, maps.compute(topo, 4, "scatter")) == []


def test_lint_flags_two_threads_on_one_bulldozer_module():
    topo = load("bulldozer")
    warnings = lint.warnings(topo, maps.compute(topo, 2, "explicit", explicit="0,1"))
    assert any(w.startswith("module") for w in warnings)
    assert not any(w.startswith("module") for w in
                   lint.warnings(topo, maps.compute(topo, 32, "scatter")))


def test_lint_flags_smt_siblings_while_cores_idle():
    topo = load("cometlake")
    assert any(w.startswith("core") for w in lint.warnings(topo, maps.compute(topo, 2, "compact")))
    assert lint.warnings(topo, maps.compute(topo, 8, "scatter")) == []
