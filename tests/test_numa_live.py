"""The suite on a two-socket NUMA node with SMT, live: ReFrame here, jobs on the QEMU guest.

What is proved here and nowhere else: on a node where placement matters (2
packages x 2 cores x 2 hardware threads, 2 NUMA nodes; ``numa_node.py``),
reached through ReFrame's ``ssh`` scheduler as a compute node is at a site,
the maps are computed for that node (its topology captured there, not this
login node's), every binder binds as computed, memory policies and first touch
put the pages where they should, the NUMA copy matrix is 2x2 with every page
verified, and the NPB quick set skips with its reason when NPB is absent.
The guest's timings mean nothing (TCG emulation): only placement is judged.

One guest for the session (``numa_node`` in conftest.py) and one ReFrame run
for all the checks, as a boot and a ReFrame start each cost seconds to minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from placement.checks import numa_pages as npg
from placement.checks import page_sharing
from placement.judgement import repeats

import live_reframe

pytestmark = [pytest.mark.numa, pytest.mark.reframe]

SCATTER_8 = [0, 4, 2, 6, 1, 5, 3, 7]       # round-robin over packages, then cores, then threads
COMPACT_8 = list(range(8))                 # siblings first: QEMU numbers them adjacently
CHECKS = ('reframe_tests/binding_probe.py', 'reframe_tests/kernels.py', 'reframe_tests/npb.py',
          'reframe_tests/numa_placement.py')
# NPB at class S, one thread (scatter-pinned and not): at eight threads, OpenMP barriers on
# eight emulated CPUs of a loaded 2-core host had CG.S's five runs unfinished after 2 minutes
SELECT = ['-n', r'BindingRenderingCheck.*affinity=(compact|scatter)|MemoryPolicyCheck'
          r'|NumaCopyCheck.*scale=small|DataMapCheck.*scale=small'
          r'|NpbQuickCheck.*benchmark=CG.*npb_class=S.*threads=1\b'
          r'|DataMapPageSampleCheck'
          r'|PagePlacementCheck']


def _reframe(numa_node, reframe_bin, root, *args: str, timeout: int = 900):
    return live_reframe.reframe(
        reframe_bin, root, CHECKS, '--system', 'testnuma:node', *args, timeout=timeout,
        env={**numa_node.env, 'PLACEMENT_RESULTS': str(numa_node.share / 'results')})


@pytest.fixture(scope='module')
def run(numa_node, reframe_bin, root):
    """One ReFrame run of the selected checks on the node: (process, cases, share)."""
    share = numa_node.share
    report = share / 'report.json'
    # retries: a copy to or from the node (scp) can be cut on this loaded machine;
    # a check that fails on its own fails every time and stays a failure
    proc = _reframe(numa_node, reframe_bin, root, *SELECT, '-p', 'gnu', '--max-retries=2',
                    '--prefix', str(share / 'rfm'), '--report-file', str(report), '-r')
    return proc, list(live_reframe.last_attempts(report, proc).values()), share


def _named(cases, prefix):
    return [tc for tc in cases if tc['display_name'].startswith(prefix)]


def _job_out(tc) -> str:
    return Path(tc['outputdir'], 'rfm_job.out').read_text()


def _probe_cpus(text: str) -> list[int]:
    found = re.findall(r'^bindprobe thread=(\d+) cpu=(\d+)', text, re.M)
    return [cpu for _t, cpu in sorted((int(t), int(c)) for t, c in found)]


def test_every_case_passed_or_skipped_with_reason(run):
    proc, cases, _ = run
    bad = [f"{tc['display_name']}: {tc['result']}: {tc['fail_reason']}" for tc in cases
           if tc['result'] not in ('pass', 'skip')]
    assert not bad, '\n'.join(bad)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_topology_is_the_compute_nodes(run):
    """Maps were computed from the guest's topology, captured there, not this host's."""
    _, cases, share = run
    xml = (share / 'results' / 'topologies' / 'testnuma-node.xml').read_text()
    assert xml.count('<object type="PU"') == 8 and xml.count('<object type="Package"') == 2
    assert xml.count('<object type="NUMANode"') == 2
    assert os.cpu_count() != 8, 'this host must differ from the node for the test to mean much'
    probe = next(tc for tc in _named(cases, 'MemoryPolicyCheck') if tc['result'] == 'pass')
    assert re.search(r'^bindprobe threads=8$', _job_out(probe), re.M)
    # the run report, and the report made from it, name the compute node's topology
    assert probe['node_topology'].startswith('2 package(s), 2 NUMA node(s), 4 cores, 8 PUs, '
                                             '2 thread(s) per core'), probe['node_topology']
    assert 'testnuma-node.xml' in probe['node_topology']


def test_report_provenance_names_the_compute_node(run, root):
    _, _, share = run
    out = share / 'reports'
    proc = subprocess.run([str(root / '.venv' / 'bin' / 'placement'), 'report', '--run',
                           str(share / 'report.json'), '--output', str(out)],
                          capture_output=True, text=True, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (readme,) = out.glob('*/README.md')
    text = readme.read_text()
    assert re.search(r'topology \(compute node\).*8 PUs', text), text[-3000:]
    # (Markdown: the report escapes '_' in what it quotes)
    assert re.search(r'kernel\.numa\\?_balancing \(compute node\).*0', text), text[-3000:]


def test_listing_sweeps_the_nodes_thread_counts(numa_node, reframe_bin, root):
    proc = _reframe(numa_node, reframe_bin, root, '-n', 'MemWriteThreadsCheck', '-l',
                    timeout=300)
    assert 'testnuma' in proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    counts = set(re.findall(r'%threads=(\w+)', proc.stdout))
    assert counts == {'1', '2', '4', 'full'}, proc.stdout[-2000:]


@pytest.mark.parametrize('binder', ['gomp', 'omp', 'numactl', 'taskset', 'hwloc', 'likwid'])
def test_compact_and_scatter_bind_as_computed(run, binder):
    _, cases, _ = run
    seen = {}
    for tc in _named(cases, f'BindingRenderingCheck %binder={binder} '):
        assert tc['result'] == 'pass', tc['fail_reason']
        affinity = re.search(r'%affinity=(\S+)', tc['display_name']).group(1)
        seen[affinity] = _probe_cpus(_job_out(tc))
    per_thread = binder not in ('numactl', 'taskset', 'hwloc')
    if per_thread:
        assert seen == {'compact': COMPACT_8, 'scatter': SCATTER_8}
    else:   # the whole process bound to the set: every thread on one of its CPUs
        assert set(seen) == {'compact', 'scatter'}
        assert all(sorted(cpus) == COMPACT_8 or set(cpus) <= set(COMPACT_8)
                   for cpus in seen.values())


def test_memory_policies_in_force(run):
    _, cases, _ = run
    mp = _named(cases, 'MemoryPolicyCheck')
    assert len(mp) == 10 and all(tc['result'] == 'pass' for tc in mp)
    out = {tc['display_name']: _job_out(tc) for tc in mp}
    inter = next(t for n, t in out.items() if '%policy=interleave %affinity=scatter' in n)
    assert re.search(r'^bindprobe mempolicy=interleave nodes=0-1$', inter, re.M), inter


def _nodes(line: str) -> dict[int, int]:
    return {int(n): int(p) for n, p in re.findall(r'\bN(\d+)=(\d+)', line)}


def _maps(text: str, tag: str) -> dict[int, int]:
    """Pages per node over both arrays, from ``tag`` lines (numa_maps_init or numa_maps)."""
    total: dict[int, int] = {}
    lines = re.findall(rf'^{tag} kernel=datamap array=\w .*$', text, re.M)
    assert len(lines) == 2, text[-2000:]
    for line in lines:
        for n, p in _nodes(line).items():
            total[n] = total.get(n, 0) + p
    return total


def _launches(tc: dict) -> list[str]:
    """Each launch's output of a kernel case's job (the job launches the kernel several times)."""
    runs = repeats.loop_script.split_launches(_job_out(tc))
    assert runs and all(rc == 0 for rc, _ in runs), runs
    return [out for _, out in runs]


def test_data_mapping_first_touch_and_interleave(run):
    """Serial init on node 0; parallel init split by the threads' nodes; interleave halves.

    Every launch of each job is judged, not only the first.
    """
    _, cases, _ = run
    dm = {re.search(r'%init=(\w+) %policy=(\S+)', tc['display_name']).groups(): _launches(tc)
          for tc in _named(cases, 'DataMapCheck')}
    assert len(dm) == 4
    for launches in dm.values():
        for text in launches:
            assert re.search(r'^sysctl kernel=datamap numa_balancing=0$', text, re.M)
    for text in dm['serial', 'first-touch']:
        serial = _maps(text, 'numa_maps_init')
        assert serial.get(0, 0) >= 0.95 * sum(serial.values()), serial
    for text in dm['parallel', 'first-touch']:
        parallel = _maps(text, 'numa_maps_init')
        threads = re.findall(r'^thread kernel=datamap .*node=(\d+)', text, re.M)
        share1 = threads.count('1') / len(threads)
        total = sum(parallel.values())
        assert abs(parallel.get(1, 0) / total - share1) <= 0.10, (parallel, threads)
    for init in ('serial', 'parallel'):
        for text in dm[init, 'interleave']:
            inter = _maps(text, 'numa_maps_init')
            half = sum(inter.values()) / 2
            assert all(abs(inter.get(n, 0) - half) <= 0.10 * half for n in (0, 1)), inter


def _perf(tc, name: str) -> float:
    return next(v[0] for k, v in tc['perfvalues'].items() if k.endswith(':' + name))


def test_page_sampler_beside_first_touch_and_interleave(run):
    """Without Pin: the kernel's pages sampled on the node, the study's rule, and beside it
    the measured first-touch vs interleave of the same kernel (TCG: timings not judged)."""
    _, cases, _ = run
    sampled = {re.search(r'%init=(\w+)', tc['display_name']).group(1): tc
               for tc in _named(cases, 'DataMapPageSampleCheck')}
    assert set(sampled) == {'serial', 'parallel'}
    for tc in sampled.values():
        assert tc['result'] == 'pass', tc['fail_reason']
        pages = npg.read_page_csv(Path(tc['outputdir'], 'datamap.full.page.csv'))
        assert len(pages[0].accesses) == 8                  # T0..T7, compact over 2 nodes
        # a stencil: thread t shares pages with t-1 and t+1 only (thread 0, main, also sums
        # every page); threads 1 and 3, 4 and 6 never meet, each thread's own pages are seen
        s = page_sharing.sharing_matrix(pages)
        assert s[4][6] == s[1][3] == 0
        assert all(s[t][t] >= 80 for t in range(8)), s   # of 160 each
        advice = page_sharing.recommend_mapping(pages, 2)
        assert _perf(tc, 'exclusivity') == pytest.approx(advice.exclusivity)
        assert advice.mapping == 'first-touch', advice.line()   # the study's LBM finding
    mlups = {re.search(r'%init=(\w+) %policy=(\S+)', tc['display_name']).groups(): _perf(tc, 'mlups')
             for tc in _named(cases, 'DataMapCheck')}
    assert set(mlups) == {(i, p) for i in ('serial', 'parallel') for p in ('first-touch', 'interleave')}


def test_pages_where_policies_and_first_touch_put_them(run):
    """PagePlacementCheck judged every policy from numa_maps; the run report keeps the pages."""
    _, cases, _ = run
    pp = _named(cases, 'PagePlacementCheck')
    assert len(pp) == 8 and all(tc['result'] == 'pass' for tc in pp), \
        [(tc['display_name'], tc['fail_reason']) for tc in pp]
    for tc in pp:
        assert tc['numa_balancing'] == '0 (off)'
        after = dict(kv.split('=') for kv in tc['pages_after_init'].split())
        assert after and tc['pages_at_end'], tc['display_name']
        if 'bind:1' in tc['display_name']:
            assert set(after) == {'N1'}, after


def test_numa_copy_matrix_2x2_pages_verified(run):
    _, cases, _ = run
    (tc,) = _named(cases, 'NumaCopyCheck')
    assert tc['result'] == 'pass', tc['fail_reason']
    for text in _launches(tc):
        checks = re.findall(r'^check kernel=numacopy run_node=(\d) dst_node=(\d) .*'
                            r'src_pages_node=(\d) dst_pages_node=(\d) ok=1$', text, re.M)
        assert sorted((int(r), int(d)) for r, d, _s, _p in checks) == \
            [(0, 0), (0, 1), (1, 0), (1, 1)]
        assert all(s == r and p == d for r, d, s, p in checks)
        assert re.search(r'^matrix kernel=numacopy nodes_from=2 nodes_to=2 ok=1$', text, re.M)


def test_npb_quick_set_skips_with_reason_when_absent(run):
    """NPB runs there when present; else each case is a SKIP naming how to get NPB."""
    proc, cases, _ = run
    npb = _named(cases, 'NpbQuickCheck')
    assert npb, 'no NPB case selected'
    for tc in npb:
        if tc['result'] == 'skip':   # the reason is on ReFrame's SKIP line, not in the report
            line = next(ln for ln in proc.stdout.splitlines()
                        if 'SKIP' in ln and tc['display_name'] in ln)
            assert re.search(r'NPB binary \S+ not found .*install NPB', line), line
        else:
            assert tc['result'] == 'pass', tc['fail_reason']


def test_the_partitions_budget_scale_reaches_the_npb_jobs(run, reframe_bin, root):
    """The node's partition gives NPB's budget scale (``extras['npb_budget_scale']``, read as
    ReFrame reads the configuration): its jobs' watchdogs are that many times the reference
    budget with no ``-S`` on the command line, and the runs finished inside them."""
    from placement import npb

    _, cases, _ = run
    ran = [tc for tc in _named(cases, 'NpbQuickCheck') if tc['result'] != 'skip']
    if not ran:
        pytest.skip('NPB is absent here: its cases were skipped (see the test above)')
    scale = live_reframe.partition_extras(reframe_bin, root, 'testnuma:node')['npb_budget_scale']
    budget = npb.budget.run_budget('CG', 'S', 1, len(SCATTER_8), scale)
    for tc in ran:
        script = Path(tc['outputdir'], 'rfm_job.sh').read_text()
        assert f'npb_limit={budget:.0f}' in script, tc['display_name']
        runs = npb.output.parse_runs(Path(tc['outputdir'], 'rfm_job.out').read_text())
        assert runs and all(r.rc == 0 and r.limit_s == round(budget) for r in runs), runs


def test_a_boot_that_does_not_come_up_is_tried_again_then_fails_with_each_log(tmp_path):
    """A stalled emulated boot is stopped and booted afresh; two that fail raise, keep both
    console logs and leave no QEMU behind (the boot is given 1 s, which no boot meets)."""
    from numa_node import NumaNode, NumaNodeError, missing_tools

    why = missing_tools()
    if why:
        pytest.skip(f'no emulated NUMA node: {why} (scripts/ensure-system-tools.sh test)')
    node = NumaNode(tmp_path)
    with pytest.raises(NumaNodeError) as err:
        node.start(timeout=1, boots=2)
    text = str(err.value)
    assert 'boot 1 of 2: the node accepting ssh did not happen within 1 s' in text
    assert 'boot 2 of 2: the node accepting ssh did not happen within 1 s' in text
    assert (tmp_path / 'console-boot1.log').is_file()
    assert (tmp_path / 'console-boot2.log').is_file()
    assert not node.running()
