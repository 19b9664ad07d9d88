"""A node an hwloc XML describes, made visible to the real OpenMP runtimes and binders.

This host has 2 CPUs; the stored topologies have up to 64. The runtimes are run with
``tests/runtime_node/fake_node.c`` preloaded: it answers ``sched_getaffinity`` with the
node's PUs, redirects ``/proc/cpuinfo`` and ``/sys/devices/system/cpu`` (libgomp's
``OMP_PLACES=cores``, libomp's ``KMP_TOPOLOGY_METHOD=cpuinfo``) to files generated here from
the XML, and records every affinity call instead of binding (a CPU this host lacks cannot be
bound). What is compared is therefore the mask each runtime *asks* the kernel for, per
thread, which ``tests/runtime_node/omp_probe.c`` reads back in each OpenMP thread.
No root, no mount namespace: an ``LD_PRELOAD`` library and a folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from placement.engine import format_ranges
from placement.engine.topology import Topology

HERE = Path(__file__).resolve().parent / "runtime_node"
LIBOMP_DIR = "/usr/lib/llvm-14/lib"


@functools.lru_cache(maxsize=None)
def build(out: str) -> dict[str, str]:
    """Compile the shim and the probe for libgomp (gcc) and LLVM libomp (clang) into ``out``."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    shim, gomp, omp = d / "fake_node.so", d / "probe_gomp", d / "probe_omp"
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", shim, HERE / "fake_node.c",
                    "-ldl", "-lpthread"], check=True)
    subprocess.run(["gcc", "-fopenmp", "-o", gomp, HERE / "omp_probe.c"], check=True)
    subprocess.run(["clang", "-fopenmp=libomp", f"-L{LIBOMP_DIR}", f"-Wl,-rpath,{LIBOMP_DIR}",
                    "-o", omp, HERE / "omp_probe.c"], check=True)
    return {"shim": str(shim), "gomp": str(gomp), "omp": str(omp)}


def missing_tools() -> list[str]:
    """What the cross-check needs and this machine lacks (the skip reason)."""
    need = ["gcc", "clang", "hwloc-calc", "taskset", "srun"]
    out = [t for t in need if shutil.which(t) is None]
    if not Path(LIBOMP_DIR, "libomp.so").exists():
        out.append(f"{LIBOMP_DIR}/libomp.so (Debian libomp-dev)")
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _hexmask(bits) -> str:
    """A kernel mask as /proc/self/status writes it: 32-bit hex words, most significant first."""
    value = sum(1 << b for b in bits)
    words = [(value >> (32 * i)) & 0xFFFFFFFF for i in range(max(1, (max(bits) // 32) + 1))]
    return ",".join(f"{w:08x}" for w in reversed(words))


def make_root(topo: Topology, root: Path) -> Path:
    """``proc/cpuinfo`` and ``sys/devices/system/cpu`` of the node, from its hwloc tree."""
    cores = topo.groups("Core") or {i: [c] for i, c in enumerate(topo.cpus)}
    core_of = {c: k for k, cpus in cores.items() for c in cpus}
    packages = topo.groups("Package") or {0: topo.cpus}
    pkg_of = {c: k for k, cpus in packages.items() for c in cpus}
    cpuinfo = []
    sysfs = root / "sys/devices/system/cpu"
    for cpu in sorted(topo.cpus):
        pkg, core = pkg_of[cpu], core_of[cpu]
        # (no "node_0 id" lines: libomp 14 crashes on a NUMA level above the packages)
        cpuinfo.append(f"processor\t: {cpu}\nphysical id\t: {pkg}\ncore id\t\t: {core}\n")
        t = sysfs / f"cpu{cpu}/topology"
        _write(t / "thread_siblings_list", format_ranges(cores[core]) + "\n")
        _write(t / "core_siblings_list", format_ranges(packages[pkg]) + "\n")
        _write(t / "physical_package_id", f"{pkg}\n")
        _write(t / "core_id", f"{core}\n")
    _write(root / "proc/cpuinfo", "\n".join(cpuinfo) + "\n")
    for node, cpus in topo.numa_nodes.items():        # libnuma (numactl) reads these
        _write(root / f"sys/devices/system/node/node{node}/cpulist", format_ranges(cpus) + "\n")
    _write(root / "sys/devices/system/node/online", format_ranges(topo.numa_nodes) + "\n")
    _write(root / "sys/devices/system/node/possible", format_ranges(topo.numa_nodes) + "\n")
    _write(root / "proc/self/status", f"Cpus_allowed:\t{_hexmask(topo.cpus)}\n"
           f"Cpus_allowed_list:\t{format_ranges(topo.cpus)}\n"
           f"Mems_allowed:\t{_hexmask(topo.numa_nodes)}\n"
           f"Mems_allowed_list:\t{format_ranges(topo.numa_nodes)}\n")
    _write(sysfs / "online", format_ranges(topo.cpus) + "\n")
    _write(sysfs / "possible", format_ranges(topo.cpus) + "\n")
    return root


def environ(topo: Topology, root: Path, tools: dict[str, str], masks: Path) -> dict[str, str]:
    """The environment under which a process sees the node (add the case's own variables)."""
    masks.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMP_", "GOMP_", "KMP_", "LIKWID_"))}
    env.update(FAKE_NODE_ROOT=str(root), FAKE_NODE_CPUS=format_ranges(topo.cpus),
               FAKE_NODE_DIR=str(masks), LD_PRELOAD=tools["shim"],
               KMP_TOPOLOGY_METHOD="cpuinfo", KMP_CPUINFO_FILE=str(root / "proc/cpuinfo"),
               # up to 128 threads share this host's 2 CPUs: they sleep, not spin, at barriers
               OMP_WAIT_POLICY="passive", KMP_BLOCKTIME="0")
    return env


def parse_probe(text: str) -> dict[tuple[int, int], frozenset[int]]:
    """``T rank thread cpus`` lines -> {(rank, thread): CPUs}."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["T"]:
            cpus = frozenset(int(c) for c in parts[3].split(",")) if len(parts) > 3 else frozenset()
            out[(int(parts[1]), int(parts[2]))] = cpus
    return out
