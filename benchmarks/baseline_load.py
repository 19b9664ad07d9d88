"""Loading a large baseline: seconds for 100k entries, under 2 GB.

A partition's baseline holds every node's values: 100k entries (about 30 MB with their
samples) is a site of a few hundred nodes. ``placement baseline diff``, ``record`` and
every acceptance run read the whole file through :func:`placement.judgement.baselines.store.load`
(YAML built from libyaml's events without anchors or aliases, then its checks). This
benchmark makes baselines of 1k, 10k and 100k entries in the shape ``record`` writes (an
interval leaf and its samples: 2 sessions of 2 launches), each twice: written by the tool's
writer (:func:`placement.judgement.baselines.store.write_atomic`, what ``record`` calls: it keeps
a checked copy beside the file, :mod:`placement.judgement.baselines.cache`) and written by
another program (a hand edit: no copy, its YAML parsed at each load; a file under 1 MB gets
no copy from either, ``baseline_cache.MIN_BYTES``). It loads each in a
fresh process, ``RUNS`` times, and reports the time (wall and CPU) and peak memory of a load
and of the write against the file's size. Loading writes nothing: the benchmark fails when a
load leaves a file behind.

Exits non-zero when 100k entries take more than ``TARGET_S`` seconds to load from the copy,
``PARSE_S`` from the YAML alone, or more than ``TARGET_MB``. The time targets are judged on
CPU seconds (the median load's user and system time): this 2-core host runs other work
beside it, which stretches wall time but not CPU time; wall time is reported beside.

The table on ``docs/reference/baseline-format.md`` is rendered from the results JSON
(``--page`` renders it again without measuring).

    .venv/bin/python benchmarks/baseline_load.py [--sizes 1000,10000,100000] [--page]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path


HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "baseline_load.json"
PAGE = HERE.parent / "docs" / "reference" / "baseline-format.md"
BEGIN, END = "<!-- baseline-load: benchmarks/baseline_load.py -->", "<!-- /baseline-load -->"
TARGET_S = 10.0     # "loads in seconds": a file its writer left a checked copy of
PARSE_S = 60.0      # a file edited by hand: its YAML parsed and checked at each load
TARGET_MB = 2048
RUNS = 3            # median of three loads per file

#: one timed step in a fresh interpreter: its wall and CPU seconds and peak MB on stdout
_TIMED = """import resource, sys, time
from pathlib import Path
from placement.judgement import baselines
{setup}
wall, cpu = time.perf_counter(), time.process_time()
{step}
print(time.perf_counter() - wall, time.process_time() - cpu,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def baseline(n: int) -> dict:
    """A reference file of ``n`` entries as ``placement baseline record`` shapes one."""
    from placement.judgement import baselines
    sessions = [str(uuid.UUID(int=s + 1)) for s in range(2)]
    refs, samples = {"$index": ["node", "case"]}, {"$index": ["node", "case"]}
    for i in range(n):
        node, case = f"nid{i // 100:05d}", f"c{i % 100:02d}"
        value = 100.0 + (i % 97) / 10
        refs.setdefault(node, {})[case] = {"rate": [value, -0.1, 0.1, "MB/s"]}
        samples.setdefault(node, {})[case] = {"rate": {"higher_is_better": True, "sessions": [
            {"session": s, "runs": [round(value + 0.1 * k + j, 3) for k in range(2)]}
            for j, s in enumerate(sessions)]}}
    data = {"_provenance": {"system": "bench", "run_session": sessions[-1]},
            "PartitionCase": refs, "_samples": {"PartitionCase": samples}}
    return baselines.contents.stamped(data, "bench.yaml")


def timed(step: str, path: Path, setup: str = "") -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak MB of ``step`` (``p``: ``path``) in a fresh
    interpreter."""
    code = _TIMED.format(setup=f"p = Path(sys.argv[1])\n{setup}", step=step)
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def loads(path: Path) -> tuple[float, float, float]:
    """The median load of ``path`` (wall, CPU by the median CPU time) and the peak MB of all;
    a load that leaves a file in the folder is an error."""
    before = sorted(os.listdir(path.parent))
    got = sorted((timed("baselines.load(p)", path) for _ in range(RUNS)), key=lambda r: r[1])
    if sorted(os.listdir(path.parent)) != before:
        raise SystemExit(f"a load of {path} wrote into its folder: "
                         f"{sorted(set(os.listdir(path.parent)) - set(before))}")
    wall, cpu, _ = got[RUNS // 2]
    return wall, cpu, max(mb for *_, mb in got)


def measure(n: int, tmp: Path) -> dict:
    """One size's row: the writer's file (write, then loads from its copy) and the hand
    edit's (loads of its YAML)."""
    from placement.judgement import baselines
    written, edited = tmp / "written" / "bench.yaml", tmp / "edited" / "bench.yaml"
    for path in (written, edited):
        path.parent.mkdir()
    data = tmp / "data.json"
    data.write_text(json.dumps(baseline(n)))
    write = timed("baselines.write_atomic(p, data)", written,
                  f"import json; data = json.loads(Path({str(data)!r}).read_text())")
    kept = baselines.cache.read(written, written.read_text()) is not None
    if kept != (written.stat().st_size >= baselines.cache.MIN_BYTES):
        raise SystemExit(f"{n} entries: the writer {'kept' if kept else 'left no'} checked copy")
    edited.write_text(written.read_text())      # the same text, no copy beside it
    copy, parsed = loads(written), loads(edited)
    return {"entries": n, "bytes": written.stat().st_size, "copy_kept": kept,
            "write_s": round(write[0], 2), "write_cpu_s": round(write[1], 2),
            "write_peak_mb": round(write[2]),
            "copy_s": round(copy[0], 2), "copy_cpu_s": round(copy[1], 2),
            "parsed_s": round(parsed[0], 2), "parsed_cpu_s": round(parsed[1], 2),
            "peak_mb": round(max(copy[2], parsed[2])), "runs": RUNS}


def page_block(result: dict) -> str:
    """The marked block of the baseline format page: the table of ``result`` (the JSON)."""
    t = result["target"]
    rows = [f"| {r['entries']:,} | {r['bytes'] / 2**20:.1f} | {r['write_s']:.2f} / "
            f"{r['write_cpu_s']:.2f} ({r['write_peak_mb']}) | "
            + (f"{r['copy_s']:.2f} / {r['copy_cpu_s']:.2f}" if r["copy_kept"] else "no copy")
            + f" | {r['parsed_s']:.2f} / {r['parsed_cpu_s']:.2f} | {r['peak_mb']} |"
            for r in result["sizes"]]
    return "\n".join([
        BEGIN, "| entries | MB | written: wall / CPU s (peak MB) | load from its copy: wall / "
        "CPU s | load of its YAML alone: wall / CPU s | load peak MB |",
        "|---:|---:|---:|---:|---:|---:|", *rows, "",
        f"Medians of {result['sizes'][0]['runs']} loads, each in a fresh process, on 2 cores "
        f"shared with other work (wall time stretches, CPU time less). Targets at "
        f"{t['entries']:,} entries: from the copy {t['copy_cpu_s']:g} s of CPU, from the YAML "
        f"alone {t['parsed_cpu_s']:g} s, {t['peak_mb']} MB. Met: "
        f"**{'yes' if result['met'] else 'no'}**.", END])


def write_page(result: dict) -> None:
    """The figures into their page, between its markers (:mod:`page_blocks`)."""
    import page_blocks
    page_blocks.replace(PAGE, BEGIN, END, page_block(result))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--page", action="store_true",
                    help=f"only render {PAGE.name}'s table from {OUT.name}, measure nothing")
    args = ap.parse_args()
    if args.page:
        write_page(json.loads(OUT.read_text()))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            r = measure(n, Path(tmp))
        rows.append(r)
        print(f"{n:>7} entries {r['bytes'] / 2**20:6.1f} MB: written in {r['write_s']:.2f} s "
              f"({r['write_cpu_s']:.2f} s CPU, {r['write_peak_mb']} MB); loads (median of "
              f"{RUNS}) from its copy {r['copy_s']:.2f} s ({r['copy_cpu_s']:.2f} s CPU), its "
              f"YAML alone {r['parsed_s']:.2f} s ({r['parsed_cpu_s']:.2f} s CPU); peak "
              f"{r['peak_mb']} MB", flush=True)
    big = max(rows, key=lambda r: r["entries"])
    ok = big["entries"] < 100000 or (big["copy_cpu_s"] <= TARGET_S and big["peak_mb"] <= TARGET_MB
                                     and big["parsed_cpu_s"] <= PARSE_S)
    OUT.parent.mkdir(exist_ok=True)
    result = {"target": {"entries": 100000, "copy_cpu_s": TARGET_S, "parsed_cpu_s": PARSE_S,
                         "peak_mb": TARGET_MB}, "met": ok, "sizes": rows}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    if big["entries"] >= 100000:        # the page shows the full run only
        write_page(result)
    print(f"target (100k entries loaded in {TARGET_S:.0f} s of CPU from the copy, "
          f"{PARSE_S:.0f} s from the YAML alone, {TARGET_MB} MB): "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
