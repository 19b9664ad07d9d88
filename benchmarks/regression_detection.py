"""False alarms and power of the verdict and of plain ``reframe -r``, on real sessions.

    python benchmarks/regression_detection.py [RUN_REPORT ...] [--hog RUN_REPORT ...]

Input: ReFrame run reports of separate sessions of the same selection on the
same machine, each case launched several times inside its job (recorded by
``benchmarks/aa_sessions.sh``); by default the stripped copies in
``tests/fixtures/aa-sessions-2h/`` (20 sessions of a quiet node spread over two
hours, each started when the node was quiet) and its ``hog/``;
``tests/fixtures/aa-sessions-spread/`` holds the same machine shared with other
work. ``--hog`` adds sessions recorded with busy loops on every core.
``--strip SRC... --out DIR`` writes stripped copies.

Each value is what a site gets with the default ``launches=3``: the first
``--launches`` launches of each session, for the baseline's sessions and the
new one alike. Per baseline size ``K`` (1, 2, 3, 5, 10 sessions), every session
is judged against a baseline of the ``K`` sessions after it (cyclically):

* **A/A**: sessions with an acceptance FAIL (a value regressed or the node
  flagged slower), and values called regressed; for plain ``reframe -r``,
  sessions with any value outside the one-sided bound ``record`` writes
  (:func:`placement.judgement.verdict.reference_bound`) and such values;
* **lone power**: one value at a time made worse by 10, 25 and 100 % (times
  multiplied, rates divided), the others untouched: found (regressed) per class
  of the value's session-to-session CV (the CV of its session medians over all
  sessions), and by plain ReFrame;
* **all at once**: every value made worse together (a slower node): sessions
  failed, node flagged, share of values regressed;
* **CPU hog**: each ``--hog`` session against the baselines of ``K`` A/A sessions.

``--estimator mle`` fits the session-spread prior by maximum likelihood instead of
limma's moments (:func:`placement.judgement.moderation.fit_f_dist_mle`), to compare
the two on the same sessions; its figures go to ``regression_detection-mle.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from placement.judgement import moderation, runreport, verdict  # noqa: E402
from placement.judgement.baseline_samples import higher_is_better  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "aa-sessions-2h"
SIZES = (1, 2, 3, 5, 10)
FACTORS = (1.10, 1.25, 2.0)
LAUNCHES = 3
COARSE = "coarse"
CV_CLASSES = ((0.0, 0.02, "CV <= 2%"), (0.02, 0.05, "2-5%"), (0.05, 0.20, "5-20%"),
              (0.20, float("inf"), "> 20%"))

#: keys of a test case the verdict and the reports' loader read
_KEEP = ("name", "unique_name", "hashcode", "display_name", "system", "partition", "environ",
         "result", "fail_phase", "fixture", "perfvalues", "reference_index", "perf_launches")


def strip(sources: list[Path], out: Path) -> None:
    """Copies of run reports with only the session header and what each case needs."""
    out.mkdir(parents=True, exist_ok=True)
    for src in sources:
        opener = gzip.open if src.read_bytes()[:2] == b"\x1f\x8b" else open
        with opener(src, "rt") as fp:
            data = json.load(fp)
        session = {k: data["session_info"].get(k) for k in
                   ("uuid", "hostname", "time_start", "time_end", "version", "cmdline")}
        runs = []
        for run in data["runs"]:
            cases = []
            for tc in run["testcases"]:
                if tc.get("fixture"):
                    continue
                keep = {k: tc[k] for k in _KEEP if k in tc}
                keep.update({k: tc[k] for k in (tc.get("reference_index") or [])
                             if k in tc and not k.startswith("$")})
                keep.update({k: tc[k] for k in runreport.KNOWN_PARAMS if k in tc})
                cases.append(keep)
            runs.append({"testcases": cases})
        name = f"run-{session['time_start']}.json"
        (out / name).write_text(json.dumps({"session_info": session, "runs": runs},
                                           separators=(",", ":")) + "\n")
        print(out / name)


Key = tuple  # (case key, var)
Session = dict  # Key -> (launch values, higher is better)


def sessions(paths: list[Path]) -> list[Session]:
    """Per session, oldest first: ``{(case, var): (launch values, higher is better)}``."""
    reports = sorted((runreport.load(p) for p in paths),
                     key=lambda r: r.session.get("time_start", ""))
    out = []
    for r in reports:
        vals = {}
        for c in r.cases:
            for var in c.primary_vars():
                pv = c.perf[var]
                better = higher_is_better(var, pv.unit)
                runs = [x for x in c.launches.get(var, []) if x > 0]
                if better is not None and runs:
                    vals[(c.key, var)] = (runs, better)
        out.append(vals)
    return out


def _worse(runs: list[float], f: float, better: bool) -> list[float]:
    return [x / f if better else x * f for x in runs]


def cv_classes(data: list[Session], launches: int) -> dict[Key, str]:
    """Each value's class: the CV of its session medians over all sessions, or coarse."""
    out = {}
    for k in set.intersection(*(set(d) for d in data)):
        runs = [d[k][0][:launches] for d in data]
        flat = [x for r in runs for x in r]
        if verdict.resolution(flat) >= verdict.MIN_EFFECT * statistics.median(flat):
            out[k] = COARSE
            continue
        meds = [statistics.median(r) for r in runs]
        cv = statistics.stdev(meds) / statistics.mean(meds)
        out[k] = next(c[2] for c in CV_CLASSES if c[0] <= cv < c[1])
    return out


