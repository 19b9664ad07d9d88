"""The kernels: argument checking, their own result checks, and their ReFrame tests.

Nothing here asserts a timing: the machine may be a noisy 2-core VM.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from placement.judgement import reading

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "src" / "kernels"
REFRAME = Path(sys.executable).parent / "reframe"
FAST = {"STATLOOP_ITERS": "8", "STATLOOP_ROUNDS": "2", "OMP_NUM_THREADS": "2",
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}

SMALL_RUNS = {
    "memwrite": ["--mode", "single", "--size", "8M", "--blocks", "1M,2M"],
    "memwrite_threads": ["--mode", "threads", "--block", "4M"],
    "numacopy": ["--size", "4M"],
    "matmul": ["--n", "64", "--reps", "5"],
    "pthread_ops": ["--chain", "50", "--waiters", "10", "--batch", "100"],
    "datamap": ["--nx", "64", "--ny", "64"],
}

BAD_ARGS = [
    ("memwrite", ["--mode", "fast"], "--mode"),
    ("memwrite", ["--size", "12Q"], "--size"),
    ("memwrite", ["--size", "8M", "--blocks", "16M"], "--blocks"),
    ("numacopy", ["--size", "-5"], "--size"),
    ("numacopy", ["--from", "99"], "--from"),
    ("matmul", ["--n", "0"], "--n"),
    ("matmul", ["--reps", "many"], "--reps"),
    ("matmul", ["extra"], "unexpected argument"),
    ("pthread_ops", ["--ops", "fork"], "--ops"),
    ("pthread_ops", ["--load", "-1"], "--load"),
    ("pthread_ops", ["--affinity", "maybe"], "--affinity"),
    ("datamap", ["--init", "lazy"], "--init"),
    ("datamap", ["--nx", "1"], "--nx"),
]


@pytest.fixture(scope="module")
def built():
    subprocess.run(["make", "-s", "-C", str(KERNELS)], check=True)
    return KERNELS


def run_kernel(name, args, extra_env=None, mpi=False):
    exe = str(KERNELS / name.replace("_threads", ""))
    cmd = (["mpirun", "-np", "2", exe] if mpi else [exe]) + args
    env = dict(os.environ, **FAST, **(extra_env or {}))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def check_lines(out):
    return re.findall(r"^check kernel=\S+ .*ok=(\d)$", out, re.M)


@pytest.mark.parametrize("name,args,names", BAD_ARGS)
def test_bad_argument_exits_2_with_one_clear_line(built, name, args, names):
    out = run_kernel(name, args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and names in lines[0] and lines[0].startswith(name)


@pytest.mark.parametrize("name", sorted(SMALL_RUNS))
def test_kernel_checks_its_result(built, name):
    out = run_kernel(name, SMALL_RUNS[name])
    assert out.returncode == 0, out.stderr
    assert re.search(r"^result kernel=\S+ .* criterion=(chi2|spread|window|unreliable)$",
                     out.stdout, re.M)
    oks = check_lines(out.stdout)
    assert oks and set(oks) == {"1"}


@pytest.mark.parametrize("name", sorted(SMALL_RUNS))
def test_corrupted_result_is_caught(built, name):
    out = run_kernel(name, SMALL_RUNS[name], {"KERNEL_CORRUPT": "1"})
    assert out.returncode == 0, out.stderr
    assert "0" in check_lines(out.stdout)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI (mpirun) is not installed")
def test_pingpong_payload(built):
    assert (KERNELS / "pingpong").exists(), "pingpong not built although mpirun is present"
    good = run_kernel("pingpong", ["--sizes", "1K,1M"], mpi=True)
    assert good.returncode == 0, good.stderr
    assert check_lines(good.stdout) == ["1", "1"]
    bad = run_kernel("pingpong", ["--sizes", "1K"], {"KERNEL_CORRUPT": "1"}, mpi=True)
    assert check_lines(bad.stdout) == ["0"]
    one = run_kernel("pingpong", [])   # a single rank is bad input
    assert one.returncode == 2 and "2 MPI ranks" in one.stderr


def reframe(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([str(REFRAME), "-C", "config/settings.py", "-c",
                           "reframe_tests/kernels.py", "-R", "-r", "--tag", "quick",
                           "--exec-policy=serial", *args],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=900)


@pytest.mark.reframe
@pytest.mark.skipif(not REFRAME.exists(), reason="ReFrame is not in this environment")
def test_reframe_quick_kernels_pass(tmp_path):
    report = tmp_path / "run.json"
    out = reframe("--report-file", str(report))
    assert out.returncode == 0, out.stdout[-4000:]
    assert re.search(r"PASSED .*Ran (\d+)/\1 test case", out.stdout) or "0 failure(s)" in out.stdout
    cases = reading.run_report.load(report).cases
    # matmul keeps every timed repetition of its 3 launches in the run report (the
    # study's boxplots); its mean_time is the median of the launches' means
    mm = [c for c in cases if c.test == "MatmulCheck"]
    assert mm and all(len(c.samples["mean_time"]) == 3 * 50 for c in mm)
    assert all(len(c.launches["mean_time"]) == 3 for c in mm)
    assert all(min(c.launches["mean_time"]) <= c.perf["mean_time"].value
               <= max(c.launches["mean_time"]) for c in mm)
    # the write bandwidth is measured from one thread to every PU, per binding mode
    mw = [c for c in cases if c.test == "MemWriteThreadsCheck" and c.result == "pass"]
    pus = os.cpu_count()
    assert {(c.params["affinity"], c.params["num_threads"]) for c in mw} >= \
        {(a, n) for a in ("none", "scatter", "close-cores") for n in (1, pus)}
    # the node said whether it is virtual; several threads on a virtual one name their
    # states (no plain bound, never gross), one thread never does
    virtual = "hypervisor" in Path("/proc/cpuinfo").read_text().split()
    assert all(c.raw.get("node_virtual") is virtual for c in mw)
    assert all(bool(c.raw.get("no_bound")) is (virtual and c.params["num_threads"] >= 2)
               for c in mw)
    # cache-sized cases of a virtual node get no plain bound where they have no states
    # already: one thread's small write, small matmul and data map
    small = [c for c in cases if c.test in ("MatmulCheck", "DataMapCheck",
                                            "MemWriteThreadsCheck") and c.result == "pass"]
    assert small and all(c.raw.get("node_virtual") is virtual for c in small)
    assert all(bool(c.raw.get("no_plain_bound")) is (virtual and not c.raw.get("no_bound"))
               for c in small)
    # both ranks beside ReFrame with no CPU to spare: contended, so no ReFrame bound
    pp = [c for c in cases if c.test == "PingPongCheck" and c.result == "pass"]
    assert pp and all(c.raw.get("contended") is (pus <= 2) for c in pp)


@pytest.mark.reframe
@pytest.mark.skipif(not REFRAME.exists(), reason="ReFrame is not in this environment")
def test_reframe_sanity_fails_on_wrong_results():
    names = ["MatmulCheck", "NumaCopyCheck", "PingPongCheck", "MemWriteSingleCheck"]
    out = reframe("-p", "gnu", "-n", "|".join(names), "-S", "corrupt=true")
    assert out.returncode != 0
    failures = re.findall(r"FAILURE INFO for (\w+).*?Failing phase: (\w+)", out.stdout, re.S)
    assert {n for n, _p in failures} == set(names)
    assert all(phase == "sanity" for _n, phase in failures)
    assert "wrong result" in out.stdout
