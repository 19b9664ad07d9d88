"""The committed topology XML files are exactly what their synthetic descriptions generate."""

import os
import subprocess
import sys
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


# --- bounded, one-line reading of a bad topology --------------------------------------------
BASE = (TOPO / "xeon-e5620.xml").read_text()


def _numa_edit(cpuset: str | None) -> str:
    import re
    node = re.search(r'<object type="NUMANode"[^>]*>', BASE).group(0)
    new = re.sub(r' cpuset="[^"]*"', "" if cpuset is None else f' cpuset="{cpuset}"', node)
    return BASE.replace(node, new, 1)


@pytest.mark.parametrize("text,message", [
    ('<topology>' + '<object type="Group">' * 1500 + '<object type="PU" os_index="0"/>'
     + '</object>' * 1500 + '</topology>', "nests deeper than 64 levels"),
    (_numa_edit(None), "NUMANode 0 has no cpuset"),
    (_numa_edit(""), "NUMANode 0 has an empty cpuset"),
    (BASE.replace('type="PU" os_index="7"', 'type="PU" os_index="' + "9" * 5000 + '"', 1),
     "is not a non-negative whole number"),
    (BASE.replace('type="PU" os_index="7"', 'type="PU" os_index="99999999"', 1),
     "past the largest index"),
    (BASE.replace('allowed_cpuset="0x000000ff"', 'allowed_cpuset="0x0000ff00"'),
     "allows none of the topology's PUs"),
])
def test_a_bad_topology_is_one_bounded_line(text, message):
    with pytest.raises(topology.PlacementError, match=message) as err:
        topology.from_xml(text)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400


def test_a_megabyte_bad_mask_is_not_printed():
    with pytest.raises(topology.PlacementError, match="not an hwloc bitmap") as err:
        topology.from_xml(_numa_edit("0x" + "z" * 2_600_000))
    assert len(str(err.value)) < 400


def test_allowed_cpuset_is_intersected_with_the_pus_as_hwloc_does():
    outside = topology.from_xml(BASE.replace('allowed_cpuset="0x000000ff"',
                                             'allowed_cpuset="0x0000ff0f"'))
    assert outside.cpus == [0, 1, 2, 3] and outside.restricted_from == frozenset(range(8))
    infinite = topology.from_xml(BASE.replace('allowed_cpuset="0x000000ff"',
                                              'allowed_cpuset="0xf...f,0xffffffff"'))
    assert infinite.cpus == list(range(8)) and not infinite.restricted_from


def test_a_long_allowed_cpuset_parses_in_linear_time():
    words = ",".join(["0x00000000"] * 25_000) + ",0x0000000f"
    topo = topology.from_xml(BASE.replace('allowed_cpuset="0x000000ff"',
                                          f'allowed_cpuset="{words}"'))
    assert topo.cpus == [0, 1, 2, 3]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_topology_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    import os
    path = tmp_path / "node.xml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(topology.PlacementError, match="not a regular file"):
        topology.load(path)


def test_a_synthetic_description_past_any_node_is_refused_before_lstopo():
    with pytest.raises(topology.PlacementError, match="more than 1048576 PUs"):
        generate_xml("pack:1000 core:1000 pu:1000")


@pytest.mark.parametrize("say", ["exec yes '<topology>'", r"printf '\377\376<topology>'"])
def test_synthetic_reads_lstopo_bounded_and_as_utf8(tmp_path, say):
    """An lstopo on PATH that writes without end (a MemoryError traceback, or the memory
    filled) or bytes that are no UTF-8 (a UnicodeDecodeError traceback): one line, exit 2."""
    import resource
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("lstopo-no-graphics", "lstopo"):
        (bindir / tool).write_text(f"#!/bin/sh\n{say}\n")
        (bindir / tool).chmod(0o755)
    desc = tmp_path / "node.synthetic"
    desc.write_text("pack:2 core:2 pu:1\n")
    proc = subprocess.run([sys.executable, "-m", "placement", "topo", "--synthetic", str(desc)],
                          capture_output=True, text=True, timeout=150,
                          env={**os.environ, "PATH": f"{bindir}:/usr/bin:/bin"},
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS,
                                                                (3 << 30, 3 << 30)))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(proc.stderr.splitlines()) == 1 and "is it hwloc's lstopo?" in proc.stderr
