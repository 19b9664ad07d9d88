"""reports/reference: stored baselines and seed tables in the studies' layout, checked
against published cells of Bulldozer Tables 1–2 (classes A, C) and Xeon E5620 Table 1 (B)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from placement import cli
from placement.util.paths import baseline_dir

SEEDS = Path(__file__).parent / "fixtures" / "seed-data"
REFERENCE = Path(__file__).parents[1] / "reports" / "reference"

# (system, class, benchmark, threads, time without, time with, published "Desempenho")
PUBLISHED = [
    ("bulldozer", "A", "CG", 64, 0.41, 0.22, 1.83),
    ("bulldozer", "A", "SP", 64, 14.83, 11.88, 1.25),
    ("bulldozer", "A", "FT", 32, 0.40, 0.33, 1.21),
    ("bulldozer", "C", "SP", 16, 291.82, 205.41, 1.42),
    ("bulldozer", "C", "BT", 32, 81.37, 65.67, 1.24),
    ("bulldozer", "C", "FT", 32, 19.26, 13.94, 1.38),
]


def _numbers(folder: Path) -> list[dict]:
    return list(csv.DictReader(open(folder / "numbers.csv")))


def _cell(rows, system, klass, row, threads, quantity):
    hits = [float(r["value"]) for r in rows
            if r["section"] == "npb" and r["table"].lower().startswith(f"npb-{klass.lower()}-{system}")
            and r["row"] == row and r["column"] == str(threads) and r["quantity"] == quantity]
    assert len(hits) == 1, (system, klass, row, threads, quantity, hits)
    return hits[0]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reference")
    args = ["report", "--reference", "--output", str(out),
            "--seed-csv", str(SEEDS / "bulldozer_npb33_omp.csv"),
            "--seed-csv", str(SEEDS / "xeon_e5620_npb33_omp.csv")]
    assert cli.main(args) == 0
    return out


@pytest.mark.parametrize("system,klass,bench,threads,t_none,t_aff,published", PUBLISHED)
def test_published_cells_and_speedups(rendered, system, klass, bench, threads, t_none, t_aff,
                                      published):
    rows = _numbers(rendered)
    assert _cell(rows, system, klass, f"{bench} none", threads, "time") == t_none
    assert _cell(rows, system, klass, f"{bench} scatter", threads, "time") == t_aff
    sp = _cell(rows, system, klass, f"{bench} speedup scatter", threads, "speedup")
    # the paper divided unrounded means; the tables print them to 0.01 s
    lo, hi = (t_none - 0.005) / (t_aff + 0.005), (t_none + 0.005) / (t_aff - 0.005)
    assert lo <= published + 0.005 and published - 0.005 <= hi
    assert lo <= sp <= hi


def test_xeon_class_b_table(rendered):
    rows = _numbers(rendered)
    assert _cell(rows, "xeon-e5620", "B", "BT none", 8, "time") == 95.6
    assert _cell(rows, "xeon-e5620", "B", "BT compact", 8, "time") == 46.3
    assert _cell(rows, "xeon-e5620", "B", "CG scatter", 4, "time") == 27.7
    md = (rendered / "README.md").read_text()
    assert "| BT | none | 307.10 | 157.40 | 81.60 | 95.60 |" in md
    assert "| CG | scatter | 3.29 | 1.83 | 0.80 | 0.43 | 0.24 | 0.18 | 0.22 |" in md


@pytest.mark.parametrize("name", ["bulldozer.yaml", "xeon-e5620.yaml"])
def test_stored_baselines_render(tmp_path, name):
    path = baseline_dir() / name
    if not path.is_file():
        pytest.skip(f"{path} not written yet")
    assert cli.main(["report", "--reference", "--baseline", str(path),
                     "--output", str(tmp_path)]) == 0
    rows = [r for r in _numbers(tmp_path) if r["section"] == "npb"]
    assert rows, f"{name}: no NPB table (index must name benchmark, npb_class, num_threads)"


def test_committed_reference_is_current():
    assert (REFERENCE / "index.html").is_file() and (REFERENCE / "numbers.csv").is_file()
    rows = _numbers(REFERENCE)
    # the stored baseline and the published table are rendered side by side and must agree
    for table in ("npb-a-bulldozer-baseline", "npb-a-bulldozer-published"):
        hits = [float(r["value"]) for r in rows if r["section"] == "npb"
                and r["table"].lower().startswith(table) and r["row"] == "CG none"
                and r["column"] == "64" and r["quantity"] == "time"]
        assert hits == [0.41], (table, hits)


def test_an_empty_baselines_folder_is_named_as_it_was_read(tmp_path, monkeypatch, capsys):
    """The line named config/baselines/ whatever PLACEMENT_BASELINES said."""
    from placement import cli
    empty = tmp_path / "none"
    empty.mkdir()
    monkeypatch.setenv("PLACEMENT_BASELINES", str(empty))
    assert cli.main(["report", "--reference", "--output", str(tmp_path / "out")]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert f"({empty} holds no *.yaml; give --baseline or --seed-csv)" in err, err


@pytest.mark.parametrize("args, said", [
    (["--run", "{run}", "--seed-csv", "nosuch.csv"], "--seed-csv is only read with --reference"),
    (["--run", "{run}", "--baseline", "nosuch.yaml"], "--baseline is only read with --reference"),
    (["--reference", "--run", "{run}"], "--run is only read without --reference"),
    (["--reference", "--latest"], "--latest is only read without --reference"),
    (["--reference", "--exit-status"], "--exit-status is only read without --reference"),
])
def test_an_option_the_rendering_does_not_read_is_refused(args, said, tmp_path, capsys):
    """Each option is read by one of the two renderings: given to the other it was ignored
    (a seed table that does not exist, exit 0), now it is refused and nothing is written."""
    run = Path(__file__).parent / "fixtures" / "runreports" / "generic-first-run.json"
    out = tmp_path / "out"
    argv = ["report", "--output", str(out)] + [a.format(run=run) for a in args]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err
    assert not out.exists()


@pytest.mark.parametrize("text, said", [
    ("benchmark,class,threads,affinity,time_s\nEP,A,0,none,1\n", "data row 1 (EP,A,0,none,1)"),
    ("benchmark,class,threads,affinity,time_s\nEP,A,4,none,-2\n", "both above zero"),
    ("benchmark,class,threads,affinity,time_s\nEP,A,4,none,abc\n", "both above zero"),
    ("a,b\n1,2\n", "no column benchmark, class, threads, affinity, time_s"),
])
def test_a_seed_table_row_that_is_no_measurement_is_refused(text, said, tmp_path, capsys):
    """A row of 0 threads or a time of 0 or below was rendered as a measurement; a row
    without a column read as a Python error (``bad row {...}: 'benchmark'``)."""
    table = tmp_path / "t.csv"
    table.write_text(text)
    out = tmp_path / "out"
    assert cli.main(["report", "--reference", "--seed-csv", str(table),
                     "--output", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_a_reference_file_not_there_is_said_not_found(tmp_path, capsys):
    assert cli.main(["report", "--reference", "--baseline", str(tmp_path / "nosuch.yaml"),
                     "--output", str(tmp_path / "out")]) == 2
    assert "not found" in capsys.readouterr().err
