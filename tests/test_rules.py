"""The verdicts' settings and the sessions that judge them are kept apart.

:mod:`placement.judgement.rules` holds every setting of both verdicts, typed, each with
why; ``benchmarks/rules_provenance.yaml`` (:mod:`provenance`) names the tuning sets each
was chosen on and when they were fixed; every validation set (``tests/fixtures/validation/
NAME/``) was recorded after the rules were fixed and is named by no setting; the figures the
README, the benchmarks page and ``benchmarks/results/regression_detection.md`` print are the
committed benchmark results, rendered (``benchmarks/figures.py``).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from placement.judgement import peers, rules, verdict, baselines

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
VALIDATION = sorted((FIXTURES / "validation").glob("*/set.yaml"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import provenance  # noqa: E402

#: a date, a UTC time or a recorded set's folder name: history, not a reason
HISTORY = re.compile(r"\b20\d\d-?\d\d-?\d\d|\b\d\d:\d\d UTC\b|\baa-[a-z0-9-]+|FIXED\b")


def _utc(text: str) -> datetime:
    for fmt in ("%Y%m%dT%H%M%S%z", "%Y-%m-%dT%H:%M:%S%z"):
        try:
            return datetime.strptime(text.replace("Z", "+0000"), fmt)
        except ValueError:
            continue
    raise ValueError(text)


def _settings() -> dict[str, str]:
    """Each setting of rules.py by name, with its ``#:`` comment."""
    lines = Path(rules.__file__).read_text().splitlines()
    out = {}
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            i, doc = node.lineno - 2, []
            while i >= 0 and lines[i].startswith("#:"):
                doc.insert(0, lines[i][2:].strip())
                i -= 1
            out[node.target.id] = " ".join(doc)
    return out


def test_every_setting_is_typed_and_says_why_in_one_sentence():
    """rules.py holds settings, not history: each a typed module-level name with a ``#:``
    comment of one sentence (what it decides and why its value), no date and no set name."""
    settings = _settings()
    public = {n for n in vars(rules) if n.isupper()}
    assert public == set(settings), public ^ set(settings)
    for name, doc in settings.items():
        assert doc, name
        assert isinstance(getattr(rules, name), (int, float)), name
        assert doc.endswith(".") and doc[:-1].count(". ") == 0, (name, doc)
        assert not HISTORY.search(doc), (name, HISTORY.search(doc))
    assert not HISTORY.search(Path(rules.__file__).read_text())


def test_every_setting_has_its_provenance_and_every_choice_its_place():
    """Each setting of rules.py has its entry in the provenance file; an entry that is no
    setting names the branch its code keeps and the file that keeps it."""
    settings = set(_settings())
    assert settings <= set(provenance.CHOICES), settings - set(provenance.CHOICES)
    for name, c in provenance.CHOICES.items():
        assert c.scope in ("verdict", "plain", "peers"), name
        if name not in settings:
            assert c.kept in ("yes", "no") and (ROOT / c.at).is_file(), name
            assert name not in Path(ROOT / c.at).read_text(), (name, c.at)


def test_every_rule_names_tuning_sets_that_exist():
    """A setting names tuning sets; one of the ``plain`` scope (plain ReFrame's bounds alone)
    may name validation sets too: the verdict never reads it."""
    for name, c in provenance.CHOICES.items():
        for folder in c.chosen_on:
            if c.scope == "plain" and folder.startswith("validation/"):
                assert (FIXTURES / folder / "set.yaml").is_file(), (name, folder)
            else:
                assert folder in provenance.TUNING_SETS, (name, folder)
            assert sorted((FIXTURES / folder).glob("run-*.json")), (name, folder)


def test_the_fixing_times_are_past_times():
    """The fixing times read as times, none in the future: a set recorded after the later
    of them is out of sample for the verdict and for plain ReFrame's bounds alike (either
    may be chosen again first)."""
    now = datetime.now(_utc(provenance.RULES_FIXED).tzinfo)
    for fixed in (provenance.RULES_FIXED, provenance.PLAIN_FIXED, provenance.PEERS_FIXED):
        assert _utc(fixed) <= now, fixed


