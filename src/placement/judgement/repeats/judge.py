"""The judge asked inside a job, after each run: stop, or run the case again.

Two ways to give the runs so far (``placement judge``, :mod:`placement.cli.judge`):

* one variable: the case's entry (as ``placement baseline diff`` prints it,
  ``Test[index values].var``) and the values of the runs made so far (NPB's
  ``wall``): :func:`judge_runs`;
* a kernel job's launches: the job's stdout, split into launches at the
  ``kernel-launch`` lines (:mod:`placement.judgement.repeats.loop_script`), and for each
  variable its entry and a regex whose first group reads its value from each launch's first
  matching line: :func:`judge_launches`. Every variable with stored runs is judged; the job
  runs again while any of them is undecided below the cap.

The baseline's stored runs are read from the reference file's ``_samples``.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import replace
from pathlib import Path

from ...util import PlacementError, regular_file
from .. import baselines, verdict
from . import loop_script
from ..verdict.intervals import entries, entry_name, read_entry


def stored_runs(path: Path, entry: str, explain: bool = False
                ) -> baselines.samples.Samples | None:
    """The baseline's runs of ``entry``; None when it has none.

    ``entry`` is ``Test[k1,k2].var`` or the form ``placement baseline diff`` prints (each
    value after its ``$index`` name): both name one value. ``explain``: an entry the file
    does not hold at all (a typo) is one line naming the nearest, exit 2: told "nothing to
    judge against", a job's loop would stop quietly, as it does for a value that is
    recorded but has no runs yet. Without it (a check's setup, asking for each case of a
    session) None: the search for the nearest names is the costly part.
    """
    st = path.stat()
    by_entry, _, _, data = _stored(str(path), st.st_mtime_ns, st.st_size)
    e = read_entry(entry, data)
    if e is None:
        raise PlacementError(f"invalid entry {baselines.shape.short(entry)} (expected "
                             "Test[index values].var, as `placement baseline diff` prints it)")
    runs = by_entry.get(e)
    if runs is None and explain:
        names = _names(str(path), st.st_mtime_ns, st.st_size)
        if entry_name(e) not in names:
            near = difflib.get_close_matches(entry_name(e), sorted(names), n=3, cutoff=0)
            raise PlacementError(
                f"entry {baselines.shape.short(entry)} names no value of {path} (a typo?); "
                "accepted: Test[index values].var, as `placement baseline diff` prints it, "
                f"one of the file's {len(names)} values (its leaves: a test, its $index "
                "values, a variable)"
                + (f", nearest: {', '.join(map(baselines.shape.cut, near))}" if near else ""))
    return runs


@functools.lru_cache(maxsize=4)
def _names(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """Every value a reference file names (its references and its stored runs)."""
    by_entry, _, _, data = _stored(path, mtime_ns, size)
    return frozenset({entry_name(k) for k in entries(data)} | set(map(entry_name, by_entry)))


def file_context(path: Path) -> tuple[verdict.over_sessions.Prior, int]:
    """The file's session-spread prior and how many values it keeps runs for."""
    st = path.stat()
    _, prior, n, _ = _stored(str(path), st.st_mtime_ns, st.st_size)
    return prior, n


@functools.lru_cache(maxsize=4)
def _stored(path: str, _mtime_ns: int, _size: int):
    """A reference file's stored runs by entry, its prior, its number of values and its
    content (which names an entry, :func:`stored_runs`), read once per version of the file
    (every NPB case of a session asks, the file is the same)."""
    data = baselines.store.load(Path(path))
    samples = baselines.samples.entries(data, path)
    by_entry = {(test, tuple(map(str, k)), var): s for (test, k, var), s in samples.items()}
    prior = verdict.over_sessions.file_prior([s.session_runs for s in samples.values()])
    return by_entry, prior, len(samples), data


