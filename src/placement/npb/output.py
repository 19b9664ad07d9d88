"""Reading NPB 3.x OpenMP output and the repeat loop's markers around it.

NPB ends every run with a standard block (``Class =``, ``Time in seconds =``,
``Total threads =``, ``Mop/s total =``, ``Verification =``). The NPB checks run
the benchmark several times in one job and print one marker line after each run::

    npb-run rep=3 rc=0 limit=184 wall=12.034

and, for an oversubscribed case, one line for the full-count comparison run::

    npb-full threads=64 rc=0 wall=4.512

This module turns that text into records, so that sanity and performance
functions stay one-liners and the parsing is tested on real logs without ReFrame.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import NamedTuple

from ..judgement import Summary, number, summarize as stats_summarize

#: NPB prints its time to 0.01 s (``Time in seconds =`` with two decimals): a time at or
#: below it says the run was short, not how short, and no ratio of two such times means
#: anything (class S runs sit there: ``0.00`` and ``0.01``).
TIME_RESOLUTION_S = 0.01

#: The exit status ``timeout(1)`` gives when it stopped the run (TERM, then KILL).
WATCHDOG_STATUS = (124, 137)

_FIELD = re.compile(r"^\s*(Class|Size|Iterations|Time in seconds|Total threads|Avail threads|"
                    r"Mop/s total|Mop/s/thread|Operation type|Verification|Version|"
                    r"Compile date)\s*=\s*(.*?)\s*$", re.M)
#: The compiler and flags lines of NPB's ``Compile options:`` block that say how it was built.
_BUILD_KEYS = ("F77", "CC", "FFLAGS", "CFLAGS", "RAND")
_OPTION = re.compile(r"^\s{2,}(\w+)\s*=\s*(.*?)\s*$", re.M)
_COMPLETED = re.compile(r"^\s*(\w+) Benchmark Completed\.?\s*$", re.M)
_RUN = re.compile(r"^npb-run rep=(\d+) rc=(-?\d+) limit=(\S+) wall=(\S+)\s*$", re.M)
_FULL = re.compile(r"^npb-full threads=(\d+) rc=(-?\d+) wall=(\S+)\s*$", re.M)


@dataclass(frozen=True)
class NpbResult:
    """One run's standard block; fields NPB did not print (a truncated log) are None."""

    benchmark: str | None
    npb_class: str | None
    size: str | None
    iterations: int | None
    time_s: float | None
    total_threads: int | None
    avail_threads: int | None
    mops_total: float | None
    verification: str | None
    version: str | None
    #: How the binary was built, from NPB's own report (compiler, flags, compile date).
    build: str | None = None

    @property
    def complete(self) -> bool:
        """The block reached ``Verification``: the run finished and reported."""
        return None not in (self.npb_class, self.time_s, self.total_threads,
                            self.mops_total, self.verification)

    @property
    def verified(self) -> bool:
        return self.verification == "SUCCESSFUL"


def watchdog_stopped(rc: int) -> bool:
    """The exit status says the watchdog (``timeout``) ended the run, not NPB itself."""
    return rc in WATCHDOG_STATUS


@dataclass(frozen=True)
class RunRecord:
    """One repetition: the repeat loop's marker and the NPB block printed before it."""

    rep: int
    rc: int
    limit_s: float
    wall_s: float
    result: NpbResult

    @property
    def stopped(self) -> bool:
        """The watchdog (``timeout``) ended the run: it took longer than its budget."""
        return watchdog_stopped(self.rc)


_num = number   # NPB prints ****** when a number overflows its field: None