def test_a_tuning_sets_description_says_it_chose_the_rules():
    """A set recorded as a validation set and later used to choose a rule keeps its old
    description (when, where, which fixing it followed): its ``role`` says it is in-sample
    now, so nobody reads its ``recorded_after_rules_fixed`` as the rules in force."""
    described = sorted(FIXTURES.glob("*/set.yaml"))
    assert described
    for meta in described:
        assert meta.parent.name in provenance.TUNING_SETS, meta
        assert yaml.safe_load(meta.read_text())["role"].startswith("tuning:"), meta


def test_every_tuning_set_is_described():
    """Every tuning set is described by its own ``set.yaml``."""
    for folder in provenance.TUNING_SETS:
        meta = FIXTURES / folder / "set.yaml"
        assert meta.is_file() and yaml.safe_load(meta.read_text())["what"], folder


def test_the_modules_apply_the_rules_values():
    """The modules that apply a setting read it from rules.py by its name."""
    for module, names in ((verdict.over_sessions, ("ALPHA", "MIN_EFFECT", "EQUIV_CONFIDENCE",
                                                   "GROSS_EFFECT", "GROSS_LAUNCHES", "REF_CAP",
                                                   "REF_ALPHA", "MIN_SESSIONS", "MIN_VALUES",
                                                   "DETECTABLE_MAX", "LAUNCH_SHARE")),
                          (verdict.node_shift, ("MACHINE_EFFECT", "NODE_ALPHA", "NODE_AT_ONCE",
                                                "TESTED_SESSIONS")),
                          (verdict.node_load, ("LOAD_LIMIT", "MIN_CASES")),
                          (verdict.moderation, ("DF_CAP",)),
                          (baselines.samples, ("KEEP_SESSIONS",)),
                          (peers.partition, ("PEER_ALPHA", "PEER_EFFECT", "MIN_NODES")),
                          (peers.maxt, ("PEER_ALPHA", "PEER_EFFECT", "HALVES_MAX_NODES",
                                        "PEER_FAR_OUT")),
                          (peers.topology, ("PEER_MEMORY_SLACK",))):
        for name in names:
            assert getattr(module, name) is getattr(rules, name), (module.__name__, name)
    from placement import npb
    assert npb.states.short_run_states({"time": [4.9]}, rules.NPB_SHORT_RUN_S)
    assert not npb.states.short_run_states({"time": [5.0]}, rules.NPB_SHORT_RUN_S)
    assert "min_judged_s = rules.NPB_SHORT_RUN_S" in \
        (ROOT / "reframe_tests" / "npb.py").read_text()
    assert "value=rules.VIRTUAL_THREAD_STATES" in \
        (ROOT / "src" / "placement" / "testlib" / "kernels.py").read_text()


@pytest.mark.parametrize("meta", VALIDATION, ids=[p.parent.name for p in VALIDATION])
def test_a_validation_set_was_recorded_after_the_rules_were_fixed(meta):
    """Its every session (hog ones too) started after ``rules_fixed``, it says where and
    under what load it was recorded, and no setting of the verdict was chosen on it."""
    info = yaml.safe_load(meta.read_text())
    assert info["what"] and info["host"] and info["cpus"] and "loads" in info
    name = meta.parent.name
    choices = provenance.CHOICES.values()
    assert name not in provenance.TUNING_SETS
    assert all(name not in c.chosen_on and f"validation/{name}" not in c.chosen_on
               for c in choices if c.scope == "verdict")
    runs = sorted(meta.parent.glob("run-*.json")) + sorted(meta.parent.glob("hog/run-*.json"))
    assert len(runs) >= 3
    fixed = _utc(provenance.RULES_FIXED)
    starts = [_utc(json.loads(p.read_text())["session_info"]["time_start"]) for p in runs]
    for p, start in zip(runs, starts):
        assert start > fixed, (p.name, start)
    # a plain setting chose on it: recorded before plain ReFrame's bounds were fixed
    if any(f"validation/{name}" in c.chosen_on for c in choices):
        assert min(starts) < _utc(provenance.PLAIN_FIXED), name


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
