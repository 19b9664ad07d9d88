"""The hardware topology as the placement engine needs it, read from hwloc XML.

Only the CPU tree matters for maps (packages, dies, groups, caches, cores,
PUs), plus which NUMA node each PU belongs to (hwloc 2 attaches NUMA nodes as
memory children, so they are read from their cpusets, not from the tree).
"""

from __future__ import annotations

import functools
import os
import selectors
import shutil
import stat
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..util import PlacementError
from .cpulist import MAX_INDEX, format_ranges, parse_bitmask, parse_list

#: hwloc object types that form levels of the CPU tree (memory/IO children are skipped).
CPU_TYPES = {
    "Machine", "Package", "Die", "Group", "L5Cache", "L4Cache", "L3Cache", "L2Cache",
    "L1Cache", "L3iCache", "L2iCache", "L1iCache", "Core", "PU",
}
#: No node's hwloc tree is this deep (Machine, Package, Die, Group, 5 caches, Core, PU is
#: about 12): a file nested deeper is refused before the walk recurses into it.
MAX_DEPTH = 64
#: A topology file larger than this is no node's (hwloc writes a few MB for thousands of
#: PUs): refused before it is read.
MAX_TOPOLOGY_BYTES = 64 * 2**20
#: How long lstopo may take to describe this machine.
LSTOPO_TIMEOUT_S = 120
#: Levels the lint and summary name; a "module" is an L2 shared by more than one core.
NAMED_LEVELS = ("Package", "Die", "L3Cache", "L2Cache", "Core")


@dataclass(frozen=True, eq=False)
class PU:
    """One processing unit with its place in the tree.

    ``path`` holds, from the root down, ``(type, logical index, rank among siblings)``
    for every CPU-tree ancestor, the PU itself last; ``numa`` is the OS index of
    its NUMA node.
    """

    os_index: int
    logical: int
    numa: int
    path: tuple[tuple[str, int, int], ...]

    def ancestor(self, kind: str) -> int | None:
        """Logical index of the nearest ancestor of that hwloc type, or None."""
        for typ, logical, _rank in reversed(self.path):
            if typ == kind:
                return logical
        return None

    @functools.cached_property
    def ranks(self) -> tuple[int, ...]:
        """Rank among siblings at every level, root first: the key scatter sorts on."""
        return tuple(rank for _t, _l, rank in self.path)


