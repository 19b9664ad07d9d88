"""Whether a memory policy put the pages where it should, judged from ``numa_maps``.

Why: the binding probe sees the policy a process runs under; only the pages
themselves show that the policy took effect. The datamap kernel prints each
array's ``numa_maps`` line right after initialisation (``numa_maps_init``),
before the kernel's automatic NUMA balancing can move pages, and where each
thread ran. The expectations are the ones the NUMA study relies on:

* ``interleave``: every node of the policy holds its share (within 10%);
* ``bind:N`` and ``preferred:N``: at least 95% of the pages on node N;
* first touch, serial initialisation: at least 95% on the initialising thread's node;
* first touch, parallel initialisation: each node holds the share of rows its
  threads initialised (within 10 percentage points).
"""

from __future__ import annotations

from .numa_pages import ThreadRows, _KV, expected_share, pages_per_node

#: Share of the pages a node must hold under bind/preferred and serial first touch.
MIN_ON_NODE = 0.95
#: Allowed deviation from an even (interleave) or row-proportional (first touch) split.
TOLERANCE = 0.10


def parse(text: str, tag: str = 'numa_maps_init') -> tuple[dict[int, int], list[ThreadRows]]:
    """Pages per node over every array from ``tag`` lines, and the threads' rows and nodes."""
    pages: dict[int, int] = {}
    threads: list[ThreadRows] = []
    for line in text.splitlines():
        if line.startswith(f'{tag} kernel=datamap '):
            for node, n in pages_per_node(line).items():
                pages[node] = pages.get(node, 0) + n
        elif line.startswith('thread kernel=datamap '):
            kv = dict(_KV.findall(line))
            threads.append(ThreadRows(int(kv['thread']), int(kv['node']),
                                      int(kv['row_lo']), int(kv['row_hi'])))
    return pages, threads


def _shares(pages: dict[int, int]) -> str:
    total = sum(pages.values()) or 1
    return ', '.join(f'node {n} {100 * p / total:.0f}%' for n, p in sorted(pages.items()))


def problems(text: str, policy: str, policy_nodes: list[int], init: str) -> list[str]:
    """What is wrong with the pages' placement after initialisation (empty: as expected).

    ``policy`` is the policy's name, ``policy_nodes`` the nodes it names (as
    ``placement.engine.policies`` resolved them), ``init`` ``serial`` or ``parallel``.
    """
    pages, threads = parse(text)
    total = sum(pages.values())
    if total <= 0:
        return ['no numa_maps_init line with resident pages in the output']
    where = f'pages after initialisation: {_shares(pages)}'
    if policy == 'interleave':
        want = 1 / len(policy_nodes)
        off = [n for n in policy_nodes if abs(pages.get(n, 0) / total - want) > TOLERANCE * want]
        return [f'interleave over {policy_nodes} uneven: {where}'] if off else []
    if policy in ('bind', 'preferred'):
        node = policy_nodes[0]
        if pages.get(node, 0) < MIN_ON_NODE * total:
            return [f'{policy} to node {node}: under {MIN_ON_NODE:.0%} there: {where}']
        return []
    if not threads:
        return ['no thread lines in the output: cannot tell where first touch should put pages']
    if init == 'serial':
        node = min(threads, key=lambda t: t.thread).node   # the master thread initialised
        if pages.get(node, 0) < MIN_ON_NODE * total:
            return [f'serial first touch by a thread on node {node}: under '
                    f'{MIN_ON_NODE:.0%} there: {where}']
        return []
    want = expected_share(threads)
    off = [n for n in set(want) | set(pages)
           if abs(pages.get(n, 0) / total - want.get(n, 0.0)) > TOLERANCE]
    if off:
        exp = ', '.join(f'node {n} {100 * s:.0f}%' for n, s in sorted(want.items()))
        return [f'parallel first touch: expected {exp} (the threads\' rows): {where}']
    return []


def numa_balancing(text: str) -> str:
    """``kernel.numa_balancing`` as the kernel printed it: ``0 (off)``, ``1 (on)``, ``unknown``."""
    for line in text.splitlines():
        if line.startswith('sysctl kernel=datamap '):
            v = dict(_KV.findall(line)).get('numa_balancing', '-1')
            return {'0': '0 (off)', '-1': 'unknown'}.get(v, f'{v} (on)')
    return 'unknown'
