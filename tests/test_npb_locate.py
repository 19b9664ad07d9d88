"""Finding NPB binaries (search order, partial builds, the install hint) and the time budgets."""

from pathlib import Path

import pytest

from placement import npb


def _binary(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_search_order(tmp_path):
    var, envdir, repo = tmp_path / "var", tmp_path / "env", tmp_path / "repo"
    view = repo / ".spack-env" / "view" / "bin"
    for d in (var, envdir, view):
        _binary(d, "bt.A.x")
    env = {"NPB_DIR": str(envdir), "PATH": ""}
    assert npb.locate.locate("BT", "A", str(var), repo, env).source == "npb_dir variable"
    assert npb.locate.locate("BT", "A", None, repo, env).source == "NPB_DIR"
    assert npb.locate.locate("BT", "A", None, repo, {"PATH": ""}).source == "Spack view"
    spack_env = tmp_path / "senv"
    _binary(spack_env / ".spack-env" / "view" / "bin", "bt.A.x")
    found = npb.locate.locate("BT", "A", None, None, {"SPACK_ENV": str(spack_env), "PATH": ""})
    assert found.source == "active Spack env"


def test_partial_build_falls_through_to_path(tmp_path):
    _binary(tmp_path / "npb", "cg.S.x")
    onpath = _binary(tmp_path / "bin", "cg.C.x")
    env = {"NPB_DIR": str(tmp_path / "npb"), "PATH": str(tmp_path / "bin")}
    found = npb.locate.locate("CG", "C", None, None, env)
    assert found.path == str(onpath) and found.source == "PATH"


def test_missing_binary_says_where_and_how(tmp_path):
    env = {"NPB_DIR": str(tmp_path), "PATH": str(tmp_path)}
    found = npb.locate.locate("MG", "C", None, None, env)
    assert found.path is None
    msg = found.why_missing("MG", "C")
    assert "mg.C.x" in msg and str(tmp_path) in msg
    assert "spack -e . install" in msg and "NPB_DIR" in msg and "npb_dir" in msg


def test_non_executable_file_is_not_a_binary(tmp_path):
    (tmp_path / "ep.S.x").write_text("not a program")
    assert npb.locate.locate("EP", "S", str(tmp_path), None, {"PATH": ""}).path is None


@pytest.mark.parametrize("bench", npb.locate.BENCHMARKS)
@pytest.mark.parametrize("cls", ["S", "W", "A", "B", "C"])
def test_every_case_has_a_budget(bench, cls):
    assert npb.budget.serial_seconds(bench, cls) > 0
    assert npb.budget.run_budget(bench, cls, 4, 8) >= npb.budget.MIN_RUN_S


def test_budgets_grow_with_class_and_oversubscription():
    full = npb.budget.run_budget("BT", "C", 64, 64)
    assert full == npb.budget.SLACK * npb.budget.serial_seconds("BT", "C")
    assert npb.budget.run_budget("BT", "C", 128, 64) == npb.budget.COLLAPSE_FACTOR * full
    assert npb.budget.run_budget("BT", "A", 64, 64) < full
    # the job covers its repeats plus the full-count comparison run, rounded up to minutes
    limit = npb.budget.job_time_limit("CG", "A", 4, 2, 5)
    assert limit % 60 == 0
    assert limit >= 5 * npb.budget.run_budget("CG", "A", 4, 2) + npb.budget.run_budget("CG", "A", 2, 2)


def test_a_slower_node_scales_every_budget_and_the_job_limit():
    """budget_scale=8 (an emulated node): each run's watchdog and the job 8x longer."""
    for threads in (2, 4):   # at the full count and oversubscribed
        assert npb.budget.run_budget("CG", "A", threads, 2, 8) == \
            8 * npb.budget.run_budget("CG", "A", threads, 2)
    assert npb.budget.run_budget("IS", "S", 1, 2, 8) == 8 * npb.budget.MIN_RUN_S
    slow = npb.budget.job_time_limit("CG", "A", 4, 2, 5, 8)
    assert slow >= 5 * npb.budget.run_budget("CG", "A", 4, 2, 8) + \
        npb.budget.run_budget("CG", "A", 2, 2, 8) + 8 * npb.budget.JOB_OVERHEAD_S
    assert slow >= 7 * npb.budget.job_time_limit("CG", "A", 4, 2, 5)


def test_the_scale_comes_from_the_option_else_the_partition_else_one():
    """-S budget_scale wins over the partition's extra; neither: 1 (a real node)."""
    assert npb.budget.resolve_scale(None, None, "sys:part") == 1.0
    assert npb.budget.resolve_scale(None, 6, "sys:part") == 6.0
    assert npb.budget.resolve_scale(2.5, 6, "sys:part") == 2.5


@pytest.mark.parametrize("given,extra,message", [
    (0.0, None, "budget_scale=0.0: expected a finite number above 0"),
    (float("nan"), 6, "budget_scale=nan: expected a finite number above 0"),
    (None, -1, "sys:part: extras['npb_budget_scale']=-1: expected a finite number above 0"),
    (None, float("inf"), "sys:part: extras['npb_budget_scale']=inf: expected"),
    (None, "6", "sys:part: extras['npb_budget_scale']='6': expected a finite number above 0"),
    (None, True, "sys:part: extras['npb_budget_scale']=True: expected"),
])
def test_a_scale_without_a_usable_watchdog_is_refused_naming_where_it_came_from(
        given, extra, message):
    with pytest.raises(ValueError) as err:
        npb.budget.resolve_scale(given, extra, "sys:part")
    assert message in str(err.value)


def test_collapse_budget_is_ten_times_the_full_count():
    assert npb.budget.collapse_budget(4.5) == 45.0
    assert npb.budget.collapse_budget(0.02) == npb.budget.MIN_COLLAPSE_S


def test_studies_fit_their_budgets():
    """Every time the studies measured, at any thread count, is inside its run budget."""
    from placement.acceptance.seed_baselines import default_seed_dir, read_rows
    seed = default_seed_dir()
    if not seed.is_dir():
        pytest.skip(f"{seed} not present")
    for name in ("bulldozer_npb33_omp.csv", "xeon_e5620_npb33_omp.csv"):
        for row in read_rows(seed / name):
            budget = npb.budget.run_budget(row["benchmark"], row["class"], 1, 1)
            assert float(row["time_s"]) < budget, row


def test_mistyped_npb_dir_is_named_as_missing(tmp_path):
    typo = tmp_path / "NPB3.4-OMP" / "bni"
    found = npb.locate.locate("BT", "A", None, None, {"NPB_DIR": str(typo), "PATH": ""})
    assert f"NPB_DIR {typo} (no such folder)" in found.why_missing("BT", "A")
    typo.mkdir(parents=True)      # an existing folder without the binary is not called missing
    found = npb.locate.locate("BT", "A", None, None, {"NPB_DIR": str(typo), "PATH": ""})
    assert "no such folder" not in found.why_missing("BT", "A")
