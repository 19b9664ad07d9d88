"""The names the kernels give their performance variables are the names the report reads.

The kernels' checks name the write bandwidth per block ``gbps_<block>`` and the
copy bandwidth per node pair ``gbps_<i>_<j>``; the report's memory-write and
NUMA-copy sections find them with regular expressions. A rename on either side
would leave a section silently empty, so both directions are checked here: the
names the checks make parse back to the same block size and node pair, and a
real run report of those checks (the 16-core node's) fills both sections.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from placement.judgement import reading
from placement.report.sections import (BLOCK_VAR, PAIR_VAR, bandwidth_section,
                                       numa_section)
from placement.report.tables import Numbers
from placement.util.sizes import size_bytes

kernels = pytest.importorskip('placement.testlib.kernels')

KERN16 = (Path(__file__).resolve().parents[1] / 'reports' / 'xeon16-20261123T000804' / 'runs'
          / 'kern16.json')


@pytest.mark.parametrize('scale', [0, 1], ids=['small', 'large'])
def test_every_block_variable_parses_back_to_its_size(scale):
    blocks = kernels.MemWriteSingleBase.scaled_defaults['blocks'][scale]
    for block in blocks:
        m = BLOCK_VAR.match(kernels.block_var(block))
        assert m, f'{kernels.block_var(block)} is not read by the report'
        assert size_bytes(m.group('size')) == size_bytes(block)


def test_every_pair_variable_parses_back_to_its_nodes():
    for i in range(16):
        for j in range(16):
            m = PAIR_VAR.match(kernels.pair_var(i, j))
            assert m and (int(m.group('src')), int(m.group('dst'))) == (i, j)


def test_block_and_pair_names_do_not_overlap():
    """A pair variable must never be read as a block size, nor a block size as a pair."""
    assert not BLOCK_VAR.match(kernels.pair_var(0, 1))
    assert not PAIR_VAR.match(kernels.block_var('16M'))


def test_kernel_perf_variables_are_named_by_the_shared_helpers():
    """The checks build their names with block_var/pair_var (not a copy of the pattern)."""
    src = Path(kernels.__file__).read_text()
    assert not re.search(r"f'gbps_\{(?!run_node|block)", src)
    assert 'block_var(b)' in src and 'pair_var(i, j)' in src


def test_real_run_of_the_kernels_fills_both_sections(tmp_path):
    cases = reading.run_report.load(KERN16).cases
    names = {v for c in cases if c.test == 'MemWriteSingleCheck' for v in c.perf}
    assert names and all(BLOCK_VAR.match(v) for v in names if v.startswith('gbps_'))
    numbers = Numbers()
    bw = bandwidth_section(cases, tmp_path, numbers)
    assert bw is not None and any('MemWriteSingleCheck' in t.title and 'block size' in t.title
                                  for t in bw.tables)
    numa = numa_section(cases, tmp_path, numbers)
    assert numa is not None and numa.tables
