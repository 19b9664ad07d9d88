"""Which NPB values have states between sessions that one baseline session cannot judge.

NPB's class S runs for tens of milliseconds. Its launches agree within a few percent
inside one session, yet the next session may sit in another state: on a 16-core node
BT class S at 1 thread ran 0.044 s in one session and 0.089 s a minute later, and
back (tests/fixtures/aa-xeon16-20261126, the set this rule was chosen on:
:data:`placement.judgement.rules.NPB_SHORT_RUN_S`).
Tight launches then make such a value look *gross* against one baseline session.
The check names them in ``no_bound`` (:class:`placement.testlib.samples.PerfSamplesMixin`):
``record`` writes them no plain bound and the verdict calls them neither gross nor
regressed at any baseline size (with ten baseline sessions such a value
still sat up to x15 beyond its worst one); the acceptance mode's longer classes are judged.
"""

from __future__ import annotations

#: why an NPB run shorter than ``min_judged_s`` gets no plain bound and no gross call
SHORT_RUN_STATES = ('runs shorter than {limit:g} s: start-up and the node\'s states move them '
                    'between sessions by up to 2x (NPB BT class S, 1 thread, on a 16-core node: '
                    '0.044 s in one session, 0.089 s in the next)')


def short_run_states(samples: dict[str, list[float]], limit: float) -> dict[str, str]:
    """``no_bound`` of a case whose runs took under ``limit`` seconds (NPB's ``time``): every
    variable, with :data:`SHORT_RUN_STATES`. Why: within a session such runs agree within a
    few percent, so their launches look tight, yet a session later they sit in another state;
    no handful of baseline sessions tells that from a change."""
    times = samples.get('time') or []
    if not times or sum(times) / len(times) >= limit:
        return {}
    why = SHORT_RUN_STATES.format(limit=limit)
    return {var: why for var, runs in samples.items() if runs}
