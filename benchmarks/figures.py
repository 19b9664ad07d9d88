"""The verdict's figures as the README and ``docs/reference/benchmarks.md`` print them, drawn
from the committed ``benchmarks/results/regression_detection.json`` alone, so that the
pages cannot drift from what the benchmark measured.

    python benchmarks/figures.py            # print the table
    python benchmarks/figures.py --write    # rewrite the marked blocks of both pages

``tests/test_rules.py`` holds the pages to this rendering, and the sentences of the README's
and the limits page's prose that restate a pooled figure to :func:`quoted`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "regression_detection.json"
README, REFERENCE = ROOT / "README.md", ROOT / "docs" / "reference" / "benchmarks.md"
#: each page and whether it prints every set's row (the reference page) or the validation
#: sets' alone, the tuning sets pooled (the README: a site reads what it can expect first)
PAGES = {README: False, REFERENCE: True}
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
    ``x of n``: what the pooled lines print and the README's prose quotes (:func:`quoted`).
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
           f"first session alone (ReFrame confirms nothing), {n['plain']} with the "
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


#: how the prose names a count of sets
WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def _word(n: int) -> str:
    """``n`` in words as the prose writes it (twenty-two), digits from 100."""
    if n < len(WORDS):
        return WORDS[n]
    if n >= 100:
        return str(n)
    tens, ones = divmod(n, 10)
    return TENS[tens] + (f"-{WORDS[ones]}" if ones else "")


def quoted(data: dict, in_sample: bool = False) -> dict[str, str]:
    """The validation sets' pooled figures as the README's and limits page's prose quote
    them (``tests/test_rules.py`` holds the prose to these), or with ``in_sample`` those of
    the sets chosen on later: the counts of :func:`pooled_counts`, each mode's lone-change
    count and quick mode's unchanged reruns at ten baseline sessions, the share over all
    values, and the number of sets in words."""
    sets = _seen(data) if in_sample else _validation(data)
    out = pooled_counts(sets)
    if not in_sample:   # plain ReFrame's figures from the sets out of sample for its bounds
        kept = _plain_out_of_sample(sets)
        out.update(plain_counts(kept), plain_sets=_word(len(kept)))
    quick, acc = mode_counts(sets, "quick"), mode_counts(sets, "acceptance")
    found, n = (int(x) for x in out["lone_all"].split(" of "))
    out.update(sets=_word(len(sets)), lone_all_pct=f"{100 * found / max(n, 1):.1f}%",
               lone_quick=quick["lone"] if quick else "-",
               lone_acceptance=acc["lone"] if acc else "-",
               quick_10=quick["reruns"].get("10", "-") if quick else "-")
    return out


def _sets(n: int) -> str:
    return f"{n} set" if n == 1 else f"{n} sets"


def table(data: dict, every_set: bool = True) -> list[str]:
    """The verdict's figures per set: validation sets first, tuning sets labelled in-sample
    (``every_set`` false: the validation sets' rows alone, the tuning sets named by count and
    pooled below, their rows on the reference page).

    Every count is sessions failed (with the confirmation session, as the acceptance run
    does) over sessions judged, per baseline size (``1: 0/6`` is one baseline session)."""
    head = ["| set | role | sessions | unchanged reruns: acceptance line failed | unchanged "
            "reruns: plain `reframe -r` failed, first session alone | node 2x slower: failed "
            "| lone +40%, launches "
            "within 2%, one baseline session: found | load line on unchanged / hog sessions |",
            "|---|---|---|---|---|---|---|---|"]
    rows = []
    sets = data["sets"]
    order = sorted(sets, key=lambda n: (sets[n]["role"] != "validation", n))
    shown = [n for n in order if every_set or sets[n]["role"] == "validation"]
    for name in shown:
        r = sets[name]
        rows.append(
            f"| `{name}`: {r['what']} | {ROLE.get(r['role'], r['role'])}"
            f"{NODE.get(r.get('node', 'quiet'), '') if r['role'] == 'validation' else ''} | "
            f"{_sessions(r)} | "
            + _by_size(r, lambda c: f"{c['aa']['failed']}/{c['pairs']}") + " | "
            + _plain_cell(r) + " | "
            + _by_size(r, lambda c: f"{c['all_at_once']['2.00']['failed']}/{c['pairs']}")
            + f" | {_lone(r)} | {_load(r['load_line'])} / {_hog_load(r)} |")
    goals = [f"- {'met' if g['met'] else 'MISSED'}: {g['goal']}" for g in data["goals"]]
    summary = _summary(_validation(data), "validation sets of a quiet node", True) + \
        _summary(_seen(data), "quiet sets recorded as validation sets and chosen on later, "
                              "IN-SAMPLE (the rules fitted to them)")
    fixed = f"Rules fixed {data['rules_fixed']}; plain ReFrame's bounds fixed " \
            f"{data.get('plain_fixed', data['rules_fixed'])}."
    rest = len(order) - len(shown)
    elsewhere = [f"The {_sets(rest)} the rules were chosen on (in-sample) are pooled below; "
                 "their rows are in docs/reference/benchmarks.md.", ""] if rest else []
    return [BEGIN, fixed, ""] + head + rows + [""] + elsewhere + \
        summary + ["Goals, judged on the validation sets of a quiet node only:", ""] + \
        (goals or ["- no validation set yet"]) + [END]


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the pages' marked blocks")
    args = ap.parse_args(argv)
    data = json.loads(RESULTS.read_text())
    if not args.write:
        print("\n".join(table(data)))
        return 0
    for page, every_set in PAGES.items():
        block = table(data, every_set)
        text = page.read_text()
        if BEGIN not in text or END not in text:
            print(f"{page}: no {BEGIN} ... {END} block", file=sys.stderr)
            return 2
        tmp = page.with_suffix(".tmp")
        tmp.write_text(rendered(text, block))
        os.replace(tmp, page)
        print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