@dataclass
class Topology:
    """PUs in hwloc logical order (depth-first: SMT siblings adjacent), plus NUMA nodes."""

    pus: list[PU]
    numa_nodes: dict[int, frozenset[int]]
    source: str
    cache_sizes: dict[str, int] = field(default_factory=dict)
    description: str = ""
    #: The machine's PUs when this topology was cut to the process's CPU set (else empty).
    restricted_from: frozenset[int] = frozenset()

    def restriction(self) -> str:
        """One sentence saying the topology was cut to the CPUs this process may use."""
        return (f"{self.source}: placing on the {len(self.pus)} CPU(s) this process may use "
                f"({format_ranges(self.cpus)} of {format_ranges(self.restricted_from)}: "
                "taskset, a cgroup or a job allocation)")

    def __post_init__(self) -> None:
        self.by_os = {pu.os_index: pu for pu in self.pus}
        self.orders: dict[str, list[int]] = {}   # strategy orders, computed once per topology

    @property
    def cpus(self) -> list[int]:
        """OS indexes of all PUs in logical order."""
        return [pu.os_index for pu in self.pus]

    def count(self, kind: str) -> int:
        """Number of distinct objects of an hwloc type that hold PUs."""
        return len({pu.ancestor(kind) for pu in self.pus if pu.ancestor(kind) is not None})

    def groups(self, kind: str) -> dict[int, list[int]]:
        """PUs (OS indexes) under each object of a type, keyed by its logical index."""
        out: dict[int, list[int]] = {}
        for pu in self.pus:
            key = pu.ancestor(kind)
            if key is not None:
                out.setdefault(key, []).append(pu.os_index)
        return out

    def modules(self) -> dict[int, list[int]]:
        """L2 caches shared by more than one core (Bulldozer modules), as PU lists."""
        out = {}
        for l2, cpus in self.groups("L2Cache").items():
            if len({self.by_os[c].ancestor("Core") for c in cpus}) > 1:
                out[l2] = cpus
        return out

    def node_of(self, cpu: int) -> int:
        """OS index of the NUMA node a PU belongs to."""
        return self.by_os[cpu].numa

    def summary(self) -> str:
        """A short readable description, for `placement topo` and report provenance."""
        lines = [f"topology: {self.source}"]
        if self.restricted_from:
            lines.append(f"restricted: {self.restriction()}")
        if self.description:
            lines.append(f"synthetic: {self.description}")
        counts = [f"{self.count('Package')} package(s)"]
        if self.count("Die") > self.count("Package"):
            counts.append(f"{self.count('Die')} dies")
        counts.append(f"{len(self.numa_nodes)} NUMA node(s)")
        mods = self.modules()
        if mods:
            counts.append(f"{len(mods)} modules (shared L2)")
        counts.append(f"{self.count('Core')} cores")
        counts.append(f"{len(self.pus)} PUs")
        lines.append(", ".join(counts))
        smt = len(self.pus) // max(1, self.count("Core"))
        lines.append(f"hardware threads per core: {smt}")
        for name, size in sorted(self.cache_sizes.items()):
            label = {"L1Cache": "L1d", "L1iCache": "L1i"}.get(name, name.replace("Cache", ""))
            lines.append(f"{label}: {size // 1024} KiB")
        for node, cpus in sorted(self.numa_nodes.items()):
            lines.append(f"NUMA node {node}: PUs {format_ranges(cpus)}")
        for pkg, cpus in sorted(self.groups("Package").items()):
            lines.append(f"package {pkg}: PUs {format_ranges(cpus)}")
        lines.append("logical order: " + " ".join(str(c) for c in self.cpus))
        return "\n".join(lines)


def _int_attr(obj: ET.Element, name: str, top: int | None = None) -> int:
    """A non-negative integer attribute of an hwloc object (below ``top`` when given), or
    an error naming it (and at most the start of what it read)."""
    text = obj.get(name, "")
    shown = repr(text) if len(text) <= 24 else repr(text[:20]) + "..."
    if not (text.isascii() and text.isdigit()) or len(text) > 30:
        raise PlacementError(f"{obj.get('type', 'object')} {name}={shown} is not a "
                             "non-negative whole number: not a valid hwloc topology")
    value = int(text)
    if top is not None and value >= top:
        raise PlacementError(f"{obj.get('type', 'object')} {name}={shown} is past the "
                             f"largest index any node has ({top - 1}): not a valid hwloc "
                             "topology")
    return value


def _walk(elem: ET.Element, path: tuple, counters: dict, out: list, caches: dict) -> None:
    """Depth-first walk of the CPU tree, recording each PU's ancestry."""
    if len(path) >= MAX_DEPTH:
        raise PlacementError(f"the CPU tree nests deeper than {MAX_DEPTH} levels, which no "
                             "node's hwloc topology does")
    rank = 0
    for child in elem.findall("object"):
        typ = child.get("type", "")
        if typ not in CPU_TYPES:
            continue
        if typ.endswith("Cache"):
            kind = typ
            size = child.get("cache_size")
            if size and kind not in caches:
                caches[kind] = _int_attr(child, "cache_size")
        logical = counters.get(typ, 0)
        counters[typ] = logical + 1
        entry = (typ, logical, rank)
        rank += 1
        if typ == "PU":
            os_index = (_int_attr(child, "os_index", MAX_INDEX) if "os_index" in child.attrib
                        else logical)
            out.append((os_index, path + (entry,)))
        else:
            _walk(child, path + (entry,), counters, out, caches)


