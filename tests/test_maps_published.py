"""The placement engine reproduces the maps the studies published, exactly."""

from pathlib import Path

import pytest

from placement.engine import maps, topology

ROOT = Path(__file__).resolve().parents[1]
TOPO = ROOT / "topologies"


def load(name: str) -> topology.Topology:
    return topology.load(TOPO / f"{name}.xml")


def cpus(name: str, threads: int, strategy: str) -> list[int]:
    return maps.compute(load(name), threads, strategy).cpus


def test_bulldozer_scatter_64_is_the_published_map():
    published = (ROOT / "config" / "maps" / "bulldozer.map").read_text().split("\n", 1)[1].split()
    assert cpus("bulldozer", 64, "scatter") == [int(c) for c in published]


def test_bulldozer_scatter_keeps_threads_off_shared_modules_up_to_32():
    topo = load("bulldozer")
    first32 = maps.compute(topo, 32, "scatter").cpus
    modules = {topo.by_os[c].ancestor("L2Cache") for c in first32}
    assert len(modules) == 32


@pytest.mark.parametrize("strategy,expected", [
    ("compact", [0, 1, 2, 3, 4, 5, 6, 7]),
    ("scatter", [0, 4, 1, 5, 2, 6, 3, 7]),
])
def test_xeon_e5620(strategy, expected):
    assert cpus("xeon-e5620", 8, strategy) == expected


@pytest.mark.parametrize("strategy,expected", [
    ("compact", [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]),
    ("scatter", list(range(16))),
])
def test_cometlake(strategy, expected):
    assert cpus("cometlake", 16, strategy) == expected


def test_xeon_study_pitfall_compact_packs_one_socket():
    """GOMP_CPU_AFFINITY=0-7 with 4 threads used one socket: the engine shows the same."""
    topo = load("xeon-e5620")
    packed = maps.compute(topo, 4, "compact").cpus
    assert {topo.by_os[c].ancestor("Package") for c in packed} == {0}
    spread = maps.compute(topo, 4, "scatter").cpus
    assert {topo.by_os[c].ancestor("Package") for c in spread} == {0, 1}


def test_intel_smt_numbering_of_e5_2420():
    topo = load("xeon-e5-2420")
    # usual Linux numbering: core c of package p holds PUs 6p+c and 12+6p+c
    assert cpus("xeon-e5-2420", 4, "compact") == [0, 12, 1, 13]
    assert cpus("xeon-e5-2420", 4, "scatter") == [0, 6, 1, 7]
    assert sorted(topo.numa_nodes) == [0, 1]


def test_e5_4617_has_eight_numa_nodes_of_six_cores():
    topo = load("xeon-e5-4617")
    assert len(topo.numa_nodes) == 8
    assert all(len(c) == 6 for c in topo.numa_nodes.values())
    assert cpus("xeon-e5-4617", 8, "scatter") == [0, 6, 12, 18, 24, 30, 36, 42]


def test_omp_spread_and_close_over_cores():
    topo = load("cometlake")
    spread = maps.compute(topo, 4, "spread-cores")
    assert [sorted(p) for p in spread.places] == [[0, 8], [2, 10], [4, 12], [6, 14]]
    close = maps.compute(topo, 2, "close-threads")
    assert close.cpus == [0, 8]


def test_oversubscription_wraps_round_only_when_asked():
    topo = load("xeon-e5620")
    with pytest.raises(maps.PlacementError, match="--oversubscribe"):
        maps.compute(topo, 16, "scatter")
    wrapped = maps.compute(topo, 16, "scatter", oversubscribe=True)
    assert wrapped.cpus == [0, 4, 1, 5, 2, 6, 3, 7] * 2
    assert wrapped.oversubscribed


@pytest.mark.parametrize("spec,message", [
    ("0,1,1,2", "twice"),
    ("0,99", "not in the topology"),
    ("0,a", "bad CPU entry 'a'"),
    ("0,1", "2 entries for 4 threads"),
])
def test_explicit_list_errors_name_the_bad_entry(spec, message):
    with pytest.raises(maps.PlacementError, match=message):
        maps.compute(load("xeon-e5620"), 4, "explicit", explicit=spec)


def test_threads_per_rank_and_ranks_are_capped_by_the_node():
    from placement.engine import hybrid
    topo = load("bulldozer")
    with pytest.raises(maps.PlacementError, match="at most 4096 threads per rank"):
        hybrid.compute(topo, 4, 100_000)
    with pytest.raises(maps.PlacementError, match="at most one rank per core"):
        hybrid.compute(topo, 100_000, 1)
    assert len(hybrid.compute(topo, 4, 4096).places[0]) == 4096    # linear: a second at most


def test_renderings_that_name_one_cpu_give_each_thread_its_own_pu_and_say_so():
    from placement.engine import launch, renderings
    topo = load("cometlake")
    pl = maps.compute(topo, 16, "close-cores")
    assert renderings.env(pl, "gomp")["GOMP_CPU_AFFINITY"] == \
        "0 8 1 9 2 10 3 11 4 12 5 13 6 14 7 15"
    assert "proclist=[{0,8},{0,8},{1,9}" in renderings.render(pl, "kmp")
    assert renderings.render(pl, "likwid").startswith("OMP_NUM_THREADS=16 likwid-pin")
    narrow = launch.settings(topo, 4, "close-cores", binder="gomp").warnings
    assert any("one PU of a multi-PU place" in w for w in narrow)
    with pytest.raises(maps.PlacementError, match="likwid-pin cannot state this map"):
        renderings.render(maps.compute(topo, 32, "close-threads", oversubscribe=True), "likwid")


def test_spread_cores_on_packages_of_4_and_3_cores_puts_one_thread_on_each():
    """libgomp and libomp both give 2 spread threads one package each on 4+3 cores."""
    text = (ROOT / "topologies" / "xeon-e5620.xml").read_text()
    lines = text.splitlines(keepends=True)
    last = next(i for i, line in enumerate(lines) if 'type="L2Cache" cpuset="0x00000080"' in line)
    text = "".join(lines[:last] + lines[last + 7:])      # the L2, L1, Core and PU of PU 7
    core7 = 'os_index="7"' not in text
    assert core7, "the fixture's last core"
    text = text.replace("0x000000f0", "0x00000070").replace("0x000000ff", "0x0000007f")
    topo = topology.from_xml(text)
    assert [len(c) for c in topo.groups("Package").values()] == [4, 3]
    spread = maps.compute(topo, 2, "spread-cores")
    assert {topo.by_os[min(p)].ancestor("Package") for p in spread.places} == {0, 1}