class Pair:
    """A new session against a baseline of sessions: the verdict and the plain bounds."""

    def __init__(self, new: Session, base: list[Session], keys: list[Key], launches: int):
        self.keys, self.launches = keys, launches
        self.base = {k: [b[k][0][:launches] for b in base] for k in keys}
        self.better = {k: new[k][1] for k in keys}
        self.new = {k: new[k][0][:launches] for k in keys}
        prior = verdict.file_prior(list(self.base.values()))
        self.bounds = {k: verdict.reference_bound(self.base[k], self.better[k], prior,
                                                  len(keys), launches) for k in keys}
        for k in verdict.state_prone(self.base, _family):     # no bound, as `record`
            self.bounds[k] = (self.bounds[k][0], None)

    def judge(self, changed: dict[Key, list[float]] | None = None) -> verdict.RunVerdict:
        changed = changed or {}
        return verdict.judge_run([verdict.Series(changed.get(k, self.new[k]),
                                                 [(str(j), r) for j, r in
                                                  enumerate(self.base[k])],
                                                 self.better[k], k) for k in self.keys])

    def plain_fails(self, k: Key, runs: list[float]) -> bool:
        """What ReFrame does with the reference ``record`` writes: the median of the
        launches against the one-sided bound (an improvement never fails)."""
        centre, bound = self.bounds[k]
        if bound is None:   # its or a sibling's launches wider than the cap: no bound
            return False
        m = statistics.median(runs)
        return m < centre * (1 - bound) if self.better[k] else m > centre * (1 + bound)


def _family(key: Key) -> tuple:
    """A value's siblings share this: its test, variable and parameters but the placement's."""
    (test, params, *_), var = key
    return test, var, tuple(p for p in params if p[0] not in verdict.SIBLING_PARAMS)


def _pairs(data: list[Session], k: int, launches: int, news: list[Session] | None = None
           ) -> list[Pair]:
    n = len(data)
    out = []
    for i, new in enumerate(news if news is not None else data):
        start = i if news is None else n - k - 1   # hog: the last K A/A sessions
        base = [data[(start + m) % n] for m in range(1, k + 1)]
        keys = sorted(key for key in new if all(key in b for b in base))
        if keys:
            out.append(Pair(new, base, keys, launches))
    return out


def _failed(rv: verdict.RunVerdict) -> bool:
    return (any(v.outcome == verdict.REGRESSED for v in rv.verdicts)
            or bool(rv.node and rv.node.flagged and rv.node.slower))


