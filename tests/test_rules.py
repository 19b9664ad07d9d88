"""The verdict's rules and the sessions that judge them are kept apart.

Every constant of :mod:`placement.judgement.rules` names the tuning sets it was chosen
on; every validation set (``tests/fixtures/validation/NAME/``) was recorded after the
rules were fixed and is named by no rule; the figures the README, the benchmarks page and
``benchmarks/results/regression_detection.md`` print are the committed benchmark results,
rendered (``benchmarks/figures.py``).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from placement.judgement import verdict, rules

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
VALIDATION = sorted((FIXTURES / "validation").glob("*/set.yaml"))


def _utc(text: str) -> datetime:
    for fmt in ("%Y%m%dT%H%M%S%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(text.replace("Z", "+0000"), fmt)
        except ValueError:
            continue
    raise ValueError(text)


def test_every_rule_names_tuning_sets_that_exist():
    """A rule names tuning sets; one of the ``plain`` scope (plain ReFrame's bounds alone) may
    name validation sets too: the verdict never reads it."""
    for name, rule in rules.RULES.items():
        assert rule.scope in ("verdict", "plain"), name
        for folder in rule.chosen_on:
            if rule.scope == "plain" and folder.startswith("validation/"):
                assert (FIXTURES / folder / "set.yaml").is_file(), (name, folder)
            else:
                assert folder in rules.TUNING_SETS, (name, folder)
            assert sorted((FIXTURES / folder).glob("run-*.json")), (name, folder)


def test_the_fixing_times_are_past_times():
    """Both fixing times read as times, neither in the future: a set recorded after the later
    of them is out of sample for the verdict and for plain ReFrame's bounds alike (either
    may be chosen again first)."""
    now = datetime.now(_utc(rules.RULES_FIXED).tzinfo)
    assert _utc(rules.RULES_FIXED) <= now and _utc(rules.PLAIN_FIXED) <= now


def test_a_tuning_sets_description_says_it_chose_the_rules():
    """A set recorded as a validation set and later used to choose a rule keeps its old
    description (when, where, which fixing it followed): its ``role`` says it is in-sample
    now, so nobody reads its ``recorded_after_rules_fixed`` as the rules in force."""
    described = sorted(FIXTURES.glob("*/set.yaml"))
    assert described
    for meta in described:
        assert meta.parent.name in rules.TUNING_SETS, meta
        assert yaml.safe_load(meta.read_text())["role"].startswith("tuning:"), meta


def test_a_rule_holds_its_value_sets_and_one_line_reason():
    """rules.py holds values, not history: every tuning set is described by its own
    ``set.yaml`` alone, and each rule's reason is one line."""
    for folder in rules.TUNING_SETS:
        meta = FIXTURES / folder / "set.yaml"
        assert meta.is_file() and yaml.safe_load(meta.read_text())["what"], folder
    for name, rule in rules.RULES.items():
        assert len(rule.why) <= 300 and rule.why.count(". ") == 0, name


def test_the_modules_apply_the_rules_values():
    assert verdict.over_sessions.ALPHA == rules.value("ALPHA")
    assert verdict.over_sessions.GROSS_EFFECT == rules.value("GROSS_EFFECT")
    assert verdict.over_sessions.GROSS_AGAIN_TIGHT == bool(rules.value("GROSS_AGAIN_TIGHT"))
    assert verdict.over_sessions.GROSS_OFF_SLOWER_NODE == bool(rules.value("GROSS_OFF_SLOWER_NODE"))
    assert verdict.over_sessions.GROSS_OWN_LAUNCHES == bool(rules.value("GROSS_OWN_LAUNCHES"))
    assert verdict.over_sessions.REF_CAP == rules.value("REF_CAP")
    assert verdict.over_sessions.REF_ALPHA == rules.value("REF_ALPHA")
    assert verdict.node_shift.MACHINE_EFFECT == rules.value("MACHINE_EFFECT")
    assert verdict.node_shift.NODE_AT_ONCE == rules.value("NODE_AT_ONCE")
    assert verdict.node_shift.NODE_BOTH_SESSIONS == bool(rules.value("NODE_BOTH_SESSIONS"))
    assert verdict.node_load.LIMIT == rules.value("LOAD_LIMIT")
    from placement import npb
    assert npb.states.short_run_states({"time": [4.9]}, rules.value("NPB_SHORT_RUN_S"))
    assert not npb.states.short_run_states({"time": [5.0]}, rules.value("NPB_SHORT_RUN_S"))
    assert "min_judged_s = rules.value('NPB_SHORT_RUN_S')" in \
        (ROOT / "reframe_tests" / "npb.py").read_text()
    assert "value=int(rules.value('VIRTUAL_THREAD_STATES'))" in \
        (ROOT / "src" / "placement" / "testlib" / "kernels.py").read_text()
    assert "value=bool(rules.value('VIRTUAL_CACHE_PLAIN'))" in \
        (ROOT / "src" / "placement" / "testlib" / "kernels.py").read_text()