def from_xml(text: str, source: str = "<xml>") -> Topology:
    """Build a Topology from hwloc XML text (hwloc 2.x format)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise PlacementError(f"{source}: not valid hwloc XML ({exc})") from None
    machine = root.find("object")
    if root.tag != "topology" or machine is None:
        raise PlacementError(f"{source}: not an hwloc topology (expected <topology><object ...>)")
    found: list[tuple[int, tuple]] = []
    caches: dict[str, int] = {}
    try:
        _walk(machine, (), {}, found, caches)
    except PlacementError as err:
        raise PlacementError(f"{source}: {err}") from None
    if not found:
        raise PlacementError(f"{source}: the topology has no PUs")
    seen: set[int] = set()
    for os_index, _ in found:
        if os_index in seen:
            raise PlacementError(f"{source}: PU os_index {os_index} appears twice: "
                                 "each PU of an hwloc topology has its own number")
        seen.add(os_index)
    numa = _numa_nodes(root, max(seen) + 1, source)
    _check_consistent(root, numa, seen, source)
    if not numa:  # hwloc always has one; be lenient with hand-written files
        numa = {0: frozenset(seen)}
    # a PU listed by two nodes (a hand edit) belongs to the lowest, as before
    node_of = {cpu: node for node, cpus in sorted(numa.items(), reverse=True) for cpu in cpus}
    homeless = [os for os, _ in found if os not in node_of]
    if homeless:
        raise PlacementError(f"{source}: PU {homeless[0]} (and {len(homeless) - 1} more) is in "
                             "no NUMA node's cpuset: a cpuset edited by hand? Capture the "
                             "node again with `lstopo --of xml`")
    pus = [PU(os_index=os, logical=i, numa=node_of[os], path=path)
           for i, (os, path) in enumerate(found)]
    desc = ""
    for info in machine.findall("info"):
        if info.get("name") == "SyntheticDescription":
            desc = info.get("value", "")
    topo = Topology(pus=pus, numa_nodes=numa, source=source, cache_sizes=caches,
                    description=desc)
    return restrict_to(topo, set(_allowed(machine, topo, source)))


def _numa_nodes(root: ET.Element, top: int, source: str) -> dict[int, frozenset[int]]:
    """Each NUMA node's PUs from its cpuset; a node without one is an error, not node 0."""
    numa: dict[int, frozenset[int]] = {}
    for obj in root.iter("object"):
        if obj.get("type") != "NUMANode":
            continue
        try:
            node = (_int_attr(obj, "os_index", MAX_INDEX) if "os_index" in obj.attrib
                    else len(numa))
        except PlacementError as err:
            raise PlacementError(f"{source}: {err}") from None
        try:
            cpus = parse_bitmask(obj.get("cpuset", ""), top)
        except ValueError as err:
            raise PlacementError(f"{source}: NUMANode {node} cpuset: {err}") from None
        if not cpus:
            raise PlacementError(f"{source}: NUMANode {node} has "
                                 f"{'an empty' if 'cpuset' in obj.attrib else 'no'} cpuset: "
                                 "its PUs cannot be told; capture the node again with "
                                 "`lstopo --of xml`")
        numa[node] = cpus
    return numa


def _allowed(machine: ET.Element, topo: Topology, source: str) -> frozenset[int]:
    """The PUs the Machine's ``allowed_cpuset`` lets run, read as hwloc reads it.

    `lstopo --disallowed` in a cgroup (a Slurm job) keeps the node's PUs and records the
    ones the job may use: the topology is that part of the node, and says so. Like hwloc,
    bits for PUs the topology lacks are ignored (the set is intersected with its PUs); a
    set that leaves no PU is an error, as nothing could run."""
    text = machine.get("allowed_cpuset")
    if text is None:
        return frozenset(topo.cpus)
    try:
        allowed = parse_bitmask(text, max(topo.cpus) + 1) & frozenset(topo.cpus)
    except ValueError as err:
        raise PlacementError(f"{source}: Machine allowed_cpuset: {err}") from None
    if not allowed:
        raise PlacementError(f"{source}: the Machine's allowed_cpuset allows none of the "
                             f"topology's PUs ({format_ranges(topo.cpus)}): nothing could run "
                             "there; capture the node again with `lstopo --of xml`")
    return allowed


