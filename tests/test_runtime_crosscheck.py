"""Every rendering, read by the runtime or tool that consumes it, binds what the map says.

On every stored topology (``topologies/*.xml``), for thread counts 1, 2, P/2, P and 2P
(P: the node's PUs), every strategy and every format, the real consumer is run on a node
made to look like the XML (``tests/fake_node.py``: an ``LD_PRELOAD`` shim that records the
masks a runtime asks for, and the node's ``/proc/cpuinfo`` and sysfs). Compared, per thread
(per rank and thread for the hybrid layouts), is the CPU set the consumer asked the kernel
for, with the map's place:

- ``omp``/``env`` (``OMP_PLACES``) under libgomp and LLVM libomp, ``gomp``
  (``GOMP_CPU_AFFINITY``) under both, ``kmp`` (``KMP_AFFINITY``) under libomp;
- ``likwid``: likwid 5.2's rules (the ``-c`` list keeps as many entries as it has distinct
  CPUs, thread k gets entry k modulo that, ``OMP_NUM_THREADS`` from the line), the
  truncation rule checked against the real ``likwid-pin -p`` here;
- ``taskset``, ``numactl``, ``hwloc`` (``hwloc-bind`` on the XML) run for real, the process's
  set compared; the ``hwloc`` locations also through ``hwloc-calc -i`` on the XML;
- hybrid layouts: ``mpirun`` (Open MPI, ``hwloc_base_topo_file``) with the shared OpenMP
  environment under libgomp and libomp, the ``per-rank`` fragment under both, and ``srun``:
  srun's own option parser, each ``mask_cpu`` decoded as Slurm does.

A case a format refuses (one line, naming a format that can) is counted, not compared.
The counts of compared cases per consumer are printed at the end (``-s`` shows them).
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import fake_node
from placement.engine import format_ranges, hybrid, hybrid_launch, maps, renderings, topology
from placement.util import PlacementError

ROOT = Path(__file__).resolve().parents[1]
XMLS = sorted((ROOT / "topologies").glob("*.xml"))
STRATEGIES = [s for s in maps.STRATEGIES]
COUNTS: collections.Counter = collections.Counter()

pytestmark = pytest.mark.skipif(bool(fake_node.missing_tools()),
                                reason=f"needs {', '.join(fake_node.missing_tools())}")


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    return fake_node.build(str(tmp_path_factory.mktemp("fake-node")))


def thread_counts(p: int) -> list[int]:
    return sorted({1, 2, max(1, p // 2), p, 2 * p})


def run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """One consumer run; a run the loaded 2-CPU host stalls past 120 s is tried once more."""
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)


def exports(text: str) -> dict[str, str]:
    return dict(re.findall(r'export (\w+)="([^"]*)"', text))


def show(sets) -> str:
    return " ".join("{" + format_ranges(s) + "}" if s is not None else "-" for s in sets[:6])


def bound(proc: subprocess.CompletedProcess, rank: int = 0) -> list[frozenset[int]]:
    """Each thread's CPU set from the probe, in thread order."""
    got = fake_node.parse_probe(proc.stdout)
    return [got[k] for k in sorted(got) if k[0] == rank]


def likwid_binding(text: str, node: list[int]) -> list[frozenset[int]]:
    """Where likwid-pin 5.2 puts each thread of a rendered line (its Lua front end and
    its pthread wrapper): the list keeps as many entries as it has distinct CPUs, thread k
    (the main thread first) gets entry k modulo that; OMP_NUM_THREADS from the line."""
    threads = int(re.search(r"OMP_NUM_THREADS=(\d+)", text).group(1))
    cpus = [int(c) for c in re.search(r"-c (\S+)", text).group(1).split(",")]
    cpus = cpus[:len(set(cpus))]
    return [frozenset({cpus[k % len(cpus)]}) for k in range(threads)]


def test_likwid_pin_keeps_as_many_entries_as_distinct_cpus():
    """The rule :func:`likwid_binding` models, asked of the real likwid-pin on this host."""
    if shutil.which("likwid-pin") is None:
        pytest.skip("likwid-pin is not installed")
    for given, kept in (("0,0,1,1", "0,0"), ("1,0,1", "1,0"), ("0,1,0,1", "0,1")):
        out = subprocess.run(["likwid-pin", "-p", "-c", given], capture_output=True,
                             text=True, timeout=60).stdout.strip().splitlines()[-1]
        assert out == kept