@pytest.mark.parametrize("meta", VALIDATION, ids=[p.parent.name for p in VALIDATION])
def test_a_validation_set_was_recorded_after_the_rules_were_fixed(meta):
    """Its every session (hog ones too) started after :data:`rules.RULES_FIXED`, it says
    where and under what load it was recorded, and no rule was chosen on it."""
    info = yaml.safe_load(meta.read_text())
    assert info["what"] and info["host"] and info["cpus"] and "loads" in info
    name = meta.parent.name
    assert name not in rules.TUNING_SETS
    assert all(name not in r.chosen_on and f"validation/{name}" not in r.chosen_on
               for r in rules.RULES.values() if r.scope == "verdict")
    runs = sorted(meta.parent.glob("run-*.json")) + sorted(meta.parent.glob("hog/run-*.json"))
    assert len(runs) >= 3
    fixed = _utc(rules.RULES_FIXED)
    starts = [_utc(json.loads(p.read_text())["session_info"]["time_start"]) for p in runs]
    for p, start in zip(runs, starts):
        assert start > fixed, (p.name, start)
    # a plain rule chose on it: recorded before plain ReFrame's bounds were fixed
    if any(f"validation/{name}" in r.chosen_on for r in rules.RULES.values()):
        assert min(starts) < _utc(rules.PLAIN_FIXED), name


def _figures():
    """benchmarks/figures.py, the renderer both tests below hold the pages to."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import figures
    return figures


def test_the_pages_print_the_committed_benchmark_figures():
    """The README, docs/reference/benchmarks.md and the full table beside the JSON hold the
    figures exactly as ``benchmarks/figures.py`` renders the committed results (``--write``
    rewrites them): the README a few pooled lines, the reference page the validation sets'
    rows and the tuning sets pooled in one row, the full table every set's row."""
    figures = _figures()
    data = json.loads(figures.RESULTS.read_text())
    for page, render in figures.PAGES.items():
        block = "\n".join(render(data))
        assert block in page.read_text(), f"{page}: run python benchmarks/figures.py --write"
    assert figures.FULL.read_text() == figures.full_page(data), \
        f"{figures.FULL}: run python benchmarks/figures.py --write"
    # the reference page's rows are the validation sets', the full table's every set's
    reference = "\n".join(figures.table(data, False))
    full = figures.FULL.read_text()
    for name, r in data["sets"].items():
        assert (f"| `{name}`:" in reference) == (r["role"] == "validation"), name
        assert f"| `{name}`:" in full, name


def test_the_pooled_figures_are_the_validation_sessions_each_once():
    """The pooled lines a site reads count validation sessions of a quiet node only, each
    once: dropping the tuning sets changes nothing, and the load line's unchanged sessions
    are every session of those sets."""
    figures = _figures()
    data = json.loads(figures.RESULTS.read_text())
    only = {**data, "sets": {n: r for n, r in data["sets"].items() if r["role"] == "validation"}}
    quiet = figures._validation(data)
    assert quiet and figures._validation(only) == quiet
    assert not set(map(id, figures._seen(data))) & set(map(id, quiet))
    sessions = sum(r["sessions"] for r in quiet)
    assert sum(r["load_line"]["measured"] for r in quiet) == sessions
    assert f"of {sessions} unchanged sessions flagged" in "\n".join(figures.pooled(quiet))
    # each mode apart: its sets alone, each session once
    acc = [r for r in quiet if r.get("mode") == "acceptance"]
    assert acc, "no acceptance-mode validation set in the results"
    line = "\n".join(figures.pooled_mode(quiet, "acceptance"))
    assert f"({figures._sets(len(acc))}, {sum(r['sessions'] for r in acc)} sessions)" in line
    assert f"{sum(r['load_line']['measured'] for r in acc)} unchanged sessions flagged" in line
    # the sets chosen on are pooled apart and said to be in-sample
    block = "\n".join(figures.table(data))
    assert f"The {len(figures._seen(data))} quiet sets recorded as validation sets and " \
        "chosen on later, IN-SAMPLE" in block