def parse_result(text: str) -> NpbResult:
    """The standard block of one run's output (the last one, if several are present)."""
    fields: dict[str, str] = {}
    for m in _FIELD.finditer(text):
        fields[m.group(1)] = m.group(2)
    done = _COMPLETED.findall(text)
    return NpbResult(
        benchmark=done[-1] if done else None,
        npb_class=fields.get("Class"),
        size=" ".join(fields["Size"].split()) if "Size" in fields else None,
        iterations=_num(fields.get("Iterations"), int),
        time_s=_num(fields.get("Time in seconds"), float),
        total_threads=_num(fields.get("Total threads"), int),
        avail_threads=_num(fields.get("Avail threads"), int),
        mops_total=_num(fields.get("Mop/s total"), float),
        verification=fields.get("Verification"),
        version=fields.get("Version"),
        build=_build(text, fields.get("Compile date")),
    )


def _build(text: str, date: str | None) -> str | None:
    """``F77=gfortran FFLAGS=-O3 -fopenmp RAND=randi8; compiled 22 Nov 2026`` (the last run's)."""
    start = text.rfind("Compile options:")
    if start < 0:
        return None
    block = text[start:].split("\n\n", 1)[0]
    opts = dict(_OPTION.findall(block))
    flags = " ".join(f"{k}={opts[k]}" for k in _BUILD_KEYS if opts.get(k) not in (None, "(none)"))
    return "; ".join(p for p in (flags, f"compiled {date}" if date else "") if p) or None


def parse_runs(text: str) -> list[RunRecord]:
    """Every repetition in a job's output, in order; each owns the text since the previous marker."""
    out: list[RunRecord] = []
    start = 0
    for m in _RUN.finditer(text):
        block = text[start:m.start()]
        out.append(RunRecord(rep=int(m.group(1)), rc=int(m.group(2)),
                             limit_s=_num(m.group(3), float) or 0.0,
                             wall_s=_num(m.group(4), float) or 0.0,
                             result=parse_result(block)))
        start = m.end()
    return out


class FullRun(NamedTuple):
    """The marker of an oversubscribed case's full-count comparison run."""

    threads: int
    rc: int
    wall_s: float

    @property
    def stopped(self) -> bool:
        """The watchdog ended the comparison run."""
        return watchdog_stopped(self.rc)


def parse_full_run(text: str) -> FullRun | None:
    """The full-count comparison run's marker, if the job made one."""
    m = _FULL.search(text)
    return FullRun(int(m.group(1)), int(m.group(2)), float(m.group(3))) if m else None


def run_problems(runs: list[RunRecord], repeats: int, npb_class: str, threads: int) -> list[str]:
    """Why the runs cannot be trusted; empty when every run verified as asked.

    A run the watchdog stopped is not a sanity problem: it is reported by the
    performance check (``stopped``), as the slow run it is.
    """
    out: list[str] = []
    if not runs:
        out.append(f"no run reported ({repeats} asked)")
    elif len(runs) != repeats:
        out.append(f"{len(runs)} of {repeats} runs reported (job cut short?)")
    for r in runs:
        res = r.result
        if r.stopped:
            continue
        if not res.complete:
            out.append(f"run {r.rep}: no complete NPB result (exit status {r.rc}, output truncated)")
            continue
        if not res.verified:
            out.append(f"run {r.rep}: Verification = {res.verification}")
        if res.npb_class != npb_class:
            out.append(f"run {r.rep}: Class = {res.npb_class}, expected {npb_class}")
        if res.total_threads != threads:
            out.append(f"run {r.rep}: Total threads = {res.total_threads}, expected {threads}")
        if r.rc != 0:
            out.append(f"run {r.rep}: exit status {r.rc}")
    return out


def summarize(values: list[float | None]) -> Summary:
    """:func:`placement.judgement.reading.summary.summarize` of the runs that gave a number."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if not vals:
        raise ValueError("no measurements to summarize (every run failed or was stopped)")
    return stats_summarize(vals)


def completed(runs: list[RunRecord]) -> list[NpbResult]:
    """Results of the runs that finished and reported, for the timing statistics."""
    return [r.result for r in runs if not r.stopped and r.result.complete]
