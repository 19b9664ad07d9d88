"""What the summary says about the system's reference file itself: recorded for another
system, refused, in another unit than the checks report, or changed during the run.
"""

from __future__ import annotations

from ..judgement import baselines, entry_name
from ..util import PlacementError
from .parts import Part


def foreign_baseline(system: str) -> str:
    """The system's reference file, when its provenance names another system."""
    from ..util import baseline_file
    path = baseline_file(system.split(":")[0])
    try:
        return baselines.store.foreign(baselines.store.load(path), system, str(path))
    except PlacementError:
        return ""


def mixed_versions(parts: list[Part], system: str) -> str:
    """The version of the system's reference file the run was judged against, or why two
    were (ReFrame's bounds from one, the verdict from another: a ``baseline record`` during
    the run); ``""`` when its cases read none."""
    from ..util import baseline_file
    path = baseline_file(system.split(":")[0])
    seen = sorted({str(tc.get("baseline_version")) for p in parts for r in p.data["runs"]
                   for tc in r.get("testcases", []) if tc.get("baseline_version")})
    now = baselines.store.version(path) or "none"
    if not seen:
        return ""
    if seen == [now]:
        return f"judged against {path} {now}: ReFrame's bounds and the verdict read this version"
    return (f"baseline changed during the run: ReFrame's bounds came from {path} "
            f"{', '.join(seen)}, the verdict from {now}: judged against two versions; run "
            "again with the file left as it is")


def baseline_gaps(system: str, judgement: baselines.samples.Judgement | None
                  ) -> tuple[list[str], list[str]]:
    """Why the run could not be judged against the system's baseline (its one-line
    refusal: damaged, cut short, values no measurement can be), and each value whose
    reference is in another unit than the check reports (not judged: never a pass)."""
    from ..util import baseline_file
    path = baseline_file(system.split(":")[0])
    refused = baselines.store.refusal(path)
    units = judgement.units if judgement is not None else {}
    return ([f"baseline refused: {refused}"] if refused else [],
            [f"{entry_name(e)}: the check reports {unit!r}, its reference in {path} is in "
             f"{was!r}: not judged; give the reference in {unit!r}, or record it again with "
             "--replace" for e, (was, unit) in sorted(units.items(), key=str)])
