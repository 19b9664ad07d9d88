"""A multi-thread write on a virtual node names its states; on bare metal it keeps its bound."""

from __future__ import annotations

import subprocess
from pathlib import Path

from placement.checks import virtual_node
from placement.judgement import rules


def test_the_script_answers_as_the_nodes_cpuinfo_says():
    """The job's line, from this machine's own /proc/cpuinfo."""
    out = subprocess.run(["sh", "-c", virtual_node.SCRIPT], capture_output=True, text=True,
                         check=True).stdout
    flags = Path("/proc/cpuinfo").read_text().split()
    assert virtual_node.parse(out) is ("hypervisor" in flags)


def test_parse_reads_the_line_among_others_and_none_without_it():
    assert virtual_node.parse("nodeshape host=a cpus=0:0:0:0\nvirtualnode virtual=1\n") is True
    assert virtual_node.parse("virtualnode virtual=0") is False
    assert virtual_node.parse("kernel=memwrite gbps=3\n") is None
    assert virtual_node.parse("virtualnode virtual=yes") is None


def test_states_from_the_rules_thread_count_on_a_virtual_node_only():
    threads = rules.VIRTUAL_THREAD_STATES
    on = virtual_node.thread_states(["gbps"], threads, True, threads)
    assert set(on) == {"gbps"} and on["gbps"].startswith(f"{threads} threads on a virtual")
    assert virtual_node.thread_states(["gbps"], threads - 1, True, threads) == {}
    assert virtual_node.thread_states(["gbps"], 16, False, threads) == {}
    assert virtual_node.thread_states(["gbps"], 16, None, threads) == {}


def test_a_cache_sized_case_of_a_virtual_node_gets_no_plain_bound():
    """Every variable of a small case on a virtual node, but those that have states already
    (no bound at all); none on bare metal, an unknown node or a large case."""
    got = virtual_node.cache_states(["gflops", "mean_time"], True, True, {})
    assert set(got) == {"gflops", "mean_time"}
    assert got["gflops"].startswith("a cache-sized buffer on a virtual machine")
    assert virtual_node.cache_states(["gbps"], True, True, {"gbps": "states"}) == {}
    assert virtual_node.cache_states(["gflops"], True, False, {}) == {}
    assert virtual_node.cache_states(["gflops"], True, None, {}) == {}
    assert virtual_node.cache_states(["gflops"], False, True, {}) == {}


def test_the_benchmark_applies_the_rule_to_sessions_recorded_before_it(tmp_path):
    """A stored multi-thread case without ``node_virtual`` (recorded before the check asked
    its node) gets the states the check writes now; one that says bare metal keeps none."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import regression_detection as rd
    from placement.judgement import reading

    def case(**extra):
        tc = {"name": "MemWriteThreadsCheck %affinity=none %threads=full %scale=small",
              "display_name": "MemWriteThreadsCheck %affinity=none %threads=full %scale=small",
              "unique_name": "MemWriteThreadsCheck_02", "hashcode": "34d1b26e",
              "system": "generic", "partition": "default", "environ": "gnu",
              "result": "pass", "fixture": False, "num_threads": 2, "affinity": "none",
              "scale": "small", "kernel": "memwrite",
              "reference_index": ["$environ", "scale", "affinity", "num_threads"],
              "perfvalues": {"generic:default:gbps": [60.0, 0, None, None, "GB/s", "pass"]},
              "perf_launches": {"gbps": [61.0, 60.0, 59.0]}, **extra}
        p = tmp_path / "run.json"
        p.write_text(__import__("json").dumps(
            {"session_info": {"time_start": "20261126T000000+0000"},
             "runs": [{"testcases": [tc]}]}))
        return reading.run_report.load(p).cases[0]

    assert set(rd.check_states(case())) == {"gbps"}
    assert rd.check_states(case(node_virtual=False)) == {}
    # plain ReFrame's bound: the states have none anyway; a case that
    # said its own no_plain_bound is read as it said
    assert rd.plain_states(case(), rd.check_states(case())) == {}
    one = case(num_threads=1)
    assert set(rd.plain_states(one, {})) == {"gbps"}
    assert rd.plain_states(case(num_threads=1, no_plain_bound={}), {}) == {}
    assert rd.plain_states(case(num_threads=1, scale="large"), {}) == {}
