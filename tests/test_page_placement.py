"""Judging page placement from the datamap kernel's numa_maps lines (placement.checks.page_placement)."""

from placement.checks import page_placement as pp

THREADS = ''.join(f'thread kernel=datamap thread={t} cpu={t} node={t // 4} row_lo={64 * t} '
                  f'row_hi={64 * t + 64} rows=512\n' for t in range(8))


def out(n0: int, n1: int, balancing: int = 0) -> str:
    maps = ''.join(f'numa_maps_init kernel=datamap array={a} 7f00 default anon={n0 + n1} '
                   f'N0={n0} N1={n1} kernelpagesize_kB=4\n' for a in 'fg')
    return f'sysctl kernel=datamap numa_balancing={balancing}\n' + maps + THREADS


def test_interleave_even_passes_and_lopsided_fails():
    assert pp.problems(out(320, 320), 'interleave', [0, 1], 'serial') == []
    (msg,) = pp.problems(out(400, 240), 'interleave', [0, 1], 'serial')
    assert 'uneven' in msg and 'node 0 62%' in msg


def test_bind_and_preferred_need_the_named_node():
    assert pp.problems(out(0, 640), 'bind', [1], 'serial') == []
    assert pp.problems(out(10, 630), 'preferred', [1], 'parallel') == []
    (msg,) = pp.problems(out(640, 0), 'bind', [1], 'serial')
    assert 'bind to node 1' in msg


def test_first_touch_serial_and_parallel():
    assert pp.problems(out(640, 0), 'first-touch', [], 'serial') == []
    assert pp.problems(out(330, 310), 'first-touch', [], 'parallel') == []
    (msg,) = pp.problems(out(448, 192), 'first-touch', [], 'parallel')
    assert "expected node 0 50%, node 1 50%" in msg
    assert pp.problems(out(320, 320), 'first-touch', [], 'serial')


def test_balancing_and_missing_lines():
    assert pp.numa_balancing(out(1, 1, 0)) == '0 (off)'
    assert pp.numa_balancing(out(1, 1, 1)) == '1 (on)'
    assert pp.numa_balancing('') == 'unknown'
    assert pp.problems(THREADS, 'interleave', [0, 1], 'serial')
