"""Whether a job's node is a virtual machine, and what that does to several threads' bandwidth.

A guest's vCPUs are host threads: two of them may run on one host core's
hardware threads or on two cores, and the host decides, for minutes at a time,
out of the guest's sight. Placement inside the guest cannot pin that down. So
the bandwidth that two or more threads write together sits in one of several
states for a whole session. On the sets this rule was chosen on
(:data:`placement.judgement.rules.VIRTUAL_THREAD_STATES`), session
medians of such values sat x2.8-3.6 apart on a 2-core virtual machine and x1.9-2.5
apart on a 16-core KVM guest, while the launches inside a session agreed. The
ReFrame bound (at most x2) then fails an unchanged rerun whenever the baseline
session and the rerun fall in different states, and the verdict would call the
value gross from one baseline session. A bare-metal node keeps its bounds: the
rule acts only where the node's CPUs say a hypervisor runs them.

The job asks the node itself (``/proc/cpuinfo``'s ``hypervisor`` flag, x86):
the login node that runs ReFrame may be another machine.
"""

from __future__ import annotations

import re

#: Runs on the compute node (POSIX sh): ``virtualnode virtual=1`` or ``virtual=0``.
SCRIPT = ("if grep -qw hypervisor /proc/cpuinfo 2>/dev/null; "
          "then echo 'virtualnode virtual=1'; else echo 'virtualnode virtual=0'; fi")

_LINE = re.compile(r"^virtualnode virtual=([01])$", re.M)

#: why such a value gets no plain bound and is never gross from one baseline session
STATES = ("{threads} threads on a virtual machine: the host places its vCPUs out of the "
          "guest's sight, for minutes at a time, so their summed bandwidth has states between "
          "sessions, beyond the x2 bound (session medians of 2 threads on a 2-core VM: 60-218 "
          "GB/s; of 8 threads on a 16-core KVM guest: 66-169 GB/s)")


def parse(text: str) -> bool | None:
    """Whether the job's output says its node is virtual; None if it does not say."""
    m = _LINE.search(text)
    return None if m is None else m.group(1) == "1"


def thread_states(variables: list[str], threads: int, virtual: bool | None,
                  min_threads: int) -> dict[str, str]:
    """``no_bound`` of a case whose ``threads`` write together on a node that is (or is not)
    virtual: every variable with :data:`STATES` from ``min_threads`` threads (the rule's
    value, which the check passes) on a virtual node, none otherwise (an unknown node keeps
    its bounds)."""
    if not virtual or threads < min_threads:
        return {}
    why = STATES.format(threads=threads)
    return {var: why for var in variables}


#: why a cache-sized value of a virtual node gets no plain ReFrame bound (``no_plain_bound``)
CACHE_STATES = ("a cache-sized buffer on a virtual machine: what shares the host core and "
                "its cache with the vCPU is out of the guest's sight, so the value falls to a "
                "half or less for a launch or a whole session while its launches agree in "
                "another (small DataMapCheck at 0.28-0.50, small MatmulCheck at 0.36-0.46, a "
                "one-thread write at 0.21 of the baseline session on a 2-core VM); no bound "
                "of one baseline session fits it. The verdict still judges it: its "
                "confirmation session tells a state from a change")


def cache_states(variables: list[str], cache_sized: bool, virtual: bool | None,
                 stated: dict[str, str]) -> dict[str, str]:
    """``no_plain_bound`` of a case whose buffers are ``cache_sized`` on a node that is (or is
    not) virtual: every variable with :data:`CACHE_STATES`, but those its ``no_bound``
    already ``stated`` (no bound at all, and never gross); none on a bare-metal or unknown
    node."""
    # no plain bound: such values fall to half in another state with tight launches
    if not (virtual and cache_sized):
        return {}
    return {var: CACHE_STATES for var in variables if var not in stated}
