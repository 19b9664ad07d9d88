"""A run's cases as the peer verdict's input: per partition, each value by node, and each
node's topology fingerprint.

Which node a case ran on is :attr:`Case.node`, read once with the case
(:func:`placement.judgement.reading.run_report.node_named`). The same value on different
nodes is the same case with the node left out of its identity (and ReFrame's ``.part``,
which ``--distribute`` adds with the partition's name). A case whose node is unknown is no
peer of any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import partition
from .declared import DeclaredNode
from ..reading.direction import higher_is_better, is_extreme
from ..reading.run_report import NODE_PARAMS, Case, RunReport

#: the test fields a topology fingerprint may be logged as (a mapping of field -> value)
FINGERPRINT_FIELDS = ("fingerprint", "topology_fingerprint")
#: the test fields of the node the system file declares: its fingerprint and its file
DECLARED_FIELDS = ("declared_fingerprint", "declared_topology")
#: the test field of the partition's node count its system file declares
DECLARED_COUNT = "declared_nodes"


def value_key(case: Case, var: str) -> tuple:
    """The identity of one value with its node left out."""
    params = tuple(sorted((k, str(v)) for k, v in case.params.items() if k not in NODE_PARAMS))
    return (case.test, params, case.environ, var)


def value_name(case: Case, var: str) -> str:
    """``Test k=v ... var``: the value as the partition page and the lines name it."""
    label = case.label(skip=NODE_PARAMS, default="")
    return " ".join(x for x in (case.test, label, var) if x)


def fingerprint(case: Case) -> Mapping[str, Any] | None:
    """The topology fingerprint a case logged, if any."""
    for name in FINGERPRINT_FIELDS:
        v = case.raw.get(name)
        if isinstance(v, dict) and v:
            return v
    return None


def declared(case: Case) -> DeclaredNode | None:
    """The declared node a case recorded (its system file's topology and the partition's
    node count), if any."""
    fp, source = (case.raw.get(k) for k in DECLARED_FIELDS)
    count = case.raw.get(DECLARED_COUNT)
    count = count if type(count) is int and count > 0 else 0
    fp = fp if isinstance(fp, dict) else {}
    if fp or count:
        return DeclaredNode(fp, str(source or "the system file's topology"), count)
    return None


def declared_nodes(report: RunReport) -> dict[str, DeclaredNode]:
    """Per ``SYSTEM:PART``, the node its system file declares, as its cases recorded it (the
    first that did: every case of a partition reads the same file)."""
    out: dict[str, DeclaredNode] = {}
    for c in report.cases:
        where = f"{c.system}:{c.partition}"
        if where not in out and (d := declared(c)) is not None:
            out[where] = d
    return out


def partitions(report: RunReport) -> dict[str, tuple[list[partition.PeerValue],
                                                     dict[str, Mapping[str, Any]]]]:
    """Per ``SYSTEM:PART`` with cases on more than one node: its values by node and its
    nodes' fingerprints."""
    by_part: dict[str, list[tuple[str, Case]]] = {}
    for c in report.cases:
        node = c.node
        if node is not None:
            by_part.setdefault(f"{c.system}:{c.partition}", []).append((node, c))
    out = {}
    for where, cases in by_part.items():
        if len({n for n, _ in cases}) < 2:
            continue
        fps = _fingerprints(cases)
        out[where] = (_values(cases, fps), fps)
    return out


def threads_of(case: Case) -> int | None:
    """The OpenMP threads a case ran (``OMP_NUM_THREADS`` in its environment), if it says."""
    env = case.raw.get("env_vars")
    v = env.get("OMP_NUM_THREADS") if isinstance(env, dict) else None
    try:
        return int(str(v).strip("'\"")) if v is not None else None
    except ValueError:
        return None


def uses_every_pu(case: Case, fingerprint: Mapping[str, Any] | None) -> bool:
    """Whether ``case`` ran one thread per PU its node allows (the fingerprint's
    ``pus_allowed``): a node short of CPU time is slower there, not where a PU is spare."""
    allowed = (fingerprint or {}).get("pus_allowed")
    return isinstance(allowed, int) and allowed > 0 and threads_of(case) == allowed


def _values(cases: list[tuple[str, Case]], fps: Mapping[str, Mapping[str, Any]]
            ) -> list[partition.PeerValue]:
    """Each judged value's launches by node (a case that did not measure is left out),
    and whether it used every PU on every node it ran on."""
    launches: dict[tuple, dict[str, list[float]]] = {}
    meta: dict[tuple, tuple[str, bool]] = {}
    every_pu: dict[tuple, bool] = {}
    for node, c in cases:
        if not c.measured:
            continue
        for var in c.primary_vars():
            higher = higher_is_better(var, c.perf[var].unit)
            runs = c.launches.get(var)
            if higher is None or is_extreme(var) or not runs:
                continue
            key = value_key(c, var)
            launches.setdefault(key, {})[node] = list(runs)
            meta.setdefault(key, (value_name(c, var), higher))
            every_pu[key] = every_pu.get(key, True) and uses_every_pu(c, fps.get(node))
    # a case's values are one measurement: one group (its key without the variable)
    return [partition.PeerValue(meta[k][0], meta[k][1], launches[k], group=k[:-1],
                            all_pus=every_pu[k]) for k in sorted(launches)]


def _fingerprints(cases: list[tuple[str, Case]]) -> dict[str, Mapping[str, Any]]:
    out: dict[str, Mapping[str, Any]] = {}
    for node, c in cases:
        fp = fingerprint(c)
        if fp is not None:
            out[node] = fp
    return out


def judge_report(report: RunReport) -> list[partition.PeerJudgement]:
    """Every partition of a run with cases on several nodes, judged by its peers and
    against the node its system file declares."""
    declared = declared_nodes(report)
    return [partition.judge(values, where, fps, declared=declared.get(where))
            for where, (values, fps) in sorted(partitions(report).items())]
