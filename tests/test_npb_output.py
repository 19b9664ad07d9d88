"""The NPB parsers on real NPB 3.4 logs, a failed verification and a truncated run."""

import csv
from pathlib import Path

import pytest

from placement import npb

LOGS = Path(__file__).parent / "fixtures" / "npb-logs"


def _summary() -> list[dict[str, str]]:
    with open(LOGS / "summary.tsv", newline="") as fp:
        return list(csv.DictReader(fp, delimiter="\t"))


@pytest.mark.parametrize("row", _summary(), ids=lambda r: r["log"])
def test_standard_block_matches_summary(row):
    res = npb.output.parse_result((LOGS / row["log"]).read_text())
    assert res.complete and res.verified
    assert res.benchmark == row["log"].split(".")[0].upper()
    assert res.npb_class == row["class"]
    assert res.size == " ".join(row["size"].split())
    assert res.iterations == int(row["iter"])
    assert res.time_s == float(row["time_s"])
    assert res.total_threads == int(row["total_thr"])
    assert res.avail_threads == int(row["avail_thr"])
    assert res.mops_total == float(row["mops_total"])
    assert res.version == "3.4"


def test_unsuccessful_verification_is_read_as_such():
    res = npb.output.parse_result((LOGS / "cg.A.t2.unsuccessful.log").read_text())
    assert res.complete
    assert res.verification == "UNSUCCESSFUL" and not res.verified


def test_truncated_log_is_incomplete():
    res = npb.output.parse_result((LOGS / "bt.W.t2.truncated.log").read_text())
    assert not res.complete
    assert res.time_s is None and res.verification is None


def _job(*runs: tuple[str, int, float], limit: float = 60) -> str:
    """A job's stdout as the repeat loop writes it: each log followed by its marker."""
    out = ["bindprobe threads=2"]
    for i, (log, rc, wall) in enumerate(runs, 1):
        out.append((LOGS / log).read_text() if log else "")
        out.append(f"npb-run rep={i} rc={rc} limit={limit} wall={wall}")
    return "\n".join(out) + "\n"


def test_repeats_are_split_and_summarized():
    text = _job(("cg.A.t2.log", 0, 0.64), ("cg.A.t2.gompaff.log", 0, 0.56),
                ("cg.A.t2.log", 0, 0.64))
    runs = npb.output.parse_runs(text)
    assert [r.rep for r in runs] == [1, 2, 3]
    assert [r.result.time_s for r in runs] == [0.42, 0.38, 0.42]
    assert npb.output.run_problems(runs, 3, "A", 2) == []
    s = npb.output.summarize([r.time_s for r in npb.output.completed(runs)])
    assert s.n == 3
    assert s.mean == pytest.approx(0.40666, rel=1e-3)
    assert s.cv == pytest.approx(s.sd / s.mean)
    assert s.cv > 0.05               # this spread would be reported as unstable


def test_each_kind_of_bad_run_is_named():
    text = _job(("cg.A.t2.unsuccessful.log", 0, 0.6), ("bt.W.t2.truncated.log", 1, 0.2))
    issues = npb.output.run_problems(npb.output.parse_runs(text), 3, "A", 2)
    joined = "; ".join(issues)
    assert "2 of 3 runs reported" in joined
    assert "run 1: Verification = UNSUCCESSFUL" in joined
    assert "run 2: no complete NPB result" in joined


def test_wrong_class_and_thread_count_are_problems():
    runs = npb.output.parse_runs(_job(("ep.A.t1.log", 0, 3.9)))
    issues = npb.output.run_problems(runs, 1, "C", 4)
    assert any("Class = A, expected C" in i for i in issues)
    assert any("Total threads = 1, expected 4" in i for i in issues)


def test_watchdog_stop_is_not_a_sanity_problem():
    runs = npb.output.parse_runs(_job(("ep.A.t1.log", 0, 3.9), ("bt.W.t2.truncated.log", 124, 40.0)))
    assert runs[1].stopped and not runs[0].stopped
    assert npb.output.run_problems(runs, 2, "A", 1) == []
    assert len(npb.output.completed(runs)) == 1


def test_full_count_marker():
    text = "npb-full threads=64 rc=0 wall=4.512\n"
    assert npb.output.parse_full_run(text) == (64, 0, 4.512)
    assert npb.output.parse_full_run(text).wall_s == 4.512
    assert npb.output.parse_full_run("nothing") is None


def test_summary_of_nothing_says_why():
    with pytest.raises(ValueError, match="no measurements"):
        npb.output.summarize([])


def test_build_is_read_from_npb_own_report():
    """Compiler, flags and compile date: what a rebuild changes, kept with every result."""
    cg = npb.output.parse_result((LOGS / "cg.A.t2.log").read_text())
    assert cg.build == ("F77=gfortran FFLAGS=-O3 -fopenmp -fallow-invalid-boz RAND=randi8; "
                        "compiled 22 Nov 2026")
    is_ = npb.output.parse_result((LOGS / "is.S.t1.log").read_text())   # IS is C
    assert is_.build == "CC=gcc CFLAGS=-O3 -fopenmp; compiled 22 Nov 2026"
    assert npb.output.parse_result((LOGS / "bt.W.t2.truncated.log").read_text()).build is None