def judge_entry(path: Path, entry: str, runs: list[float], min_runs: int, max_runs: int,
                min_effect: float) -> verdict.over_sessions.Decision | None:
    """Stop or run again for one variable against its stored runs; None when it has none.

    The one place a per-variable decision of a job's loop is made (both modes). Every run
    is checked before any is counted: below ``min_runs`` the verdict only counts them, and
    a bad value (-1, nan, a parse gone wrong) read as "run again" would hide it.
    """
    for n, x in enumerate(runs, 1):
        if not (math.isfinite(x) and x > 0):
            raise PlacementError(f"{entry}: run {n} is {x!r}: runs must be positive finite "
                                 "numbers")
    stored = stored_runs(path, entry, explain=True)
    if stored is None:
        return None
    # judged alone, at the level a lone change needs among all the file's values (the
    # run-wide verdict corrects over them), with the spread the file's sessions show
    prior, values = file_context(path)
    try:
        return verdict.over_sessions.judge_repeats(stored.session_runs, runs, stored.higher_is_better,
                                     min_runs, max_runs, min_effect=min_effect,
                                     prior=prior, values=values)
    except ValueError as exc:
        raise PlacementError(f"{entry}: {exc}") from None


def launch_values(launches: list[tuple[int, str]], pattern: re.Pattern) -> list[float]:
    """One value per finished launch (:func:`placement.judgement.repeats.loop_script.split_launches`): the first
    match's first group."""
    values = []
    for n, (rc, out) in enumerate(launches, 1):
        if rc != 0:
            raise PlacementError(f"launch {n} exited {rc}: its values are not judged")
        m = pattern.search(out)
        if m is None:
            raise PlacementError(f"launch {n} printed no line matching {pattern.pattern!r}")
        try:
            values.append(float(m.group(1)))
        except (IndexError, TypeError, ValueError):     # TypeError: the group matched nothing
            raise PlacementError(f"launch {n}: {m.group(0)!r} gives no number as the first "
                                 f"group of {pattern.pattern!r}") from None
    return values


def judge_launches(path: Path, text: str, variables: list[tuple[str, str]], min_runs: int,
                   max_runs: int, min_effect: float) -> tuple[bool, list[str]]:
    """Whether a kernel job stops, and one line per variable saying why.

    It runs again while any variable with stored runs is undecided below the
    cap; with none stored it stops.
    """
    lines, stops = [], []
    launches = loop_script.split_launches(text)     # once for all the variables
    for entry, regex in variables:
        try:
            pattern = re.compile(regex, re.M)
        except re.error as exc:
            raise PlacementError(f"{entry}: invalid regex {regex!r} ({exc})") from None
        d = judge_entry(path, entry, launch_values(launches, pattern), min_runs, max_runs,
                        min_effect)
        if d is None:
            lines.append(f"{entry}: not judged (no stored runs)")
            continue
        stops.append(d.stop)
        lines.append(f"{entry}: {d.word}: {d.reason}")
    if not stops:
        lines.append("stop: no variable has stored runs: nothing to judge against")
    return all(stops), lines


def judge_runs(path: Path, entry: str, runs: list[float], min_runs: int, max_runs: int,
               min_effect: float) -> verdict.over_sessions.Decision:
    """:func:`judge_entry`, or with nothing stored: stop once the runs always made are done."""
    d = judge_entry(path, entry, runs, min_runs, max_runs, min_effect)
    if d is None:
        d = verdict.over_sessions.judge_repeats([], runs, False, min_runs, max_runs)
        if d.stop:      # the word a typo gets too, so the line names what was looked for
            d = replace(d, reason=f"{d.reason} ({entry} has no stored runs in {path})")
    return d


#: the largest kernel job output read: the job's launches print a few lines each
MAX_JOB_OUTPUT = 256 * 2**20


def job_output(path: Path) -> str:
    """A kernel job's stdout: a regular file, bounded (a FIFO blocked the judge for ever,
    /dev/zero filled the memory)."""
    return regular_file.read_bytes(path, "job output", MAX_JOB_OUTPUT).decode(
        "utf-8", errors="replace")
