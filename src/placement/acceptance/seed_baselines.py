"""Write the studies' NPB results as ReFrame reference files.

``python -m placement.acceptance.seed_baselines`` writes them; ``--check`` says which are stale.

The Bulldozer study (Tables 1-2: classes A and C, 1-64 threads, none vs scatter)
and the Xeon E5620 study (class B, 1-8 threads, none/compact/scatter) are the
baselines of the systems ``bulldozer`` and ``xeon-e5620``. Their transcriptions
(``seed-data/*_npb33_omp.csv``) become ``config/baselines/<system>.yaml``, in
ReFrame 4.10's external reference format: top-level key = the check class,
``$index`` = its ``reference_index``, leaves ``[value, lower, upper, unit]``.

Both studies timed whole processes with time(1), so their numbers are
references for the ``wall`` performance variable, not for NPB's own ``time``.
Thresholds are twice each study's bound on the per-run standard deviation:
our value is a mean of five runs compared with theirs, so two per-run standard
deviations leave room for both means' spread without hiding a placement effect
(the effects the studies report are 10-80%).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from ..util import atomic

#: What the studies ran: the default (first-touch) policy.
POLICY = "first-touch"

#: system -> (csv file, per-run stddev bound, which check classes carry which classes)
STUDIES = {
    "bulldozer": {
        "csv": "bulldozer_npb33_omp.csv",
        "source": "seeds/000_f059b2fbbca45a67.txt, Tables 1 and 2 (NPB 3.3-OMP, gfortran 6.1, "
                  "4x Opteron 6272, Grid Engine exclusive node)",
        "stddev": 0.05,
        "stddev_text": "at least 5 runs each, until the standard deviation was under 5%",
        "checks": {"NpbAcceptanceCheck": ["A"], "NpbFullCheck": ["A", "C"]},
        "maps": "scatter = GOMP_CPU_AFFINITY of footnote 1 = config/maps/bulldozer.map = the "
                "computed scatter on topologies/bulldozer.xml",
    },
    "xeon-e5620": {
        "csv": "xeon_e5620_npb33_omp.csv",
        "source": "seeds/002_0040662df8c96710.txt, Tables 1 and 2 (NPB 3.3-OMP, gfortran 4.4.7, "
                  "2x Xeon E5620, HT off, exclusive node)",
        "stddev": 0.019,
        "stddev_text": "mean of 5 runs, standard deviation under 1.9%",
        "checks": {"NpbAcceptanceCheck": ["B"]},
        "maps": "compact = GOMP_CPU_AFFINITY=0-7, scatter = GOMP_CPU_AFFINITY='0 4 1 5 2 6 3 7': "
                "both equal the computed maps on topologies/xeon-e5620.xml",
    },
}


def default_seed_dir() -> Path:
    """``$PLACEMENT_SEED_DATA``, else the checkout's copy, else ``shared/seed-data`` beside it."""
    from ..util import repo_root  # ReFrame-free module
    env = os.environ.get("PLACEMENT_SEED_DATA")
    if env:
        return Path(env)
    copy = repo_root() / "tests" / "fixtures" / "seed-data"
    return copy if copy.is_dir() else repo_root().parent / "shared" / "seed-data"


def read_rows(path: Path) -> list[dict[str, str]]:
    """CSV rows, ``#`` comment lines skipped."""
    with open(path, newline="") as fp:
        return list(csv.DictReader(line for line in fp if not line.startswith("#")))


def build(system: str, seed_dir: Path) -> dict:
    """The reference file's content for one system."""
    study = STUDIES[system]
    thres = round(2 * study["stddev"], 4)
    tables: dict[str, dict] = {}
    for row in read_rows(seed_dir / study["csv"]):
        leaf = {"wall": [float(row["time_s"]), -thres, thres, "s"]}
        node = tables.setdefault(row["class"], {}).setdefault(row["benchmark"], {})
        node.setdefault(int(row["threads"]), {})[row["affinity"]] = {POLICY: leaf}
    out: dict = {
        "_provenance": {
            "source": study["source"],
            "data": f"seed-data/{study['csv']}",
            "measure": "mean wall time of the whole process (time(1)), seconds: "
                       "compared with the `wall` performance variable",
            "spread": study["stddev_text"],
            "thresholds": f"+/-{thres:.1%}: twice the study's per-run standard deviation bound",
            "maps": study["maps"],
            "policy": "the studies ran with the default (first-touch) policy",
            "generator": "python -m placement.acceptance.seed_baselines (do not edit by hand)",
        },
    }
    from ..testlib import npb  # the index the NPB checks look their references up by
    for check, classes in study["checks"].items():
        entry: dict = {"$index": list(npb.NpbBase.reference_index)}
        for cls in classes:
            for bench, by_threads in tables.get(cls, {}).items():
                entry.setdefault(bench, {})[cls] = by_threads
        out[check] = entry
    return out


class _Dumper(yaml.SafeDumper):
    """Reference tuples and ``$index`` on one line, as ReFrame's documentation writes them;
    a table shared by two checks written out each time (the reader refuses YAML aliases,
    :mod:`placement.util.safe_yaml`)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _list(dumper: yaml.SafeDumper, data: list):
    flow = all(not isinstance(v, (list, dict)) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _list)


def render(system: str, seed_dir: Path) -> str:
    """YAML text, each check's tables written out (no anchors or aliases)."""
    head = (f"# ReFrame reference file for the system {system!r} (ReFrame 4.10 `$ref`).\n"
            "# Generated by `python -m placement.acceptance.seed_baselines`; see _provenance.\n")
    return head + yaml.dump(build(system, seed_dir), Dumper=_Dumper, sort_keys=False, width=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-data", type=Path, default=None,
                        help="folder with the studies' CSVs (default: ../shared/seed-data)")
    parser.add_argument("--output", type=Path, default=None,
                        help="folder for <system>.yaml (default: config/baselines)")
    parser.add_argument("--check", action="store_true",
                        help="compare with the files on disk instead of writing; exit 1 if stale")
    args = parser.parse_args(argv)
    from ..util import baseline_dir
    seed_dir = args.seed_data or default_seed_dir()
    out_dir = args.output or baseline_dir()
    stale = 0
    for system in STUDIES:
        text = render(system, seed_dir)
        path = out_dir / f"{system}.yaml"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                print(f"{path} is out of date: run python -m placement.acceptance.seed_baselines")
                stale += 1
        else:
            atomic.write_text(path, text)      # a link there is replaced, never written through
            print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