def _check_consistent(root: ET.Element, numa: dict[int, frozenset[int]], pus: set[int],
                      source: str) -> None:
    """A file hwloc wrote is consistent; a hand-edited one may not be: a core without PUs,
    or a NUMA node listing a PU that no package holds, would silently mis-place threads."""
    for i, core in enumerate(o for o in root.iter("object") if o.get("type") == "Core"):
        if not any(d.get("type") == "PU" for d in core.iter("object")):
            raise PlacementError(f"{source}: Core L#{i} (os_index {core.get('os_index', '?')}) "
                                 "has no PU: a PU deleted by hand? Capture the node again with "
                                 "`lstopo --of xml`")
    for node, cpus in sorted(numa.items()):
        lost = sorted(set(cpus) - pus)
        if lost:
            raise PlacementError(f"{source}: NUMA node {node} lists PU(s) "
                                 f"{','.join(map(str, lost))} that no core or package holds: a "
                                 "PU deleted by hand? Capture the node again with "
                                 "`lstopo --of xml`")


def live_xml() -> str:
    """The live machine's topology as hwloc XML, through lstopo, forbidden PUs included.

    In a cgroup cpuset (Slurm's ``task/cgroup``) lstopo hides the PUs the process
    may not use; ``--disallowed`` keeps them, so that :func:`load` can tell the
    node from the part of it this process got, and say so as for ``taskset``.
    """
    for tool in ("lstopo-no-graphics", "lstopo", "hwloc-ls"):
        exe = shutil.which(tool)
        if exe:
            for opts in (["--disallowed"], []):     # hwloc before 2.0 lacks --disallowed
                code, out, _ = run_lstopo([exe, *opts, "--of", "xml", "-"], tool)
                if code == 0:
                    return lstopo_text(out, tool)
    raise PlacementError(
        "cannot read the live topology: hwloc's lstopo is not installed "
        "(apt-get install hwloc, or activate the project's Spack environment), "
        "or pass --topology FILE.xml")


def lstopo_text(out: bytes, tool: str) -> str:
    """lstopo's XML as text; bytes that are no UTF-8 are one line."""
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlacementError(f"{tool} wrote no hwloc XML (not UTF-8 text, byte {exc.start}): "
                             "is it hwloc's lstopo?") from None


def run_lstopo(cmd: list[str], tool: str, what: str = "describe this machine"
            ) -> tuple[int, bytes, bytes]:
    """lstopo's exit status, output and the start of its stderr, read as they come: past
    :data:`LSTOPO_TIMEOUT_S` or :data:`MAX_TOPOLOGY_BYTES` it is killed and that is one line
    (an lstopo that wrote without end filled the memory before its time ran out)."""
    deadline = time.monotonic() + LSTOPO_TIMEOUT_S
    late = PlacementError(f"{tool} did not {what} within {LSTOPO_TIMEOUT_S} s")
    out: dict[int, list[bytes]] = {}
    size = 0
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc, \
            selectors.DefaultSelector() as sel:
        for pipe in (proc.stdout, proc.stderr):
            sel.register(pipe, selectors.EVENT_READ)
            out[pipe.fileno()] = []
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise late
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fileobj)
                    elif key.fileobj is proc.stdout:
                        size += len(chunk)
                        if size > MAX_TOPOLOGY_BYTES:
                            raise PlacementError(
                                f"{tool} wrote more than {MAX_TOPOLOGY_BYTES // 2**20} MiB, "
                                "more than any node's topology: is it hwloc's lstopo?")
                        out[key.fd].append(chunk)
                    elif sum(map(len, out[key.fd])) < 1 << 16:     # the start of stderr
                        out[key.fd].append(chunk)
            code = proc.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            raise late from None
        finally:
            if proc.poll() is None:
                proc.kill()
        return (code, b"".join(out[proc.stdout.fileno()]),
                b"".join(out[proc.stderr.fileno()]))


