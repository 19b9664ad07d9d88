"""Hybrid MPI+OpenMP placements checked against expected answers on the stored topologies.

As LLNL mpibind's test suite does: for each reference node, the ranks' CPU sets
and the threads' places are written out by hand from the node's numbering, and
the engine must give exactly those; then every launcher rendering, the way back
from the launchers' own reports, the lint and the diagnosis of the classic
failures.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from placement.engine import hybrid, hybrid_launch, lint, topology
from placement.checks import hybrid_probe
from placement.util.errors import PlacementError
from placement.checks.probe import ProbeReport
from placement.engine.synthetic import generate_xml


def topo(name: str):
    return topology.load(f'topologies/{name}.xml')


def fs(*cpus: int) -> frozenset[int]:
    return frozenset(cpus)


# --- expected answers per stored node --------------------------------------------------------
def test_xeon_e5620_one_rank_per_package_one_thread_per_core():
    hp = hybrid.compute(topo('xeon-e5620'), 2, 4, 'package')
    assert hp.rank_sets == (fs(0, 1, 2, 3), fs(4, 5, 6, 7))
    assert [hp.thread_cpus(r) for r in range(2)] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_cometlake_siblings_numbered_n_and_n_plus_8_stay_in_their_rank():
    # one package: two ranks split its 8 cores; a core's PUs are n and n+8
    hp = hybrid.compute(topo('cometlake'), 2, 4, 'package')
    assert hp.ranks_per_domain == 2 and hp.cores_per_rank == 4
    assert hp.rank_sets == (fs(0, 1, 2, 3, 8, 9, 10, 11), fs(4, 5, 6, 7, 12, 13, 14, 15))
    assert hp.places[0] == (fs(0, 8), fs(1, 9), fs(2, 10), fs(3, 11))
    # one thread per PU: a core's two hardware threads are consecutive places
    hp = hybrid.compute(topo('cometlake'), 2, 8, 'package', unit='threads')
    assert hp.thread_cpus(1) == [4, 12, 5, 13, 6, 14, 7, 15]


def test_xeon_e5_2420_two_ranks_per_package():
    hp = hybrid.compute(topo('xeon-e5-2420'), 4, 3, 'package')
    assert hp.rank_sets == (fs(0, 12, 1, 13, 2, 14), fs(3, 15, 4, 16, 5, 17),
                            fs(6, 18, 7, 19, 8, 20), fs(9, 21, 10, 22, 11, 23))
    assert hp.domain_of_rank == (0, 0, 1, 1)


def test_bulldozer_one_rank_per_numa_node_is_one_per_die():
    hp = hybrid.compute(topo('bulldozer'), 8, 8, 'numa')
    assert hp.rank_sets == tuple(frozenset(range(8 * d, 8 * d + 8)) for d in range(8))
    assert lint.hybrid_warnings(topo('bulldozer'), hp) == []


def test_bulldozer_rank_per_package_spans_two_numa_nodes_and_the_lint_says_so():
    t = topo('bulldozer')
    hp = hybrid.compute(t, 4, 16, 'package')
    assert hp.rank_sets[1] == frozenset(range(16, 32))
    warns = lint.hybrid_warnings(t, hp)
    assert any('rank 0 spans NUMA nodes 0, 1' in w and '--domain numa' in w for w in warns)


def test_cores_domain_and_node_fill():
    t = topo('xeon-e5620')
    hp = hybrid.compute(t, 3, 2, 'cores:2')
    assert hp.rank_sets == (fs(0, 1), fs(2, 3), fs(4, 5))
    assert any('rank 1 spans packages 0, 1' in w for w in lint.hybrid_warnings(t, hp)) is False
    assert hybrid.fill(t, 'package') == (2, 4)
    assert hybrid.fill(t, 'package', factor=2) == (2, 8)


def test_twice_the_threads_share_places_evenly():
    hp = hybrid.compute(topo('xeon-e5620'), 2, 8, 'package')
    assert hp.thread_cpus(0) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert any('up to 2 threads share one core place' in w
               for w in lint.hybrid_warnings(topo('xeon-e5620'), hp))


@pytest.mark.parametrize('args, words', [
    ((3, 2, 'package'), 'do not fill the node\'s 2 package domain(s) evenly'),
    ((10, 1, 'package'), '5 ranks per package but a package has 4 core(s)'),
    ((2, 1, 'socket'), "unknown domain 'socket'"),
    ((2, 1, 'cores:x'), 'expected cores:N'),
    ((5, 1, 'cores:2'), '5 ranks x 2 cores need 10 cores; the node has 8'),
    ((0, 1, 'package'), 'rank count must be a positive whole number'),
])
def test_bad_layouts_are_refused_with_what_is_accepted(args, words):
    with pytest.raises(PlacementError, match=None) as err:
        hybrid.compute(topo('xeon-e5620'), *args)
    assert words in str(err.value)


# --- renderings -------------------------------------------------------------------------------
def test_launcher_renderings():
    t = topo('xeon-e5-2420')
    hp = hybrid.compute(t, 4, 3, 'package')
    assert hybrid_launch.mpirun_options(hp, 4) == [
        '-np', '4', '--map-by', 'ppr:2:socket:pe=3', '--bind-to', 'core', '--report-bindings']
    assert hybrid_launch.mpirun_options(hp, 5)[3] == 'ppr:2:package:pe=3'
    assert hybrid_launch.srun_options(hp, t) == [
        '-n', '4', '--cpus-per-task=6', '--ntasks-per-socket=2', '--distribution=block:block',
        '--cpu-bind=cores']
    masks = hybrid_launch.srun_options(hp, t, explicit=True)[-1]
    assert masks == '--cpu-bind=mask_cpu:' + ','.join(
        hex(sum(1 << c for c in s)) for s in hp.rank_sets)
    assert hybrid_launch.omp_env(hp) == {'OMP_NUM_THREADS': '3', 'OMP_PLACES': 'cores',
                                         'OMP_PROC_BIND': 'close'}


def test_per_rank_script_sets_each_ranks_places(tmp_path):
    hp = hybrid.compute(topo('xeon-e5620'), 2, 2, 'package')
    script = hybrid_launch.per_rank_script(hp)
    assert 'GOMP_CPU_AFFINITY' not in script       # libomp would ignore OMP_PLACES (#182)
    for local, want in (('0', '{0},{1}'), ('1', '{4},{5}')):
        out = subprocess.run(['sh', '-c', script + '\necho "$OMP_PLACES"'],
                             env={'OMPI_COMM_WORLD_LOCAL_RANK': local}, capture_output=True,
                             text=True, check=True).stdout.strip()
        assert out == want


# --- the launchers' reports, read back ---------------------------------------------------------
def test_open_mpi_report_bindings_read_back_on_an_smt_node(tmp_path):
    # Open MPI 4.1's --report-bindings on QEMU's 2 x 2 x 2 node (siblings numbered adjacently)
    desc = tmp_path / 'qemu.synthetic'
    desc.write_text('pack:2 [numa] core:2 pu:2\n')
    t = topology.from_xml(generate_xml(desc.read_text()))
    text = ('[placement-numa:00412] MCW rank 0 bound to socket 0[core 0[hwt 0-1]], '
            'socket 0[core 1[hwt 0-1]]: [BB/BB][../..]\n'
            '[placement-numa:00412] MCW rank 1 bound to socket 1[core 2[hwt 0-1]]: [../..][BB/..]\n'
            '[placement-numa:00412] MCW rank 2 is not bound (or bound to all available '
            'processors)\n')
    got = hybrid_launch.ompi_bindings(text, t)
    assert got == {0: fs(0, 1, 2, 3), 1: fs(4, 5), 2: frozenset(range(8))}


def test_slurm_bind_list_read_back():
    assert hybrid_launch.slurm_bind_set('mask_cpu,', '0xF0,0x0F', 0) == fs(4, 5, 6, 7)
    assert hybrid_launch.slurm_bind_set('map_cpu', '3,2', 1) == fs(2)


# --- the judgement --------------------------------------------------------------------------------
def report(allowed: dict[int, frozenset[int]]) -> ProbeReport:
    return ProbeReport(len(allowed), {t: min(s) for t, s in allowed.items()}, allowed, None,
                       frozenset())


def probe_text(hp, sets) -> str:
    lines = []
    for r, threads in enumerate(sets):
        lines.append(f'rank={r} bindprobe threads={len(threads)}')
        lines += [f'rank={r} bindprobe thread={t} cpu={min(s)} allowed='
                  + ','.join(map(str, sorted(s))) for t, s in enumerate(threads)]
    return '\n'.join(lines)


def test_a_run_as_planned_is_verified_and_read_from_labelled_lines():
    t = topo('xeon-e5620')
    hp = hybrid.compute(t, 2, 4, 'package')
    text = probe_text(hp, hp.places)
    labelled = '\n'.join(f'{ln.split()[0][5:]}: {ln}' for ln in text.splitlines())
    for out in (text, labelled):
        seen = hybrid_probe.per_rank(out)
        assert hybrid_probe.problems(hp, seen, t, {0: hp.rank_sets[0], 1: hp.rank_sets[1]}) == []


def test_every_rank_on_the_same_first_cores_is_named():
    t = topo('xeon-e5620')
    hp = hybrid.compute(t, 2, 4, 'package')
    same = [hp.places[0], hp.places[0]]           # OMP_PLACES=cores, no per-rank mask
    probs = hybrid_probe.problems(hp, hybrid_probe.per_rank(probe_text(hp, same)), t)
    assert any('rank 1 thread 0 allowed on 0 running on 0, expected 4' in p for p in probs)
    assert any('ranks 0 and 1 share CPU(s) 0-3' in p for p in probs)
    assert any('every rank runs on the same CPUs 0-3' in p for p in probs)


def test_every_rank_inside_the_first_package_is_named():
    t = topo('xeon-e5620')
    hp = hybrid.compute(t, 2, 2, 'package')
    first = [(fs(0), fs(1)), (fs(2), fs(3))]      # ranks apart, but both in package 0
    probs = hybrid_probe.problems(hp, hybrid_probe.per_rank(probe_text(hp, first)), t)
    assert any('every rank is inside package 0' in p and '11726' in p for p in probs)
    assert not any('same CPUs' in p for p in probs)


def test_a_launcher_report_that_disagrees_with_the_rank_is_named():
    t = topo('xeon-e5620')
    hp = hybrid.compute(t, 2, 4, 'package')
    unbound = [(frozenset(range(8)),) * 4] * 2
    said = {0: hp.rank_sets[0], 1: hp.rank_sets[1]}
    probs = hybrid_probe.problems(hp, hybrid_probe.per_rank(probe_text(hp, unbound)), t, said,
                                  'Open MPI')
    assert any('Open MPI reports rank 0 bound to 0-3, the rank runs on 0-7' in p for p in probs)
    assert any('12470' in p for p in probs)


def test_a_missing_rank_is_a_problem_not_a_pass():
    t = topo('xeon-e5620')
    hp = hybrid.compute(t, 2, 4, 'package')
    seen = hybrid_probe.per_rank(probe_text(hp, hp.places[:1]))
    assert hybrid_probe.problems(hp, seen, t)[0].startswith('rank(s) 1 printed no probe report')


# --- the command line --------------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, '-m', 'placement', *args], capture_output=True,
                          text=True)


def test_cli_maps_ranks_prints_each_rank_and_the_launcher_lines():
    p = run_cli('maps', '--topology', 'topologies/xeon-e5620.xml', '--ranks', '2')
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        'rank 0 (package 0): cpus 0-3; threads 0:{0} 1:{1} 2:{2} 3:{3}',
        'rank 1 (package 1): cpus 4-7; threads 0:{4} 1:{5} 2:{6} 3:{7}']
    p = run_cli('maps', '--topology', 'topologies/xeon-e5620.xml', '--ranks', '2',
                '--format', 'srun')
    assert '--ntasks-per-socket=1' in p.stdout and 'OMP_PLACES=cores' in p.stdout


@pytest.mark.parametrize('args, words', [
    (('--ranks', '3'), "3 ranks do not fill the node's 2 package domain(s) evenly"),
    (('--ranks', '2', '--format', 'gomp'), "format 'gomp' renders one process's threads"),
    (('--ranks', '2', '--domain', 'rack'), "unknown domain 'rack'"),
    (('--format', 'mpirun', '--threads', '2'), "format 'mpirun' is for --ranks"),
])
def test_cli_bad_hybrid_input_is_one_line_exit_2(args, words):
    p = run_cli('maps', '--topology', 'topologies/xeon-e5620.xml', *args)
    assert p.returncode == 2
    assert words in p.stderr and 'Traceback' not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