def evaluate(data: list[Session], k: int, launches: int, classes: dict[Key, str],
             hog: list[Session], lone_per_pair: int, seed: int = 0) -> dict:
    """Every figure of one baseline size."""
    pairs = _pairs(data, k, launches)
    res: dict = {"pairs": len(pairs), "values": 0}
    aa_fail = aa_vals = plain_sessions = plain_vals = either = 0
    for p in pairs:
        rv = p.judge()
        aa_fail += _failed(rv)
        aa_vals += sum(v.outcome == verdict.REGRESSED for v in rv.verdicts)
        fails = [p.plain_fails(key, p.new[key]) for key in p.keys]
        plain_sessions += any(fails)
        plain_vals += sum(fails)
        either += _failed(rv) or any(fails)
        res["values"] += len(p.keys)
    # the acceptance line fails on either: no verdict turns ReFrame's failure into a pass
    res["aa"] = {"sessions_failed": aa_fail, "values_regressed": aa_vals,
                 "plain_sessions_failed": plain_sessions, "plain_values_failed": plain_vals,
                 "acceptance_failed": either}
    rng = np.random.default_rng(seed)
    lone: dict = {}
    for f in FACTORS:
        for p in pairs:
            picks = rng.permutation(len(p.keys))[:lone_per_pair]
            for i in picks:
                key = p.keys[i]
                runs = _worse(p.new[key], f, p.better[key])
                rv = p.judge({key: runs})
                row = lone.setdefault(f"{f:.2f}", {}).setdefault(
                    classes.get(key, "?"), {"n": 0, "verdict": 0, "plain": 0, "either": 0})
                row["n"] += 1
                found = rv.verdicts[i].outcome == verdict.REGRESSED
                plain = p.plain_fails(key, runs)
                row["verdict"] += found
                row["plain"] += plain
                row["either"] += found or plain
    res["lone"] = lone
    together: dict = {}
    for f in FACTORS:
        row = {"sessions_failed": 0, "node_flagged": 0, "regressed_share": [],
               "plain_sessions_failed": 0, "plain_share": []}
        for p in pairs:
            changed = {key: _worse(p.new[key], f, p.better[key]) for key in p.keys}
            rv = p.judge(changed)
            row["sessions_failed"] += _failed(rv)
            row["node_flagged"] += bool(rv.node and rv.node.flagged)
            row["regressed_share"].append(
                statistics.mean(v.outcome == verdict.REGRESSED for v in rv.verdicts))
            fails = [p.plain_fails(key, changed[key]) for key in p.keys]
            row["plain_sessions_failed"] += any(fails)
            row["plain_share"].append(statistics.mean(fails))
        row["regressed_share"] = statistics.mean(row["regressed_share"])
        row["plain_share"] = statistics.mean(row["plain_share"])
        together[f"{f:.2f}"] = row
    res["all_at_once"] = together
    if hog:
        row = {"sessions": 0, "failed": 0, "node_flagged": 0, "regressed_share": [],
               "plain_failed": 0, "plain_share": [], "node_lines": []}
        for p in _pairs(data, k, launches, hog):
            rv = p.judge()
            row["sessions"] += 1
            row["failed"] += _failed(rv)
            row["node_flagged"] += bool(rv.node and rv.node.flagged)
            if rv.node is not None:
                row["node_lines"].append(rv.node.text())
            row["regressed_share"].append(
                statistics.mean(v.outcome == verdict.REGRESSED for v in rv.verdicts))
            fails = [p.plain_fails(key, p.new[key]) for key in p.keys]
            row["plain_failed"] += any(fails)
            row["plain_share"].append(statistics.mean(fails))
        row["regressed_share"] = statistics.mean(row["regressed_share"] or [0])
        row["plain_share"] = statistics.mean(row["plain_share"] or [0])
        res["hog"] = row
    return res


def _pct(a: float, b: float) -> str:
    return f"{a / b:.0%}" if b else "-"