def node_cpus() -> set[int]:
    """The node's online CPUs as the kernel lists them (empty when it cannot be read).

    Neither a cgroup cpuset nor taskset changes this list, so it is what the
    process's allowed CPUs are held against.
    """
    try:
        text = Path("/sys/devices/system/cpu/online").read_text().strip()
        return set(parse_list(text))
    except (OSError, ValueError, PlacementError):
        return set()


def restrict_to(topo: Topology, allowed: set[int]) -> Topology:
    """The topology cut to the PUs in ``allowed`` (unchanged when it holds them all)."""
    keep = [pu for pu in topo.pus if pu.os_index in allowed]
    if len(keep) == len(topo.pus) or not keep:
        return topo
    pus = [PU(os_index=pu.os_index, logical=i, numa=pu.numa, path=pu.path)
           for i, pu in enumerate(keep)]
    cpus = {pu.os_index for pu in keep}
    numa = {n: frozenset(c & cpus) for n, c in topo.numa_nodes.items() if c & cpus}
    return Topology(pus=pus, numa_nodes=numa, source=topo.source, cache_sizes=topo.cache_sizes,
                    description=topo.description,
                    restricted_from=topo.restricted_from or frozenset(topo.cpus))


def load(path: str | Path | None = None) -> Topology:
    """Load a topology from an hwloc XML file, or from the live machine when path is None.

    The live machine's is cut to the CPUs this process may use: lstopo shows every
    PU of the node, but under ``taskset`` or in a smaller allocation only some run.
    """
    if path is None or str(path) in ("", "live"):
        topo = restrict_to(from_xml(live_xml(), source="live machine"),
                           os.sched_getaffinity(0))
        node = node_cpus()
        if not topo.restricted_from and node and node - set(topo.cpus):
            # an lstopo that hid the forbidden PUs: the node's CPUs come from the kernel
            topo.restricted_from = frozenset(node | set(topo.cpus))
        return topo
    p = Path(path)
    hint = "give an hwloc XML file (make one with `lstopo mynode.xml`) or omit it for the live machine"
    if p.is_dir():
        raise PlacementError(f"topology {str(p)!r} is a directory: {hint}")
    if not p.exists():
        raise PlacementError(f"topology file {str(p)!r} not found: {hint}")
    try:
        text = read_bounded(p, "topology", MAX_TOPOLOGY_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise PlacementError(f"{p}: not hwloc XML (not UTF-8 text): {hint}") from None
    return from_xml(text, source=str(p))


def read_bounded(path: Path, what: str, max_bytes: int) -> bytes:
    """A regular file's bytes, at most ``max_bytes``; a FIFO, device or socket is one line.

    Opened non-blocking, so a FIFO never waits for a writer, and checked once open, so
    ``/dev/zero`` is never read. A symbolic link to a regular file is followed: a site
    may keep its node files anywhere."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise PlacementError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    if stat.S_ISDIR(os.fstat(fd).st_mode):     # fdopen would say "3: Is a directory"
        os.close(fd)
        raise PlacementError(f"{path}: a directory: give the {what} file itself")
    with os.fdopen(fd, "rb") as fp:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PlacementError(f"{path}: not a regular file (a FIFO, device or socket): "
                                 f"give the {what} file itself")
        raw = fp.read(max_bytes + 1)
    if len(raw) > max_bytes:
        size = (f"{max_bytes // 2**20} MiB" if max_bytes >= 2**20
                else f"{max_bytes // 1024} KiB")
        raise PlacementError(f"{path}: larger than {size}, more than any node's {what}; "
                             "nothing was read")
    return raw
