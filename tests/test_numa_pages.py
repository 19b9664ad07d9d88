"""Locality from numa_maps lines and numalize page exclusivity, on synthetic inputs."""

from pathlib import Path

import pytest

from placement.checks import numa_pages as npg

FIX = Path(__file__).parent / "fixtures" / "numalize"


def test_pages_per_node_reads_every_node():
    line = "7f1db61e2000 default anon=640 dirty=640 N0=600 N1=40 kernelpagesize_kB=4"
    assert npg.pages_per_node(line) == {0: 600, 1: 40}


def test_locality_serial_init_on_two_nodes_is_half():
    threads = [npg.ThreadRows(0, 0, 0, 50), npg.ThreadRows(1, 1, 50, 100)]
    assert npg.locality_share({0: 1000}, threads) == pytest.approx(0.5)
    assert npg.locality_share({0: 500, 1: 500}, threads) == pytest.approx(1.0)
    assert npg.locality_share({0: 250, 1: 750}, threads) == pytest.approx(0.75)


def test_datamap_output_parsed_and_weighted():
    text = "\n".join([
        "result kernel=datamap init=serial mlups=1",
        "thread kernel=datamap thread=0 cpu=0 node=0 row_lo=0 row_hi=2 rows=4",
        "thread kernel=datamap thread=1 cpu=8 node=1 row_lo=2 row_hi=4 rows=4",
        "numa_maps kernel=datamap array=f 7f00 default anon=100 N0=100 kernelpagesize_kB=4",
        "numa_maps kernel=datamap array=g 7f80 default anon=300 N0=150 N1=150 kernelpagesize_kB=4",
    ])
    # f: 50 % local (all on node 0), g: 100 %; weighted by pages 100:300
    assert npg.datamap_locality(text) == pytest.approx(100 * (0.5 * 100 + 1.0 * 300) / 400)


def test_datamap_output_without_pages_is_an_error():
    with pytest.raises(ValueError, match="no numa_maps"):
        npg.datamap_locality("result kernel=datamap")


def test_compact_nodes():
    assert npg.compact_nodes(4, 2) == [0, 0, 1, 1]
    assert npg.compact_nodes(5, 2) == [0, 0, 0, 1, 1]
    assert npg.compact_nodes(48, 8) == [t // 6 for t in range(48)]
    assert npg.compact_nodes(4, 2, threads_per_node=1) == [0, 1, 1, 1]


def test_page_and_application_exclusivity_by_hand():
    pages = npg.read_page_csv(FIX / "two_nodes.full.page.csv")
    assert [p.structure for p in pages] == ["f", "f", "f", "g", "g"]
    node_of = npg.compact_nodes(4, 2)          # T0,T1 -> node 0; T2,T3 -> node 1
    e = [npg.page_exclusivity(p, node_of, 2) for p in pages]
    assert e == [100.0, 100.0, 50.0, 100.0, None]
    # sum_p max_k A_k = 100 + 100 + 50 + 40; sum_p sum_k A_k = 100 + 100 + 100 + 40
    assert npg.application_exclusivity(pages, 2) == pytest.approx(100 * 290 / 340)
    # on one node every page is exclusive
    assert npg.application_exclusivity(pages, 1) == pytest.approx(100.0)
    # one thread per node: page 2 is shared 50/50 between threads 0 and 1
    assert npg.application_exclusivity(pages, 4) == pytest.approx(100 * (100 + 50 + 25 + 30) / 340)


def test_fully_exclusive_application():
    pages = npg.read_page_csv(FIX / "exclusive.full.page.csv")
    assert npg.application_exclusivity(pages, 2) == pytest.approx(100.0)


def test_bad_csv_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="without gaps"):
        npg.read_page_csv(FIX / "bad_columns.full.page.csv")
    empty = tmp_path / "x.full.page.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty"):
        npg.read_page_csv(empty)
    bad = tmp_path / "y.full.page.csv"
    bad.write_text("page.address,T0,T1\n0x1,3,abc\n")
    with pytest.raises(ValueError, match="whole numbers"):
        npg.read_page_csv(bad)
