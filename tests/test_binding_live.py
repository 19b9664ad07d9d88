"""The binding probe on this machine, under each rendering: the placement really happens."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from placement.engine import launch, topology
from placement.checks import probe

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bindprobe(tmp_path_factory) -> str:
    exe = tmp_path_factory.mktemp("probe") / "bindprobe"
    subprocess.run(["gcc", "-O2", "-fopenmp", "-o", str(exe),
                    str(ROOT / "src" / "probe" / "bindprobe.c"), "-lnuma"], check=True)
    return str(exe)


@pytest.fixture(scope="module")
def live():
    return topology.load(None)


def run_placed(exe, ls: launch.LaunchSettings) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "KMP_"))}
    env.update(ls.env)
    proc = subprocess.run(ls.command([exe, "20"]), capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


TOOLS = {"numactl": "numactl", "taskset": "taskset", "hwloc": "hwloc-bind",
         "likwid": "likwid-pin"}


@pytest.mark.parametrize("binder", ["gomp", "omp", "numactl", "taskset", "hwloc", "likwid"])
@pytest.mark.parametrize("strategy", ["compact", "scatter", "close-threads"])
def test_binding_happens(bindprobe, live, binder, strategy):
    tool = TOOLS.get(binder)
    if tool and not shutil.which(tool):
        pytest.skip(f"{tool} is not installed")
    threads = len(live.pus)
    ls = launch.settings(live, threads, strategy, binder=binder)
    report = probe.parse(run_placed(bindprobe, ls))
    assert probe.problems(report, ls.placement, ls.policy, per_thread=ls.per_thread) == []


def test_reversed_explicit_map_is_seen(bindprobe, live):
    """A map that differs from the OS default order is really applied thread by thread."""
    if len(live.pus) < 2:
        pytest.skip("needs two PUs")
    cpus = list(reversed(live.cpus))
    ls = launch.settings(live, len(cpus), "explicit", explicit=cpus)
    report = probe.parse(run_placed(bindprobe, ls))
    assert [report.cpu[i] for i in range(len(cpus))] == cpus


@pytest.mark.parametrize("policy", ["first-touch", "local", "interleave", "preferred", "bind"])
def test_memory_policy_is_in_force(bindprobe, live, policy):
    ls = launch.settings(live, 1, "compact", policy)
    report = probe.parse(run_placed(bindprobe, ls))
    assert probe.problems(report, ls.placement, ls.policy) == []


def test_wrong_binding_is_caught(bindprobe, live):
    """The check is not a rubber stamp: a run placed differently from the request fails."""
    asked = launch.settings(live, 1, "explicit", explicit=[live.cpus[-1]])
    ran = launch.settings(live, 1, "explicit", explicit=[live.cpus[0]])
    if asked.placement.cpus == ran.placement.cpus:
        pytest.skip("needs two PUs")
    report = probe.parse(run_placed(bindprobe, ran))
    assert probe.problems(report, asked.placement, asked.policy)
    report = probe.parse(run_placed(bindprobe, launch.settings(live, 1, "compact", "interleave")))
    assert probe.problems(report, asked.placement, ran.policy)   # policy default, saw interleave


def test_probe_rejects_bad_argument(bindprobe):
    proc = subprocess.run([bindprobe, "soon"], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr
