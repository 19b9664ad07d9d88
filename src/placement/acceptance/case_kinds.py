"""What each case of a run counts as (pass, skip, fail, unfinished, hung, interrupted), and
the words its line says: why it failed, why it hung, why it was skipped.
"""

from __future__ import annotations

import re
from typing import Any

from ..judgement import reading, verdict
from .parts import Part


def is_hung(tc: dict[str, Any], signalled: bool = False, waiting: bool = False) -> bool:
    """Still running when the time box interrupted ReFrame (``SIGINT``), with no time limit
    of its own: only the box ended it, and running it again would spend the next window
    the same way, so ``--resume`` skips it (:func:`.resume.resume_plan`).

    ``signalled``: a Ctrl-C, SIGTERM or SIGHUP stopped its part (:func:`.parts.by_signal`), which
    leaves the same record; that case was stopped, not hung, and runs again. So does a case
    whose job was still ``waiting`` on the scheduler (:func:`.waiting.by_queue`): its node
    never ran it."""
    return (not signalled and not waiting and tc.get("result") == "abort"
            and tc.get("fail_phase") == "run" and not tc.get("time_limit")
            and "KeyboardInterrupt" in str(tc.get("fail_reason")))


def hung_line(tc: dict[str, Any]) -> str:
    """The line naming a hung case: what it is, how long it ran, where its files are."""
    ran = tc.get("time_run")
    after = f" after {ran:.0f}s" if isinstance(ran, (int, float)) else ""
    return (f"HUNG {tc.get('display_name')} @{tc.get('system')}+{tc.get('environ')} "
            f"[no time limit of its own, still running when the time box ended it{after}; "
            f"--resume skips it: give the check a time_limit] stage={tc.get('stagedir')}")


def classify(tc: dict[str, Any], cut_short: bool, signalled: bool = False,
             waiting: bool = False) -> str:
    """``pass``, ``skip``, ``fail``, ``unfinished`` (a hang the watchdog ended), ``hung``
    (:func:`is_hung`, a failure to finish) or ``interrupted``.

    A case the time box interrupted before its own time limit, or a signal stopped
    (``signalled``, :func:`.parts.by_signal`), or whose job was still ``waiting`` on the
    scheduler (:func:`.waiting.by_queue`), is ``interrupted``: ``--resume`` runs it again. A
    case ReFrame failed stays failed: no verdict turns a failure into a pass.
    """
    result = tc.get("result")
    if result in ("pass", "skip"):
        return result
    if is_hung(tc, signalled, waiting):
        return "hung"
    if result == "abort" and cut_short:
        return "interrupted"
    if tc.get("fail_phase") == "performance" and verdict.guards.stopped_runs(tc) > 0:
        return "unfinished"
    return "fail"


#: ReFrame's words before the values of a performance failure, left out of the FAIL line
_PERF_PREFIX = "performance error: failed to meet reference(s):"


def fail_text(tc: dict) -> str:
    """The phase a case failed in and ReFrame's reason, on one line: a site sees at once which
    value missed its reference and by how much (``performance: gbps=82.7 GB/s, expected
    200.358 (l=100.179, u=inf)``) without opening ReFrame's failure report."""
    phase = tc.get("fail_phase") or "failed"
    # several references missed: ReFrame puts its words and each value on lines of their own
    lines = [ln.strip() for ln in str(tc.get("fail_reason") or "").splitlines() if ln.strip()]
    reason = " ".join(lines)
    if reason.startswith(_PERF_PREFIX):
        reason = "; ".join(lines[2:]) if lines[0] == "performance error:" else \
            reason[len(_PERF_PREFIX):].strip()
    if len(reason) > 200:
        reason = reason[:197] + "..."
    return f"{phase}: {reason}" if reason else phase


#: ReFrame's line for a skipped case: ``[     SKIP ] (  5/125) NAME /HASH @SYS:PART+ENV [reason]``
#: (the case's number padded to the width of the total)
_SKIP_LINE = re.compile(r"^\[\s*SKIP\s*\] \(\s*\d+/\d+\) .*? /([0-9a-f]{8}) @(\S+) \[(.*)\]\s*$",
                        re.M)


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def skip_reasons(parts: list[Part]) -> dict[tuple[str, str], str]:
    """Why each case was skipped, keyed by (hash, system:partition+environ).

    ReFrame's run report does not keep the message a test skipped with; its
    output does, and acceptance.sh keeps that output beside each report (``.out``).
    """
    out: dict[tuple[str, str], str] = {}
    for part in parts:
        log = part.path.with_suffix(".out")
        if log.is_file():
            text = _COLOUR.sub("", log.read_text(errors="replace"))
            for m in _SKIP_LINE.finditer(text):
                out[(m.group(1), m.group(2))] = m.group(3)
    return out


def skip_reason(tc: dict[str, Any], reasons: dict[tuple[str, str], str]) -> str:
    """A skip reason with case-specific names folded (``bt.A.x`` -> ``*.x``), for counting."""
    key = (tc.get("hashcode", ""), f"{tc.get('system')}:{tc.get('partition')}+{tc.get('environ')}")
    reason = reasons.get(key) or tc.get("fail_reason") or "reason not recorded"
    reason = re.sub(r"\b\w+\.[A-Z]\.x\b", "*.x", reason.splitlines()[0], count=1)
    return reason[:300]


#: the kinds that fail the run
FAILED_KINDS = ("fail", "unfinished", "hung")


def member_kinds(tc: dict[str, Any], kind: str) -> list[tuple[str, dict[str, Any]]]:
    """What each case a final case stands for counts as in the acceptance line, with that
    case: a node-health family's members as cases of their own (as the report and a run
    without the family count them: a partition's line read ``6 passed`` for 56 checks, and
    a member skipped for want of NPB ``skipped=0`` with no word), any other case its
    ``kind``. A family that passed or failed: each member by its own result (skipped,
    passed, failed; every one passed where a confirmation dismissed the family's failure),
    the members the family's job never judged together one failure, as its one FAIL line
    says. A family that did not finish (hung, interrupted): one case, as its one line
    says and ``--resume`` runs it again whole."""
    if kind not in ("pass", "fail") or not reading.family.is_family(tc):
        return [(kind, tc)]
    out = []
    for key, member in reading.family.members(tc):
        own = tc[reading.family.FIELD][key].get("result")
        if own == "skip":
            out.append(("skip", member))
        elif own == "pass" or kind == "pass":
            out.append(("pass", member))
        elif own == "fail":
            out.append(("fail", member))
    if kind == "fail" and all(x != "fail" for x, _ in out):
        out.append(("fail", tc))    # the family failed on its own: its job, one failure
    return out or [(kind, tc)]
