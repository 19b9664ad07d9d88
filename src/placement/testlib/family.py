"""A family of checks run as one job: each member a ReFrame test of its own, set up, judged
and measured by its own pipeline, its program run in turn inside the family's job.

Why: ``--distribute`` copies every case to every node, so a family of 14 cases is 14 jobs
per node and 14 tests ReFrame generates per node (minutes on a 1,000-node partition). One
family test per node is one job and one generated test; its members keep everything that
makes them what they are (parameters, fixtures' programs, hooks, sanity and performance
functions, references), because they are the same classes, driven here:

* setup: each member is instantiated (``variant_num``), handed the family's node, its
  fixtures and the variables ``-S member_vars=name:value,...`` gives (``-S`` reaches the
  family test alone, as ReFrame registers it alone), and set up on the family's partition
  and environment, with its stage folder inside the family's; a member that skips (NPB not installed) or fails there is recorded;
* run: each member's ``run`` writes the script it would submit (its environment, its
  commands) as ``member.sh`` in its own folder instead of submitting it; the family's job
  runs those scripts in turn, each under its own time limit, its output in its own folder;
* sanity and performance: each member's own phases read its own output. A member that
  fails fails alone: its values are absent, the others are reported.

The family reports each member's values as performance variables ``<member>.<var>``
(:data:`SEP`) with the member's own references, and the ``family`` mapping: per member,
its name, result and loggable fields, from which the run report reader rebuilds each
member's case (:mod:`placement.judgement.reading.family`).
"""

from __future__ import annotations

import json
import math
import os
import shlex
from typing import Any

import reframe.core.runtime as runtime
import reframe.utility.sanity as sn
from reframe.core.exceptions import SkipTestError
from reframe.core.fields import make_convertible
from reframe.utility.typecheck import Duration

#: Between a member's key and its variable in the family's performance variables.
SEP = '.'
#: The lines the family's job prints around each member: ``node_health_member <event> <key>``.
MARK = 'node_health_member'
#: A member's script in its own stage folder.
SCRIPT = 'member.sh'
#: A member with no time limit of its own, on a partition without one, gets this many seconds.
DEFAULT_LIMIT_S = 600.0


class Member:
    """One member case of a family: the test object and what became of it."""

    def __init__(self, cls: type, variant: int):
        self.test = cls(variant_num=variant)
        self.key = self.test.unique_name
        self.result = ''          # '', pass, fail or skip
        self.fail_phase: str | None = None
        self.fail_reason: str | None = None
        self.rc: int | None = None

    def fail(self, phase: str, exc: BaseException) -> None:
        self.result, self.fail_phase = 'fail', phase
        self.fail_reason = f'{type(exc).__name__}: {exc}'


def chosen(classes: list[type], names: list[str]) -> list[type]:
    """The member classes named in ``names`` (all of them when it is empty); a name that is
    no member's is an error, so a misspelt selection runs nothing rather than everything."""
    if not names:
        return list(classes)
    known = {c.__name__ for c in classes}
    unknown = sorted(set(names) - known)
    if unknown:
        raise ValueError(f"only_members: {', '.join(unknown)} is no member of the family "
                         f"(its members: {', '.join(sorted(known))})")
    return [c for c in classes if c.__name__ in names]


def make_members(classes: list[type], wanted_tag: str) -> list[Member]:
    """Every variant of every member class that carries ``wanted_tag`` (the family's mode)."""
    out = []
    for cls in classes:
        for v in cls.get_variant_nums():
            m = Member(cls, v)
            if wanted_tag in m.test.tags:
                out.append(m)
    return out


def setup_member(family, m: Member) -> None:
    """Set ``m`` up where ``family`` runs: its node, the family's fixtures, its own folder."""
    t = m.test
    setattr(t, '.nid', getattr(family, '.nid', None) or [family.node])
    for name, val in family.member_vars.items():     # -S member_vars=name:value,...
        if name in type(t)._rfm_var_space:
            setattr(t, name, make_convertible(val))
    by_class = {fx.cls: getattr(family, name)
                for name, fx in type(family)._rfm_fixture_space.items()}
    for name, fx in type(t)._rfm_fixture_space.items():
        setattr(t, name, by_class[fx.cls])
    t._resolve_fixtures = lambda: None           # handed over above

    def paths():
        t._stagedir = os.path.join(family.stagedir, m.key)
        os.makedirs(t._stagedir, exist_ok=True)
        t._outputdir = t._stagedir

    t._setup_paths = paths
    try:
        t.setup(family.current_partition, family.current_environ)
    except SkipTestError as exc:
        m.result, m.fail_reason = 'skip', str(exc)
    except Exception as exc:   # a member's own error: that member fails, not the family
        m.fail('setup', exc)


def write_member_script(m: Member) -> float:
    """Run ``m``'s run phase without submitting: its job script's environment and commands
    go to ``member.sh``. Returns its time limit in seconds."""
    t = m.test
    captured: dict[str, Any] = {}

    def prepare(commands, environs=None, *args, **kwargs):
        captured['commands'], captured['environs'] = list(commands), list(environs or [])

    t.job.prepare = prepare
    t.job.submit = lambda: None
    try:
        t.run()
    except Exception as exc:
        m.fail('run', exc)
        return 0.0
    lines = ['#!/bin/bash', runtime.emit_loadenv_commands(*captured['environs'])]
    with open(os.path.join(t.stagedir, SCRIPT), 'w') as fp:
        fp.write('\n'.join(x if isinstance(x, str) else '\n'.join(x)
                           for x in [*lines, *captured['commands']]) + '\n')
    return float(t.time_limit or partition_limit(t) or DEFAULT_LIMIT_S)


def partition_limit(t) -> float | None:
    """The partition's time limit in seconds (a test without its own runs under it)."""
    limit = runtime.runtime().get_option(
        f'systems/0/partitions/@{t.current_partition.name}/time_limit')
    if not limit:
        return None
    return float(Duration(limit)) if isinstance(limit, str) else float(limit)


def job_lines(m: Member, limit_s: float) -> list[str]:
    """The family job's lines that run ``m``: in its folder, under its time limit."""
    t = m.test
    folder = shlex.quote(t.stagedir)
    out = shlex.quote(os.path.join(t.stagedir, t.job.stdout))
    err = shlex.quote(os.path.join(t.stagedir, t.job.stderr))
    return [f'echo "{MARK} start {m.key}"',
            f'rc=0; (cd {folder} && timeout -k 10 {math.ceil(limit_s)} bash {SCRIPT})'
            f' > {out} 2> {err} || rc=$?',
            f'echo "{MARK} end {m.key} rc=$rc"']


def exit_codes(stdout_path: str) -> dict[str, int]:
    """Each member's exit status as the family's job printed it."""
    codes = {}
    with open(stdout_path, errors='replace') as fp:
        for ln in fp:
            parts = ln.split()
            if len(parts) == 4 and parts[0] == MARK and parts[1] == 'end' \
                    and parts[3].startswith('rc='):
                codes[parts[2]] = int(parts[3][3:])
    return codes


def judge_member(m: Member, rc: int | None) -> dict[str, tuple]:
    """``m``'s sanity and performance phases on its own output: its performance values
    (``{var: (value, ref, lower, upper, unit)}``), none when it failed sanity."""
    t = m.test
    m.rc = rc
    if rc is None:
        m.fail('run', RuntimeError('the family job did not run this member'))
        return {}
    t.job._exitcode = rc
    try:
        t.sanity()
    except Exception as exc:
        m.fail('sanity', exc)
        return {}
    try:
        t.performance()
    except Exception as exc:
        m.fail('performance', exc)
    else:
        m.result = 'pass'
    prefix = f'{t.current_partition.fullname}:'
    return {k[len(prefix):]: tuple(v[:5]) for k, v in t.perfvalues.items()}


def record(m: Member) -> dict[str, Any]:
    """``m`` as the run report's ``family`` mapping keeps it: its loggable fields, as ReFrame
    writes them for a case of its own, and its result."""
    t, cls = m.test, type(m.test)
    fields: dict[str, Any] = {}
    for name, alt in cls.loggable_attrs():
        if alt in ('partition', 'environ'):
            continue
        try:
            val = getattr(t, name)
            if name in cls.raw_params:
                val = cls.raw_params[name].format(val)
            fields[alt or name] = json.loads(json.dumps(val, default=str))
        except (AttributeError, TypeError, ValueError):
            continue
    fields.update(name=t.name, display_name=t.display_name, unique_name=t.unique_name,
                  result=m.result, fail_phase=m.fail_phase,
                  fail_reason=m.fail_reason, member_rc=m.rc)
    return fields


def perf_function(value: float, unit: str):
    """A performance variable whose value a member has already measured."""
    return sn.make_performance_function(sn.defer(value), unit)
