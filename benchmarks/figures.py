"""The verdict's figures as the pages print them, drawn from the committed
``benchmarks/results/regression_detection.json`` alone, so that no page drifts from what the
benchmark measured: a few lines in the README, the validation sets' rows and the tuning sets
pooled on ``docs/reference/benchmarks.md``, every set's row in
``benchmarks/results/regression_detection.md`` (beside the JSON, outside the docs).

    python benchmarks/figures.py            # print the full table
    python benchmarks/figures.py --write    # rewrite the pages' marked blocks and the full table

``tests/test_rules.py`` holds the pages and the file to this rendering.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NamedTuple

import yaml

from placement.util import atomic

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "regression_detection.json"
#: every set's row, generated beside the JSON (the docs link it, their navigation does not)
FULL = RESULTS.with_suffix(".md")
VALIDATION_DIR = ROOT / "tests" / "fixtures" / "validation"
README, REFERENCE = ROOT / "README.md", ROOT / "docs" / "reference" / "benchmarks.md"
BEGIN, END = "<!-- verdict-figures: benchmarks/figures.py -->", "<!-- /verdict-figures -->"

ROLE = {"tuning": "tuning (in-sample: the rules were chosen on it)",
        "validation": "validation (recorded after the rules were fixed)"}
NODE = {"quiet": "", "shared": "; a node shared with other work: no goal applies, the load "
                               "line is meant to speak"}


def _by_size(r: dict, cell) -> str:
    """One cell per baseline size, ``1: x, 2: y``; ``-`` where nothing was measured."""
    parts = []
    for k, res in r["by_baseline_sessions"].items():
        c = res.get("confirmed")
        if c:
            parts.append(f"{k}: {cell(c)}")
    return ", ".join(parts) or "-"


class Lone(NamedTuple):
    """A lone value 40 % slower at one baseline session, from the JSON's counts: the tight
    values without states (those a rule may call), every tight one, and all values."""

    found: int
    n: int
    tight_found: int
    tight_n: int
    states: int
    all_found: int
    all_n: int


def lone_counts(c: dict) -> Lone | None:
    """:class:`Lone` of one baseline size's confirmed results, every value of every session
    judged (``lone_every``); None when it was not (other sizes) or nothing was tight (the
    goal in ``regression_detection.py`` and the table's cell both read it)."""
    every = c.get("lone_every")
    if not every or not every["tight"]["n"]:
        return None
    t4, a = every["tight"], every["all"]
    return Lone(t4["either"] - t4["states_found"], t4["n"] - t4["states"], t4["either"],
                t4["n"], t4["states"], a["either"], a["n"])


def _lone(r: dict) -> str:
    c = r["by_baseline_sessions"].get("1", {}).get("confirmed")
    if not c:
        return "-"
    lo = lone_counts(c)
    every = c.get("lone_every")
    if lo is None:
        return "-" if not every else \
            f"none tight (all values: {every['all']['either']}/{every['all']['n']})"
    return (f"{lo.found}/{lo.n} without states; {lo.states} with states, called by no rule "
            f"(all values: {lo.all_found}/{lo.all_n})")


def _load(ll: dict | None) -> str:
    if not ll or not ll["measured"]:
        return "not measured"
    return f"{ll['flagged']}/{ll['measured']}"


def _sessions(r: dict) -> str:
    """The sessions judged; A/A sessions cut by their time box are not judged, and said."""
    cut = r.get("aa_cut", 0)
    return f"{r['sessions']} ({cut} more cut by their time box, not judged)" if cut else \
        str(r["sessions"])


def _hog_load(r: dict) -> str:
    """The hog sessions' load line; those cut by their time box are not judged, and said."""
    cut = r.get("hog_cut", 0)
    text = _load(r.get("hog_load_line"))
    return f"{text} ({cut} cut by their time box, not judged)" if cut else text


def _quiet(data: dict, keep) -> list[dict]:
    """The sets of a quiet node that ``keep`` keeps (a set shared with other work has no
    goal)."""
    return [r for r in data["sets"].values() if r.get("node", "quiet") == "quiet" and keep(r)]


def _validation(data: dict) -> list[dict]:
    """The validation sets of a quiet node: the sessions a site's figures come from."""
    return _quiet(data, lambda r: r["role"] == "validation")


def _seen(data: dict) -> list[dict]:
    """The quiet sets recorded as validation sets that a rule was chosen on later: pooled
    apart, in-sample, so that what the rules do on the sessions that chose them stays in
    view beside what they do on sessions they did not see."""
    return _quiet(data, lambda r: r["role"] == "tuning" and r.get("recorded_for_validation"))


def _plain_out_of_sample(sets: list[dict]) -> list[dict]:
    """Those of ``sets`` whose plain ``reframe -r`` figures are out of sample: recorded after
    plain ReFrame's bounds were last chosen too (``plain_role``; a validation set recorded
    before is a validation set of the verdict alone)."""
    return [r for r in sets if r.get("plain_role", r["role"]) == "validation"]


def _plain_seen(sets: list[dict]) -> list[dict]:
    """The validation sets among ``sets`` that plain ReFrame's bounds were chosen on."""
    return [r for r in sets if r["role"] == "validation" and
            r.get("plain_role", r["role"]) != "validation"]


def _sum(rows: list[dict], count, total) -> str:
    return f"{sum(count(r) for r in rows)} of {sum(total(r) for r in rows)}"


def _flagged(loads: list[dict]) -> str:
    """Sessions the load line flagged of those it measured, over ``load_line`` entries."""
    return _sum(loads, lambda ll: ll["flagged"], lambda ll: ll["measured"])


def _found(lone: list[Lone]) -> str:
    """Lone changes found of the tight values without states."""
    return _sum(lone, lambda x: x.found, lambda x: x.n)


def _one(sets: list[dict]) -> list[dict]:
    """Each set's results at one baseline session."""
    return [r["by_baseline_sessions"]["1"] for r in sets if "1" in r["by_baseline_sessions"]]


def plain_counts(sets: list[dict]) -> dict[str, str]:
    """Plain ``reframe -r`` over ``sets`` at one baseline session: with the confirmation
    session, and on the first session alone, since ReFrame itself runs no confirmation."""
    one = _one(sets)
    conf = [b["confirmed"] for b in one if b.get("confirmed")]
    return {"plain": _sum(conf, lambda c: c["aa"]["plain_failed"], lambda c: c["pairs"]),
            "plain_first": _sum(one, lambda b: b["aa"]["plain_sessions_failed"],
                                lambda b: b["pairs"])}


def pooled_counts(sets: list[dict]) -> dict[str, str]:
    """``sets`` pooled at one baseline session (the first-baseline workflow), each count
    ``x of n``: what the pooled lines and rows print.
    Plain ``reframe -r``'s counts (:func:`plain_counts`) are over every set given."""
    one = _one(sets)
    conf = [b["confirmed"] for b in one if b.get("confirmed")]
    lone = [x for x in (lone_counts(c) for c in conf) if x is not None]
    return {
        "failed": _sum(conf, lambda c: c["aa"]["failed"], lambda c: c["pairs"]),
        **plain_counts(sets),
        "node_2x": _sum(conf, lambda c: c["all_at_once"]["2.00"]["failed"],
                        lambda c: c["pairs"]),
        "load": _flagged([r["load_line"] for r in sets if r["load_line"]]),
        "hog": _flagged([r["hog_load_line"] for r in sets if r.get("hog_load_line")]),
        "lone": _found(lone),
        "lone_tight": _sum(lone, lambda x: x.tight_found, lambda x: x.tight_n),
        "lone_all": _sum(lone, lambda x: x.all_found, lambda x: x.all_n),
    }


def _plain_lines(sets: list[dict], split: bool) -> list[str]:
    """Plain ``reframe -r``'s pooled lines; with ``split``, over the sets out of sample for
    its bounds, and those its bounds were chosen on apart, labelled in-sample."""
    kept = _plain_out_of_sample(sets) if split else sets
    n = plain_counts(kept)
    where = f" (the {_sets(len(kept))} recorded after its bounds were fixed)" if split else ""
    out = [f"- plain `reframe -r`{where}: {n['plain_first']} unchanged reruns failed on the "
           f"first session alone (plain ReFrame has no confirmation session), {n['plain']} "
           "with the "
           "confirmation session"]
    seen = _plain_seen(sets) if split else []
    if seen:
        s = plain_counts(seen)
        out.append(f"- plain `reframe -r` on the {_sets(len(seen))} its bounds were chosen on "
                   f"(VIRTUAL_CACHE_PLAIN), IN-SAMPLE: {s['plain_first']} failed on the first "
                   f"session alone, {s['plain']} with the confirmation session")
    return out


def pooled(sets: list[dict], split: bool = False) -> list[str]:
    """``sets`` pooled, one baseline session: the lines under the table (``split``: plain
    ``reframe -r`` out of sample apart, :func:`_plain_lines`)."""
    n = pooled_counts(sets)
    return [
        f"- unchanged reruns, with the confirmation session: acceptance line {n['failed']} "
        "failed",
        *_plain_lines(sets, split),
        f"- a node 2x slower: {n['node_2x']} failed",
        f"- load line: {n['load']} unchanged sessions flagged, {n['hog']} sessions beside "
        f"busy loops",
        f"- a lone value 40% slower with tight launches: {n['lone']} found of the values a "
        f"rule may call (without states), {n['lone_tight']} of every tight value, "
        f"{n['lone_all']} over all values",
    ]


def mode_counts(sets: list[dict], mode: str) -> dict | None:
    """The ``sets`` of one mode pooled: unchanged reruns failed per baseline size, the load
    line, a lone change found at one baseline session; None when no set says that mode."""
    sets = [r for r in sets if r.get("mode") == mode]
    if not sets:
        return None
    sizes: dict[str, list[dict]] = {}
    for r in sets:
        for k, res in r["by_baseline_sessions"].items():
            if res.get("confirmed"):
                sizes.setdefault(str(k), []).append(res["confirmed"])
    lone = [x for x in (lone_counts(c) for c in sizes.get("1", [])) if x is not None]
    return {"sets": len(sets), "sessions": sum(r["sessions"] for r in sets),
            "reruns": {k: _sum(cs, lambda c: c["aa"]["failed"], lambda c: c["pairs"])
                       for k, cs in sizes.items()},
            "load": _flagged([r["load_line"] for r in sets if r["load_line"]]),
            "lone": _found(lone)}


def pooled_mode(sets: list[dict], mode: str) -> list[str]:
    """The ``sets`` of one mode (``quick``, ``acceptance``) pooled, per baseline size: the
    modes run other cases (acceptance mode's NPB classes, its longer kernels), and a lone
    change is found in one and not the other, so each is given apart; nothing when no set
    says that mode."""
    m = mode_counts(sets, mode)
    if m is None:
        return []
    reruns = ", ".join(f"{k}: {v}" for k, v in m["reruns"].items())
    return [f"- {mode} mode alone ({_sets(m['sets'])}, {m['sessions']} "
            f"sessions): unchanged reruns, acceptance line failed per baseline size {reruns}; "
            f"load line {m['load']} unchanged sessions flagged; a lone value 40% slower "
            f"with tight launches {m['lone']} found of those without states"]


def _sets(n: int) -> str:
    return f"{n} set" if n == 1 else f"{n} sets"


def table(data: dict, every_set: bool = True) -> list[str]:
    """The verdict's figures per set: validation sets first, tuning sets labelled in-sample
    (``every_set`` false: the validation sets' rows alone and the tuning sets pooled in one
    row, their own rows in :data:`FULL`).

    Every count is sessions failed (with the confirmation session, as the acceptance run
    does) over sessions judged, per baseline size (``1: 0/6`` is one baseline session)."""
    head = ["| set | role | sessions | unchanged reruns: acceptance line failed | unchanged "
            "reruns: plain `reframe -r` failed, first session alone | node 2x slower: failed "
            "| lone +40%, launches "
            "within 2%, one baseline session: found | load line on unchanged / hog sessions |",
            "|---|---|---|---|---|---|---|---|"]
    sets = data["sets"]
    order = sorted(sets, key=lambda n: (sets[n]["role"] != "validation", n))
    shown = [n for n in order if every_set or sets[n]["role"] == "validation"]
    rows = [_row(name, sets[name]) for name in shown]
    rest = [sets[n] for n in order if n not in shown]
    if rest:
        rows.append(_pooled_row(rest))
    summary = _summary(_validation(data), "validation sets of a quiet node", True) + \
        _summary(_seen(data), "quiet sets recorded as validation sets and chosen on later, "
                              "IN-SAMPLE (the rules fitted to them)")
    fixed = f"Rules fixed {data['rules_fixed']}; plain ReFrame's bounds fixed " \
            f"{data.get('plain_fixed', data['rules_fixed'])}."
    elsewhere = [f"Each of the {_sets(len(rest))} the rules were chosen on has its row in "
                 "`benchmarks/results/regression_detection.md`.", ""] if rest else []
    return [BEGIN, fixed, ""] + head + rows + [""] + elsewhere + \
        summary + ["Goals, judged on the validation sets of a quiet node only:", ""] + \
        (goal_lines(data) or ["- no validation set yet"]) + [END]


def _row(name: str, r: dict) -> str:
    """One set's row of :func:`table`."""
    return (f"| `{name}`: {r['what']} | {ROLE.get(r['role'], r['role'])}"
            f"{NODE.get(r.get('node', 'quiet'), '') if r['role'] == 'validation' else ''} | "
            f"{_sessions(r)} | "
            + _by_size(r, lambda c: f"{c['aa']['failed']}/{c['pairs']}") + " | "
            + _plain_cell(r) + " | "
            + _by_size(r, lambda c: f"{c['all_at_once']['2.00']['failed']}/{c['pairs']}")
            + f" | {_lone(r)} | {_load(r['load_line'])} / {_hog_load(r)} |")


def _pooled_row(sets: list[dict]) -> str:
    """The tuning sets in one row of :func:`table`, at one baseline session, in-sample."""
    quiet = [r for r in sets if r.get("node", "quiet") == "quiet"]
    n = pooled_counts(quiet)
    return (f"| the {_sets(len(sets))} the rules were chosen on, pooled (quiet ones: "
            f"{len(quiet)}) | {ROLE['tuning']} | {sum(r['sessions'] for r in quiet)} | "
            f"1: {n['failed']} | 1: {n['plain_first']} | 1: {n['node_2x']} | "
            f"{n['lone']} without states (all values: {n['lone_all']}) | "
            f"{n['load']} / {n['hog']} |")


def goal_lines(data: dict) -> list[str]:
    """The goals: each set's met goals counted on one line, a missed goal in full."""
    per_set: dict[str, list[dict]] = {}
    out = []
    for g in data["goals"]:
        name = g["goal"].split(":", 1)[0]
        if name in data["sets"]:
            per_set.setdefault(name, []).append(g)
        else:
            out.append(f"- {'met' if g['met'] else 'MISSED'}: {g['goal']}")
    for name, goals in per_set.items():
        missed = [g for g in goals if not g["met"]]
        out.append(f"- `{name}`: {len(goals) - len(missed)} of {len(goals)} goals met "
                   "(unchanged reruns, a node 2x slower at each baseline size, the load line)")
        out += [f"  - MISSED: {g['goal']}" for g in missed]
    return sorted(out, key=lambda line: not line.startswith("- `"))


def machine(names: list[str]) -> str:
    """The machine the sets ``names`` were recorded on, from their ``set.yaml``."""
    kinds = set()
    for name in names:
        meta = yaml.safe_load((VALIDATION_DIR / name / "set.yaml").read_text())
        host = "virtual machine" if meta.get("host") == "vm" else str(meta.get("host"))
        kinds.add(f"a {meta.get('cpus')}-CPU {host}")
    return ", ".join(sorted(kinds))


def summary(data: dict) -> list[str]:
    """The README's few lines: the validation sets pooled at one baseline session."""
    names = [n for n, r in data["sets"].items()
             if r["role"] == "validation" and r.get("node", "quiet") == "quiet"]
    sets = _validation(data)
    if not sets:
        return [BEGIN, "No validation set has been recorded on today's rules yet.", END]
    n = pooled_counts(sets)
    met = sum(g["met"] for g in data["goals"])
    return [BEGIN,
            f"On {_sets(len(sets))} of validation sessions ({sum(r['sessions'] for r in sets)} "
            f"sessions, recorded after the rules were fixed, on {machine(names)}), from one "
            "baseline session:",
            "",
            f"- unchanged reruns failing the acceptance line: {n['failed']}",
            f"- a node twice as slow failing it: {n['node_2x']}",
            f"- a lone value 40% slower with tight launches, found: {n['lone']} of those a "
            f"rule may call ({n['lone_all']} over all values)",
            f"- the load line: {n['load']} quiet sessions flagged, {n['hog']} beside busy "
            "loops",
            f"- the verdict benchmark's goals met: {met} of {len(data['goals'])}",
            END]


def full_page(data: dict) -> str:
    """:data:`FULL`: every set's row, then each set's own tables and targets, generated."""
    out = ["# The verdict's figures, every set", "",
           "Generated by `python benchmarks/figures.py --write` from "
           "`regression_detection.json`; the validation sets' figures are in "
           "`docs/reference/benchmarks.md`.", ""] + table(data, True)
    for name, r in data["sets"].items():
        out += ["", f"## `{name}` ({ROLE.get(r['role'], r['role'])})", "", r["what"], ""]
        out += r.get("report", []) + ["", "Targets (informational; no exit status depends "
                                          "on them):", ""]
        out += [f"    {t}" for t in r.get("targets", [])]
    return "\n".join(out) + "\n"


def _plain_cell(r: dict) -> str:
    """Plain ``reframe -r``'s failed reruns on the first session alone, per baseline size;
    labelled in-sample on a validation set its bounds were chosen on."""
    cell = _by_size(r, lambda c: f"{c['aa']['plain_first_failed']}/{c['pairs']}")
    return f"in-sample (VIRTUAL_CACHE_PLAIN chosen on it): {cell}" if _plain_seen([r]) else cell


def _summary(sets: list[dict], what: str, split: bool = False) -> list[str]:
    """The pooled lines of ``sets``, headed by what they are; nothing when there are none
    (``split``: plain ``reframe -r`` out of sample apart)."""
    if not sets:
        return []
    return [f"The {len(sets)} {what} pooled, one baseline session (each session judged once "
            "as the rerun; with the confirmation session, the last of each set has none and "
            "is left out):", ""] + pooled(sets, split) + pooled_mode(sets, "quick") + \
        pooled_mode(sets, "acceptance") + [""]


def rendered(page: str, block: list[str]) -> str:
    """``page`` with its marked block replaced by ``block``."""
    a, b = page.index(BEGIN), page.index(END) + len(END)
    return page[:a] + "\n".join(block) + page[b:]


#: each page and the renderer of its marked block
PAGES = {README: summary, REFERENCE: lambda data: table(data, False)}


def _write(path: Path, text: str) -> None:
    atomic.write_text(path, text)      # an exclusive temp beside it, renamed over it
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true",
                    help="rewrite the pages' marked blocks and the full table")
    args = ap.parse_args(argv)
    data = json.loads(RESULTS.read_text())
    if not args.write:
        print(full_page(data))
        return 0
    for page, render in PAGES.items():
        text = page.read_text()
        if BEGIN not in text or END not in text:
            print(f"{page}: no {BEGIN} ... {END} block", file=sys.stderr)
            return 2
        _write(page, rendered(text, render(data)))
    _write(FULL, full_page(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