def report(results: dict[int, dict], classes: dict[Key, str], n_sessions: int,
           hours: float) -> list[str]:
    """The README's tables."""
    counts: dict[str, int] = {}
    for c in classes.values():
        counts[c] = counts.get(c, 0) + 1
    order = [c[2] for c in CV_CLASSES] + [COARSE]
    out = [f"{n_sessions} A/A sessions over {hours:.1f} h, {len(classes)} values each, "
           f"{LAUNCHES} launches per session; values per class of session-to-session CV: "
           + ", ".join(f"{c} {counts[c]}" for c in order if c in counts), "",
           "A/A (nothing changed): sessions that FAIL / values called regressed",
           "",
           "| baseline sessions | verdict: sessions failed | values regressed | "
           "plain `reframe -r`: sessions failed | values failed | acceptance (either): "
           "sessions failed |",
           "|---|---|---|---|---|---|"]
    for k, r in results.items():
        a = r["aa"]
        out.append(f"| {k} | {a['sessions_failed']}/{r['pairs']} | "
                   f"{a['values_regressed']}/{r['values']} | {a['plain_sessions_failed']}/"
                   f"{r['pairs']} | {a['plain_values_failed']}/{r['values']} | "
                   f"{a['acceptance_failed']}/{r['pairs']} |")
    out += ["", "Lone value made worse (the others untouched): found by the verdict / by "
            "plain `reframe -r` / by the acceptance line (either), per class of the value's "
            "session-to-session CV", "",
            "| baseline sessions | slowdown | " + " | ".join(c for c in order if c in counts)
            + " |", "|---|---|" + "---|" * sum(c in counts for c in order)]
    for k, r in results.items():
        for f, by in r["lone"].items():
            cells = []
            for c in order:
                if c not in counts:
                    continue
                row = by.get(c)
                cells.append(f"{_pct(row['verdict'], row['n'])} / {_pct(row['plain'], row['n'])}"
                             f" / {_pct(row['either'], row['n'])} (n={row['n']})" if row else "-")
            out.append(f"| {k} | {float(f) - 1:+.0%} | " + " | ".join(cells) + " |")
    out += ["", "Every value made worse at once (a slower node): sessions failed, node "
            "flagged, share of values regressed; plain `reframe -r`: sessions failed, share "
            "of values failed", "",
            "| baseline sessions | slowdown | sessions failed | node flagged | "
            "values regressed | plain: sessions failed | plain: values failed |",
            "|---|---|---|---|---|---|---|"]
    for k, r in results.items():
        for f, row in r["all_at_once"].items():
            out.append(f"| {k} | {float(f) - 1:+.0%} | {row['sessions_failed']}/{r['pairs']} | "
                       f"{row['node_flagged']}/{r['pairs']} | {row['regressed_share']:.0%} | "
                       f"{row['plain_sessions_failed']}/{r['pairs']} | "
                       f"{row['plain_share']:.0%} |")
    if any("hog" in r for r in results.values()):
        out += ["", "CPU hog (2 busy loops per core while the session ran)", "",
                "| baseline sessions | sessions failed | node flagged | values regressed | "
                "plain: sessions failed | plain: values failed | node line (first) |",
                "|---|---|---|---|---|---|---|"]
        for k, r in results.items():
            h = r.get("hog")
            if h:
                line = h["node_lines"][0] if h["node_lines"] else ""
                out.append(f"| {k} | {h['failed']}/{h['sessions']} | {h['node_flagged']}/"
                           f"{h['sessions']} | {h['regressed_share']:.0%} | {h['plain_failed']}/"
                           f"{h['sessions']} | {h['plain_share']:.0%} | {line} |")
    return out


