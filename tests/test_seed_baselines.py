"""The studies' reference files: regenerated from the seed CSVs, and read by ReFrame's own `$ref` code."""


import pytest
import yaml

from placement.acceptance import seed_baselines
from placement.util.paths import baseline_dir

SEED = seed_baselines.default_seed_dir()


@pytest.mark.skipif(not SEED.is_dir(), reason=f"seed CSVs not found at {SEED} "
                    "(set PLACEMENT_SEED_DATA to the folder holding *_npb33_omp.csv)")
@pytest.mark.parametrize("system", sorted(seed_baselines.STUDIES))
def test_files_match_a_regeneration(system):
    committed = (baseline_dir() / f"{system}.yaml").read_text()
    assert committed == seed_baselines.render(system, SEED), \
        "stale: run python -m placement.acceptance.seed_baselines"


@pytest.mark.skipif(not SEED.is_dir(), reason=f"seed CSVs not found at {SEED}")
def test_check_mode_reports_stale_files(tmp_path, capsys):
    assert seed_baselines.main(["--seed-data", str(SEED), "--output", str(tmp_path),
                                "--check"]) == 1
    assert seed_baselines.main(["--seed-data", str(SEED), "--output", str(tmp_path)]) == 0
    assert seed_baselines.main(["--seed-data", str(SEED), "--output", str(tmp_path),
                                "--check"]) == 0


def _load(system):
    return yaml.safe_load((baseline_dir() / f"{system}.yaml").read_text())


@pytest.mark.parametrize("system,check,count", [
    ("bulldozer", "NpbAcceptanceCheck", 5 * 7 * 2),      # class A: 5 benchmarks, 7 counts, 2 maps
    ("bulldozer", "NpbFullCheck", 2 * 5 * 7 * 2),        # classes A and C
    ("xeon-e5620", "NpbAcceptanceCheck", 6 * 4 * 3),     # class B: 6 benchmarks, 4 counts, 3 maps
])
def test_every_study_value_is_an_entry(system, check, count):
    entry = _load(system)[check]
    assert entry["$index"] == ["benchmark", "npb_class", "num_threads", "affinity", "policy"]
    leaves = [leaf for bench, by_cls in entry.items() if bench != "$index"
              for by_thr in by_cls.values() for by_aff in by_thr.values()
              for by_pol in by_aff.values() for leaf in by_pol.values()]
    assert len(leaves) == count
    for leaf in leaves:
        value, lower, upper, unit = leaf["wall"]
        assert value > 0 and unit == "s" and lower == -upper
    assert "_provenance" in _load(system)


def test_thresholds_follow_the_studies_spread():
    assert _load("bulldozer")["NpbFullCheck"]["BT"]["C"][64]["scatter"]["first-touch"]["wall"] \
        == [65.69, -0.1, 0.1, "s"]
    assert _load("xeon-e5620")["NpbAcceptanceCheck"]["CG"]["B"][4]["compact"]["first-touch"][
        "wall"] == [36.7, -0.038, 0.038, "s"]


def test_reframe_resolves_a_case_from_the_file():
    """ReFrame's own reference machinery (not a loader of ours) finds a study value for a test."""
    rfm_pipeline = pytest.importorskip("reframe.core.pipeline")
    ref = rfm_pipeline._ReferenceDict.__new__(rfm_pipeline._ReferenceDict)
    ref._ReferenceDict__ref_file = str(baseline_dir() / "bulldozer.yaml")
    ref._ReferenceDict__test_entry_name = "NpbFullCheck"
    data = ref._read_ref_file(str(baseline_dir() / "bulldozer.yaml"))
    index = data.pop("$index")
    tree = rfm_pipeline.RegressionTestDict({"$index": index, **data})

    class Case:  # the attributes ReFrame indexes on, as a test instance has them
        benchmark, npb_class, num_threads, affinity, policy = "SP", "C", 64, "scatter", "first-touch"

    node = tree.data
    for key in tree.index:
        node = node[getattr(Case, key)]
    assert node["wall"] == (421.29, -0.1, 0.1, "s")


def test_a_link_at_a_seed_baseline_s_name_is_replaced_not_written_through(tmp_path):
    """The seed files were written with Path.write_text: through a link planted there."""
    victim = tmp_path / "victim"
    victim.write_text("kept\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "bulldozer.yaml").symlink_to(victim)
    assert seed_baselines.main(["--output", str(tmp_path / "out")]) == 0
    assert victim.read_text() == "kept\n"
    written = tmp_path / "out" / "bulldozer.yaml"
    assert not written.is_symlink() and written.read_text() == seed_baselines.render(
        "bulldozer", SEED)