class Node:
    """One stored topology, visible to the consumers, and the cases run on it."""

    def __init__(self, xml: Path, tools: dict[str, str], tmp: Path):
        self.xml, self.tools = xml, tools
        self.topo = topology.load(xml)
        root = fake_node.make_root(self.topo, tmp / xml.stem)
        self.env = fake_node.environ(self.topo, root, tools, tmp / f"{xml.stem}-masks")
        self.sets: dict[tuple, frozenset[int]] = {}

    def openmp(self, runtime: str, extra: dict[str, str], pre: list[str] = ()):
        return run(list(pre) + [self.tools[runtime]], dict(self.env, **extra))

    def process_set(self, prefix: list[str], extra: dict[str, str] | None = None) -> frozenset:
        key = tuple(prefix)
        if key not in self.sets:
            env = dict(self.env, OMP_NUM_THREADS="1", **(extra or {}))
            proc = run(prefix + [self.tools["gomp"]], env)
            assert proc.returncode == 0, proc.stderr[-500:]
            self.sets[key] = bound(proc)[0]
        return self.sets[key]


def check_threads(node: Node, pl: maps.Placement) -> list[str]:
    """Every per-thread and set rendering of one map, run by its consumers: mismatches."""
    bad = []
    expect_places = list(pl.places) if pl.bound else [frozenset(node.topo.cpus)] * pl.threads
    pinned = ([frozenset({c}) for c in renderings.pinned_cpus(pl)] if pl.bound
              else expect_places)
    cases = [("omp", "libgomp", "gomp", expect_places), ("omp", "libomp", "omp", expect_places),
             ("gomp", "libgomp", "gomp", pinned), ("gomp", "libomp", "omp", pinned),
             ("kmp", "libomp", "omp", expect_places), ("env", "libgomp", "gomp", expect_places)]
    for fmt, consumer, probe, want in cases:
        proc = node.openmp(probe, exports(renderings.render(pl, fmt)))
        got = bound(proc)
        COUNTS[f"{fmt} under {consumer}"] += 1
        if proc.returncode != 0 or got != want:
            bad.append(f"{pl.strategy} {pl.threads} {fmt}/{consumer}: {show(got)} want "
                       f"{show(want)} {proc.stderr[-200:]}")
    try:
        text = renderings.render(pl, "likwid")
        COUNTS["likwid (likwid-pin 5.2 rules)"] += 1
        if pl.bound and likwid_binding(text, node.topo.cpus) != pinned:
            bad.append(f"likwid: {text}")
    except PlacementError as err:
        assert "--format omp" in str(err)
        COUNTS["likwid refused (one line)"] += 1
    if pl.bound:
        bad += check_sets(node, pl)
    return bad


def check_sets(node: Node, pl: maps.Placement) -> list[str]:
    """taskset, numactl and hwloc-bind bind the process to the map's set; hwloc-calc agrees."""
    bad, want = [], pl.cpu_set
    extra = {"HWLOC_XMLFILE": str(node.xml), "HWLOC_THISSYSTEM": "1"}
    for fmt in ("taskset", "numactl", "hwloc"):
        prefix = renderings.command(pl, fmt)
        got = node.process_set(prefix, extra if fmt == "hwloc" else None)
        COUNTS[fmt] += 1
        if got != want:
            bad.append(f"{fmt}: {format_ranges(got)} want {format_ranges(want)}")
    locs = [a for a in renderings.command(pl, "hwloc") if a.startswith("pu:")]
    key = ("hwloc-calc",) + tuple(locs)
    if key not in node.sets:
        out = subprocess.run(["hwloc-calc", "-i", str(node.xml), "-p", "-I", "pu", "--po", *locs],
                             capture_output=True, text=True, timeout=60).stdout.strip()
        node.sets[key] = frozenset(int(c) for c in out.split(","))
    COUNTS["hwloc-calc"] += 1
    if node.sets[key] != want:
        bad.append(f"hwloc-calc: {format_ranges(node.sets[key])} want {format_ranges(want)}")
    return bad


def placements(topo: topology.Topology):
    p = len(topo.pus)
    for strategy in STRATEGIES:
        for n in thread_counts(p):
            explicit = list(reversed(topo.cpus)) if strategy == "explicit" else None
            yield maps.compute(topo, n, strategy, explicit=explicit, oversubscribe=n > p)


@pytest.mark.parametrize("xml", XMLS, ids=[x.stem for x in XMLS])
def test_every_thread_rendering_binds_the_map(xml, tools, tmp_path):
    node = Node(xml, tools, tmp_path)
    with ThreadPoolExecutor(2) as pool:
        bad = [b for found in pool.map(lambda pl: check_threads(node, pl),
                                       list(placements(node.topo))) for b in found]
    assert not bad, "\n".join(bad[:20])


# --- hybrid layouts -------------------------------------------------------------------------
def layouts(topo: topology.Topology):
    """Every domain the node has, both units, 1, one per place, one more (where the
    runtimes split differently) and twice as many threads per rank."""
    for domain in ("package", "numa", "l3", "node"):
        for unit in ("cores", "threads"):
            try:
                ranks, per = hybrid.fill(topo, domain)
            except PlacementError:
                continue
            one = hybrid.compute(topo, ranks, 1, domain, unit)
            places = one.cores_per_rank if unit == "cores" else len(one.rank_sets[0])
            for threads in sorted({1, places, places + 1, 2 * places}):
                yield hybrid.compute(topo, ranks, threads, domain, unit)