def targets(results: dict[int, dict]) -> list[str]:
    """The goals, each met or missed, with the number."""
    lines = []
    for k, r in results.items():
        a = r["aa"]
        quiet = a["acceptance_failed"] <= r["pairs"] / 20 and \
            a["plain_sessions_failed"] <= r["pairs"] / 20
        lines.append(f"A/A at {k} session(s): acceptance {r['pairs'] - a['acceptance_failed']}/"
                     f"{r['pairs']} pass, plain {r['pairs'] - a['plain_sessions_failed']}/"
                     f"{r['pairs']} pass: {'met' if quiet else 'MISSED'} (19 of 20)")
        h = r.get("hog")
        if h:
            ok = h["failed"] == h["sessions"] and h["node_flagged"] == h["sessions"] and \
                h["regressed_share"] >= 0.5
            lines.append(f"CPU hog at {k}: {h['failed']}/{h['sessions']} failed, node flagged "
                         f"{h['node_flagged']}/{h['sessions']}, {h['regressed_share']:.0%} "
                         f"regressed: {'met' if ok else 'MISSED'}")
        lone = r["lone"]
        tight = [lone["1.25"].get(c) for c in ("CV <= 2%", "2-5%")]
        n = sum(t["n"] for t in tight if t)
        found = sum(t["either"] for t in tight if t)
        if k >= 3 and n:
            lines.append(f"lone +25% at CV <= 5%, {k} sessions: {found}/{n} found: "
                         f"{'met' if found >= 0.9 * n else 'MISSED'} (90%)")
        big = lone["2.00"]
        n2 = sum(x["n"] for x in big.values())
        f2 = sum(x["either"] for x in big.values())
        lines.append(f"lone 2x, {k} session(s): {f2}/{n2} found ({_pct(f2, n2)})")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*", type=Path)
    ap.add_argument("--hog", nargs="*", type=Path, default=None,
                    help="sessions recorded under a CPU hog (default: the fixture's hog-*.json)")
    ap.add_argument("--strip", nargs="+", type=Path, help="run reports to copy, stripped")
    ap.add_argument("--out", type=Path, default=FIXTURES)
    ap.add_argument("--launches", type=int, default=LAUNCHES,
                    help=f"launches per session taken from each (default {LAUNCHES})")
    ap.add_argument("--lone", type=int, default=12,
                    help="values made worse alone per session pair (default 12)")
    ap.add_argument("--estimator", choices=("moments", "mle"), default=moderation.ESTIMATOR,
                    help="how the session-spread prior is fitted (default "
                         f"{moderation.ESTIMATOR}; mle: maximum likelihood, for comparison: "
                         "its results go to regression_detection-mle.json)")
    args = ap.parse_args(argv)
    moderation.ESTIMATOR = args.estimator
    if args.strip:
        strip(args.strip, args.out)
        return 0
    paths = args.reports or sorted(FIXTURES.glob("run-*.json"))
    hog_paths = args.hog if args.hog is not None else sorted(FIXTURES.glob("hog/run-*.json"))
    data = sessions(paths)
    if len(data) < 3:
        print(f"need at least 3 sessions, got {len(data)}", file=sys.stderr)
        return 2
    hog = sessions(hog_paths) if hog_paths else []
    starts = sorted(runreport.load(p).session.get("time_start", "") for p in paths)
    hours = _hours(starts[0], starts[-1])
    classes = cv_classes(data, args.launches)
    results = {k: evaluate(data, k, args.launches, classes, hog, args.lone)
               for k in SIZES if k < len(data)}
    lines = report(results, classes, len(data), hours)
    print("\n".join(lines))
    print()
    goals = targets(results)
    print("\n".join(goals))
    suffix = "" if args.estimator == "moments" else f"-{args.estimator}"
    out = ROOT / "benchmarks" / "results" / f"regression_detection{suffix}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"sessions": len(data), "hours": hours, "launches": args.launches,
                               "by_baseline_sessions": results, "targets": goals},
                              indent=1, default=str) + "\n")
    return 0


def _hours(a: str, b: str) -> float:
    from datetime import datetime
    fmt = "%Y%m%dT%H%M%S%z"
    try:
        return (datetime.strptime(b, fmt) - datetime.strptime(a, fmt)).total_seconds() / 3600
    except ValueError:
        return math.nan


if __name__ == "__main__":
    sys.exit(main())
