"""A new system's compute node captured through its own partition (and named), compared with
the stored topology, a task tried on a second node where the partition has several, and both
files (the system file and the topology beside it) written: every failure until both are
written puts back what was there.

The capture goes through ReFrame's job API (:mod:`placement.testlib.node_topology`, imported
only when a capture runs).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..engine import topology
from ..util import PlacementError, atomic
from . import system_file, two_nodes
from .system_file import root, systems_dir, topology_file


def _load_settings(rconfig, settings: Path):
    """ReFrame's configuration with every system file; one line when one of them does not
    load. Loading runs each system file (the site's own folder's too): a syntax error or a
    file that defines more than its systems ended ``site new`` for another system in a
    traceback."""
    try:
        return rconfig.load_config(str(settings))
    except Exception as exc:        # noqa: BLE001 - a site's Python file can raise anything
        if isinstance(exc, SyntaxError):
            why = f"{exc.filename}, line {exc.lineno}: SyntaxError: {exc.msg}"
        else:
            why = " ".join(str(exc).split()) or type(exc).__name__
            why = why if len(why) <= 400 else why[:400] + "..."
            why = why if type(exc).__name__ in why else f"{type(exc).__name__}: {why}"
        raise PlacementError(f"the system files do not load ({why}): fix or remove that file "
                             "first; nothing was written") from None


def partition(name: str, settings: Path):
    """The new system's first partition, ReFrame's runtime set up for it."""
    from reframe.core import config as rconfig
    from reframe.core import runtime as rruntime

    site = _load_settings(rconfig, settings)
    site.select_subconfig(name)
    rruntime.init_runtime(site)
    return rruntime.runtime().system.partitions[0]


def capture(part, topo_dir: Path) -> str:
    """The compute node's hwloc XML, through the new system's partition (ReFrame's job API)."""
    from ..testlib import node_topology

    if node_topology.is_local(part):
        return topology.live_xml()
    with tempfile.TemporaryDirectory(prefix=".capture-", dir=topo_dir) as tmp:
        dest = Path(tmp) / "node.xml"
        node_topology.capture(part, dest)
        return dest.read_text()


def host_name(xml: str) -> str | None:
    """The node an hwloc XML describes (its ``HostName`` info), None where it does not say."""
    import xml.etree.ElementTree as ET
    try:
        root_el = ET.fromstring(xml)
    except ET.ParseError:
        return None
    for info in root_el.iter("info"):
        if info.get("name") == "HostName" and info.get("value"):
            return info.get("value")
    return None


def captured_line(a: system_file.Answers) -> str:
    """The node the topology is from, and how many the partition has: a site sees which node
    it described and how many more the file stands for."""
    where = ""
    if a.partition:
        count = f"{a.nodes} node(s)" if a.nodes is not None else \
            f"{a.scheduler} did not say how many nodes"
        where = f"; partition {a.partition}: {count}"
    return f"captured on node {a.captured or '(its name not in the topology)'}{where}"


def changes(old: topology.Topology, new: topology.Topology) -> list[str]:
    """What differs between the stored node and the one just captured, one line each."""
    out = []
    for what, a, b in (("PUs", len(old.pus), len(new.pus)),
                       ("packages", old.count("Package"), new.count("Package")),
                       ("NUMA nodes", len(old.numa_nodes), len(new.numa_nodes)),
                       ("cores", old.count("Core"), new.count("Core"))):
        if a != b:
            out.append(f"{what}: {a} -> {b}")
    if not out:
        if old.cpus != new.cpus:
            out.append("numbering: the PUs are listed in another order "
                       f"({' '.join(map(str, old.cpus[:8]))} ... -> "
                       f"{' '.join(map(str, new.cpus[:8]))} ...)")
        elif {n: c for n, c in old.numa_nodes.items()} != {n: c for n, c in
                                                           new.numa_nodes.items()}:
            out.append("numbering: the NUMA nodes hold other PUs")
    return out


def existing(paths: list[Path], name: str, force: bool) -> dict[Path, tuple[str, int] | None]:
    """Each path's text and mode (None: absent), to put back on failure; one line when one is
    there without ``--force`` (a site's tuned file, the catch-all ``generic``, a study's
    topology), or is a link, FIFO or device (never written through)."""
    from ..util import regular_file
    there = [p for p in paths if os.path.lexists(p)]
    for p in there:
        regular_file.refuse_special(p, "system or topology file")
    if there and not force:
        raise PlacementError(
            f"system {name!r} exists ({', '.join(map(str, there))}): `site new` replaces a "
            "system or topology only with --force (it then says what changed on the node); "
            "nothing was written")
    return {p: ((regular_file.read_text(p, "system or topology file", 64 * 2**20),
                 os.stat(p).st_mode & 0o777) if p in there else None) for p in paths}


def not_the_checkouts(name: str) -> None:
    """One line when a site's own folder (``PLACEMENT_SYSTEMS``) would get a system the
    checkout already defines (config/systems/NAME.py, ``_`` read as ``-``): ReFrame selects
    the checkout's, so ``site new bulldozer`` captured through the study's Grid Engine queue
    and ``site new generic`` wrote a second catch-all that no run would use. --force does
    not change that."""
    own = root() / "config" / "systems"
    if systems_dir().resolve() == own.resolve():
        return
    for path in sorted(own.glob("*.py")):
        if name in (path.stem, path.stem.replace("_", "-")):
            raise PlacementError(
                f"system {name!r} is the checkout's own ({path}): one of that name in "
                f"{systems_dir()} would never be the one ReFrame selects; give the new system "
                "another name; nothing was written")


def restore(saved: dict[Path, tuple[str, int] | None]) -> None:
    """Put each file back as :func:`existing` found it (remove one that was not there)."""
    for p, old in saved.items():
        if old is None:
            p.unlink(missing_ok=True)
        else:
            atomic.write_text(p, old[0], mode=old[1])


def capture_and_write(a: system_file.Answers, dest: Path, topo_dest: Path, settings: Path,
                      say: Callable[[str], None]) -> topology.Topology:
    """A first file without a topology (its partition captures the node's), the node's
    topology parsed and compared with the stored one, a task tried on a second node where
    the partition has several, then both files written."""
    atomic.write_text(dest, system_file.system_file(a, None))
    part = partition(a.name, settings)
    xml = capture(part, topo_dest.parent)
    # a capture that does not parse is named as the capture, not as the stored file; once
    # parsed, the topology is the one written to topo_dest
    new_topo = topology.from_xml(xml, source=f"the topology captured now for {topo_dest}")
    new_topo.source = str(topo_dest)
    a.captured = host_name(xml)
    say(captured_line(a))
    if topo_dest.exists():
        try:
            old = topology.load(topo_dest)
        except PlacementError:
            old = None
        diff = changes(old, new_topo) if old else ["the stored topology could not be read"]
        if diff:
            say(f"the node changed since {topo_dest} was captured:")
            for line in diff:
                say(f"  {line}")
        else:
            say(f"the node is as {topo_dest} describes it")
    if a.nodes is not None and a.nodes > 1:
        a.two_nodes = two_nodes.probe(part, topo_dest.parent)
        say("a task on a second node: " + (
            "started" if not a.two_nodes else
            f"{a.two_nodes}; the two-node checks skip (extras['two_node_launch'] False)"))
    atomic.write_text(topo_dest, xml)
    atomic.write_text(dest, system_file.system_file(a, topo_dest))
    return new_topo


def write_system(a: system_file.Answers, force: bool,
                 say: Callable[[str], None]) -> tuple[Path, Path, topology.Topology]:
    """The system file and the node's topology written (the file, the topology file, the node).

    One line, exit 2, before anything is written, when the name is the checkout's own or (without
    ``force``) the system exists; every failure until both files are written puts back what was
    there. ``say`` gets the lines a site reads as it goes. ``a`` gains what the capture found
    (the node's name, whether a task starts on a second node).
    """
    dest = systems_dir() / f"{a.name}.py"
    topo_dest = topology_file(a.name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    topo_dest.parent.mkdir(parents=True, exist_ok=True)
    settings = root() / "config" / "settings.py"
    not_the_checkouts(a.name)
    saved = existing([dest, topo_dest], a.name, force)
    say(f"site {a.name}: {a.scheduler}" + (f" partition {a.partition}" if a.partition else "")
        + (f" host {a.host}" if a.host else "") + f", launcher {a.launcher}")
    try:        # every failure until both files are written puts back what was there
        new_topo = capture_and_write(a, dest, topo_dest, settings, say)
    except BaseException:
        restore(saved)
        raise
    return dest, topo_dest, new_topo
