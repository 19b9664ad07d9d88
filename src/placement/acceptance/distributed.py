"""The confirmation session of a ``--distribute`` run: which checks it reruns on which nodes,
and which of its cases is which of the first session's.

ReFrame selects checks by name (``-n /HASH``) before it makes each check's per-node copies
(the ``.part`` and ``.nid`` parameters of ``--distribute``), so a copy's own hash, the one
its run report keeps, selects nothing. The confirmation therefore names a check by the hash
of its display name without those parameters (:func:`base_hash`, ReFrame's ``hashcode`` of
the check before it was copied) and runs the same ``--distribute`` restricted to the nodes
where a check failed (``-J--nodelist=n2,n3``: ReFrame's Slurm backend keeps only those nodes
of the partition, then leaves the option out of the jobs). The checks of one confirmation
run on every node named, so a check may also run on another failing node: that result is
not used. What belongs to a whole session (a NODES line, the node's shift, its load) reruns
the whole distribute set, every check on every node.

ReFrame numbers a copy's variants by the nodes it was given, so one case's unique name
differs between the two sessions; its display name, and so its hash, does not
(:func:`same_cases`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..judgement import reading

#: ``--distribute`` adds these parameters to a check's display name
_DISTRIBUTE_PARAMS = (".part=", ".nid=")


def _params(tc: dict[str, Any]) -> list[str]:
    """The ``name=value`` parameters of a case's display name."""
    shown = tc.get("display_name")
    return str(shown).split(" %")[1:] if isinstance(shown, str) else []


def is_distributed(final: dict[tuple, dict[str, Any]]) -> bool:
    """Whether the run's cases are ``--distribute`` copies (a ``.nid`` parameter)."""
    return any(p.startswith(".nid=") for tc in final.values() for p in _params(tc))


def base_hash(tc: dict[str, Any]) -> str:
    """The hash that selects the case's check before ``--distribute`` copied it: ReFrame's
    ``hashcode`` (sha256 of the test's name and its sorted parameters, 8 hex digits) of the
    display name without ``.part`` and ``.nid``."""
    basename, *params = check_name(str(tc.get("display_name", ""))).split(" %")
    m = hashlib.sha256(basename.encode("utf-8"))
    for p in sorted(params):
        m.update(p.encode("utf-8"))
    return m.hexdigest()[:8]


def check_name(display_name: str) -> str:
    """A case's display name without the parameters ``--distribute`` adds: the name of the
    check it is a per-node copy of (itself for a case that is no copy)."""
    basename, *params = display_name.split(" %")
    return " %".join([basename, *(p for p in params if not p.startswith(_DISTRIBUTE_PARAMS))])


def selection(cases: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The base hashes of ``cases``' checks and the nodes they failed on (sorted, each
    once): the ``-n /HASH`` and ``-J--nodelist=`` of their confirmation session."""
    return (sorted({base_hash(tc) for tc in cases}),
            sorted({n for n in map(reading.run_report.node_named, cases) if n}))


def _identity(tc: dict[str, Any]) -> tuple:
    return (tc.get("hashcode"), tc.get("system"), tc.get("partition"), tc.get("environ"))


def same_cases(first: dict[tuple, dict[str, Any]],
               again: dict[tuple, dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """The confirmation's cases under the first session's keys: the same hash (display
    name) on the same system, partition and environment; a case without a hash by its key."""
    by_identity = {_identity(tc): tc for tc in again.values() if tc.get("hashcode")}
    out = {}
    for key, tc in first.items():
        tc2 = by_identity.get(_identity(tc)) if tc.get("hashcode") else again.get(key)
        if tc2 is not None:
            out[key] = tc2
    return out