def check_mpirun(node: Node, hp: hybrid.HybridPlacement, runtime: str) -> list[str]:
    env = dict(node.env, **hybrid_launch.omp_env(hp))
    passed = [a for k in ("LD_PRELOAD", "FAKE_NODE_ROOT", "FAKE_NODE_CPUS", "FAKE_NODE_DIR",
                          "KMP_TOPOLOGY_METHOD", "KMP_CPUINFO_FILE") for a in ("-x", k)]
    opts = hybrid_launch.mpirun_options(hp, hybrid_launch.ompi_major())
    cmd = ["mpirun", "--allow-run-as-root", "--mca", "hwloc_base_topo_file", str(node.xml),
           *passed, *opts, node.tools[runtime]]
    proc = run(cmd, env)
    COUNTS[f"mpirun + OMP_PLACES={hp.unit} under {'libgomp' if runtime == 'gomp' else 'libomp'}"] += 1
    got = fake_node.parse_probe(proc.stdout)
    bad = []
    for r in range(hp.ranks):
        threads = [got.get((r, t)) for t in range(hp.threads)]
        want = expected_shared(hp, r, runtime)
        if threads != want:
            bad.append(f"mpirun {hp.domain}/{hp.unit} {hp.ranks}x{hp.threads} rank {r} "
                       f"({runtime}): {show(threads)} want {show(want)} {proc.stderr[-300:]}")
    return bad


def expected_shared(hp: hybrid.HybridPlacement, rank: int, runtime: str) -> list[frozenset]:
    """``OMP_PLACES=cores|threads`` cut from the rank's mask, as each runtime binds them."""
    return list(hp.runtime_places(rank, "libgomp" if runtime == "gomp" else "libomp"))


def check_per_rank(node: Node, hp: hybrid.HybridPlacement, runtime: str) -> list[str]:
    script = hybrid_launch.per_rank_script(hp)
    bad = []
    for r in range(hp.ranks):
        pre = ["taskset", "-c", format_ranges(hp.rank_sets[r]), "sh", "-c",
               script + f'\nexec "{node.tools[runtime]}"']
        proc = run(pre, dict(node.env, OMPI_COMM_WORLD_LOCAL_RANK=str(r)))
        COUNTS[f"per-rank under {'libgomp' if runtime == 'gomp' else 'libomp'}"] += 1
        if bound(proc) != list(hp.places[r]):
            bad.append(f"per-rank {hp.domain}/{hp.unit} {hp.ranks}x{hp.threads} rank {r} "
                       f"({runtime}): {show(bound(proc))} want {show(hp.places[r])} "
                       f"{proc.stderr[-300:]}")
    return bad


def check_srun(node: Node, hp: hybrid.HybridPlacement, slurm_conf: Path) -> list[str]:
    """srun 22.05's own parser takes the options; each mask decodes to the rank's CPUs."""
    bad = []
    for explicit in (False, True):
        opts = hybrid_launch.srun_options(hp, node.topo, explicit)
        proc = subprocess.run(["srun", *opts, "--version"], capture_output=True, text=True,
                              timeout=60, env={"SLURM_CONF": str(slurm_conf), "PATH": "/usr/bin:/bin"})
        COUNTS["srun parser"] += 1
        if proc.returncode != 0:
            bad.append(f"srun {' '.join(opts)}: {proc.stderr.strip()}")
        bind = opts[-1].partition("=")[2]
        if bind.startswith("mask_cpu:"):
            masks = bind.partition(":")[2]
            for r in range(hp.ranks):
                COUNTS["srun mask_cpu"] += 1
                if hybrid_launch.slurm_bind_set("mask_cpu", masks, r) != hp.rank_sets[r]:
                    bad.append(f"srun mask of rank {r}: {masks}")
    return bad


@pytest.mark.parametrize("xml", XMLS, ids=[x.stem for x in XMLS])
def test_every_hybrid_layout_binds_the_map(xml, tools, tmp_path):
    if shutil.which("mpirun") is None:
        pytest.skip("Open MPI's mpirun is not installed")
    node = Node(xml, tools, tmp_path)
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=check\nSlurmctldHost=localhost\nNodeName=localhost CPUs=2\n"
                    "PartitionName=p Nodes=localhost\n")
    bad = []
    for hp in layouts(node.topo):
        bad += check_srun(node, hp, conf)
        for runtime in ("gomp", "omp"):
            bad += check_mpirun(node, hp, runtime)
            bad += check_per_rank(node, hp, runtime)
    assert not bad, "\n".join(bad[:20])


def test_zz_cases_compared_per_consumer(capsys):
    """The count of compared cases for each consumer (run last, after the checks above)."""
    with capsys.disabled():
        for consumer, n in sorted(COUNTS.items()):
            print(f"CROSSCHECK {consumer}: {n}")
