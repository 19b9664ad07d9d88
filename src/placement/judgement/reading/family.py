"""A family test's case in a run report as the member cases it ran, each as ReFrame would
have written it had the member run as a job of its own.

Why: the node-health family runs as one test per node (``NodeHealthCheck``,
:mod:`placement.testlib.family`), and every reader (baselines, history, the peer verdict,
the node's load) knows the members' cases: their names, parameters, values and units. The
mapping is the one the family writes:

* ``family``: per member key (its ReFrame unique name), the member's loggable fields
  (``name``, ``display_name``, its parameters, ``env_vars``, ``perf_launches``, ``node``,
  ``fingerprint`` ...) and its own ``result``, ``fail_phase`` and ``fail_reason``;
* ``perfvalues``: the member's variable ``var`` as the family's ``<key>.<var>``.

A member case is the family's case (system, partition, environment, job, session) with
the member's fields over it and its own values; a member the family's job never judged
(the job failed before) takes the family's result. A case without ``family`` is itself.
"""

from __future__ import annotations

from typing import Any

#: The family's field that maps each member key to its fields.
FIELD = "family"
#: Between a member key and its variable in the family's performance variables.
SEP = "."
#: The family's fields that are the family's own, never a member's.
_OWN = (FIELD, "perfvalues", "perf_launches", "perf_samples")


def is_family(tc: dict[str, Any]) -> bool:
    """Whether a run report's case is a family test's, with members to read."""
    members = tc.get(FIELD)
    return isinstance(members, dict) and bool(members)


def expand(tc: dict[str, Any]) -> list[dict[str, Any]]:
    """The member cases of a family test's case, in the family's order; any other case as
    it is (a one-item list)."""
    if not is_family(tc):
        return [tc]
    return [member for _, member in members(tc)]


def members(tc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A family test's case as (member key, member case) pairs, in the family's order: the
    key is the member's ReFrame unique name, for a reader that rebuilds a family case."""
    shared = {k: v for k, v in tc.items() if k not in _OWN}
    prefix = f"{tc.get('system')}:{tc.get('partition')}:"
    perf = tc.get("perfvalues") or {}
    out = []
    for key, fields in tc[FIELD].items():
        if not isinstance(fields, dict) or not isinstance(fields.get("name"), str):
            continue
        head = f"{prefix}{key}{SEP}"
        member = {**shared, **fields, "family_case": tc.get("display_name", tc.get("name"))}
        member["display_name"] = " ".join([str(fields.get("display_name", fields["name"])),
                                           *_where(tc)])
        member["perfvalues"] = {prefix + k[len(head):]: v for k, v in perf.items()
                                if isinstance(k, str) and k.startswith(head)}
        if not fields.get("result"):
            for k in ("result", "fail_phase", "fail_reason"):
                member[k] = tc.get(k)
        out.append((key, member))
    return out


def failed_members(tc: dict[str, Any]) -> list[str]:
    """The members of a family test's case that failed before their performance check (set
    up, run, sanity): a failure to measure, not a missed reference, though the family's case
    reports it in its performance phase (the only phase that keeps the others' values)."""
    if not is_family(tc):
        return []
    return [k for k, f in tc[FIELD].items() if isinstance(f, dict) and f.get("result") == "fail"
            and f.get("fail_phase") != "performance"]


def _where(tc: dict[str, Any]) -> list[str]:
    """The ``%.part=...`` and ``%.nid=...`` of the family's display name (``--distribute``):
    its members ran where it ran."""
    shown = tc.get("display_name")
    return [w for w in shown.split() if w.startswith("%.")] if isinstance(shown, str) else []


def expand_all(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case of a list, family cases as their members."""
    return [m for tc in cases for m in expand(tc)]
