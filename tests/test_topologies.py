"""The committed topology XML files are exactly what their synthetic descriptions generate."""

from pathlib import Path

import pytest

from placement.engine import topology
from placement.engine.synthetic import generate_xml, normalise

TOPO = Path(__file__).resolve().parents[1] / "topologies"
NAMES = sorted(p.stem for p in TOPO.glob("*.synthetic"))


def test_every_reference_node_is_there():
    assert set(NAMES) >= {"bulldozer", "xeon-e5620", "cometlake", "xeon-e5-2420", "xeon-e5-4617"}


@pytest.mark.parametrize("name", NAMES)
def test_xml_regenerates_from_description(name):
    desc = (TOPO / f"{name}.synthetic").read_text()
    assert generate_xml(desc) == normalise((TOPO / f"{name}.xml").read_text())


@pytest.mark.parametrize("name,packages,numa,cores,pus", [
    ("bulldozer", 4, 8, 64, 64),
    ("xeon-e5620", 2, 2, 8, 8),
    ("cometlake", 1, 1, 8, 16),
    ("xeon-e5-2420", 2, 2, 12, 24),
    ("xeon-e5-4617", 8, 8, 48, 48),
])
def test_shapes(name, packages, numa, cores, pus):
    topo = topology.load(TOPO / f"{name}.xml")
    assert (topo.count("Package"), len(topo.numa_nodes), topo.count("Core"), len(topo.pus)) == \
        (packages, numa, cores, pus)


def test_bulldozer_modules_are_two_consecutive_pus():
    mods = topology.load(TOPO / "bulldozer.xml").modules()
    assert len(mods) == 32 and all(c == [c[0], c[0] + 1] for c in mods.values())


def test_live_machine_is_read_through_hwloc():
    live = topology.load(None)
    assert len(live.pus) >= 1 and live.numa_nodes


@pytest.mark.parametrize("text,message", [
    ("not xml", "not valid hwloc XML"),
    ("<other/>", "not an hwloc topology"),
])
def test_bad_xml_is_a_clear_error(text, message):
    with pytest.raises(topology.PlacementError, match=message):
        topology.from_xml(text)
