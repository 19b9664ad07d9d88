"""The node-health family: a few short cases per node, for ``--distribute``.

Why: a partition's nodes, measured in one session, are each other's baseline. These
cases are the few that show the usual ways one node differs from its peers (a missing
DIMM, SMT or a BIOS setting changed, a throttling node, a cpuset left behind) in a
few minutes per node: the node's hwloc fingerprint, the binding probe, memory write
and copy bandwidth (the NUMA matrix where there are two nodes or more), matmul
compact against scatter, and NPB CG and EP. Every value keeps its node: ReFrame's
``--distribute`` adds the ``.nid`` parameter and the run report's ``job_nodelist``.

:class:`NodeHealthMixin` gives a family member its tags and its skip outside
``--distribute``; :class:`NodeFingerprintBase` is the topology fingerprint, as
performance values the peer verdict compares across the nodes, and the node the system
file declares (:func:`declared`), which the peer verdict holds every node to as well.
:class:`NodeHealthFamilyBase` runs the whole family on a node as one job
(:mod:`placement.testlib.family`): ``--distribute`` then makes one job and one generated
test per node and mode, not one per node and case.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import (fixture, parameter, run_after, run_before, sanity_function,
                                   variable)
from reframe.core.exceptions import PerformanceError
from reframe.core.backends import getlauncher

from ..engine import topology
from ..util import PlacementError, repo_root
from . import family, node_topology
from .kernels import SCALE_TAGS, SCALES, SMALL, KernelsBuild
from .placed import BindProbeBuild, PartitionTopologyMixin, pinned_node

#: The family's tag: ``-t nodes`` selects it (with a mode's own tag).
TAG = 'nodes'
#: Tags a base class adds that would put a family member in other families' runs.
OTHER_FAMILIES = {'kernels', 'npb', 'binding'}
#: The line each job prints first: the host it runs on.
HOST_LINE = 'node_health_host'
#: The fingerprint file the capture writes in the stage folder.
XML = 'topology.xml'


class NodeHealthMixin(rfm.RegressionTestPlugin):
    """A member of the node-health family: tag ``nodes``, one environment, run per node.

    Outside ``--distribute`` (no ``.nid``) a case skips at setup with the reason: a
    node judged against its peers needs the peers, and the one-node families measure
    the same things with their own sweeps.
    """

    #: The node ReFrame pinned this case to (``--distribute``; set at setup): every value
    #: of the case keeps it in the run report. ``-S node=HOST`` names the node a run
    #: without ``--distribute`` runs on (a one-node system: this host, a test).
    node = variable(str, value='')
    #: The host name the job itself printed (set after the run): the node it really ran on,
    #: where the scheduler's own record (``job_nodelist``) may be missing.
    job_host = variable(str, value='')

    @run_after('init')
    def node_health_tags(self):
        # one environment: the peers are compared, not the compilers
        self.valid_systems = ['*']
        self.valid_prog_environs = ['gnu']
        self.tags = (set(self.tags) - OTHER_FAMILIES) | {TAG}

    @run_before('setup')
    def only_when_distributed(self):
        self.node = pinned_node(self) or self.node
        self.skip_if(not self.node,
                     'a node-health case runs on each node of a partition: '
                     'add --distribute=all (or idle) to the ReFrame arguments '
                     '(or -S node=HOST on a one-node system)')

    @run_before('run')
    def say_host(self):
        self.prerun_cmds = list(self.prerun_cmds) + [f'echo "{HOST_LINE} $(hostname)"']

    @run_before('sanity')
    def read_host(self):
        path = os.path.join(self.stagedir, sn.evaluate(self.stdout))
        with open(path, errors='replace') as fp:
            hosts = [ln.split()[1] for ln in fp if ln.startswith(HOST_LINE + ' ')
                     and len(ln.split()) == 2]
        self.job_host = hosts[0] if hosts else ''


class NodeFingerprintBase(rfm.RunOnlyRegressionTest, PartitionTopologyMixin):
    """The node's topology as hwloc sees it inside the job: one value per property.

    Each a count or a size the peers should share (:func:`fingerprint`), kept twice: as
    performance values (the history of each) and as the ``fingerprint`` mapping the peer
    verdict compares across the nodes. ``allowed_cpuset`` keeps the job's PUs by number.
    """

    executable = 'sh'
    executable_opts = ['capture.sh']
    time_limit = '2m'
    #: The node's topology in numbers (set after the run; :func:`fingerprint`).
    fingerprint = variable(typ.Dict[str, int], value={})
    #: The PUs this node's jobs may use (set after the run), e.g. ``1`` or ``0-1``.
    allowed_cpuset = variable(str, value='')
    #: What hwloc says of the node in one line (set after the run).
    node_fingerprint = variable(str, value='')
    #: The fingerprint of the node the system file declares (``extras['topology']``; set
    #: after the run; empty where none is declared): every node is held to it as well.
    declared_fingerprint = variable(typ.Dict[str, int], value={})
    #: The topology file the declared node was read from, as the peer verdict's line names it.
    declared_topology = variable(str, value='')
    #: The nodes the system file says the partition has (``extras['nodes']``, what ``site
    #: new`` counted; 0 where it says none): a session that ran on fewer says how many
    #: nodes it did not accept, rather than counting only the nodes it saw.
    declared_nodes = variable(int, value=0)

    @run_before('run')
    def capture_in_job(self):
        # a script file beside the job: its quotes reach the node as written
        with open(os.path.join(self.stagedir, 'capture.sh'), 'w') as fp:
            fp.write(node_topology.CAPTURE + '\n')

    @sanity_function
    def validate(self):
        return sn.assert_true(os.path.isfile(os.path.join(self.stagedir, XML)),
                              msg='lstopo wrote no topology.xml on the node')

    @run_before('performance')
    def describe_node(self):
        path = os.path.join(self.stagedir, XML)
        topo = topology.load(path)
        self.fingerprint = fingerprint(path)
        self.allowed_cpuset = topology.format_ranges(topo.cpus)
        self.node_fingerprint = node_topology.one_line(topo)
        self.declared_fingerprint, self.declared_topology = declared(
            self.current_partition.extras)
        self.declared_nodes = declared_count(self.current_partition.extras)
        self.perf_variables = {k: sn.make_performance_function(_const(v), UNITS.get(k, 'count'))
                               for k, v in self.fingerprint.items()}


#: Units of the fingerprint's values that are not counts.
UNITS = {'numa_memory_gib': 'GiB', 'l1d_kib': 'KiB', 'l2_kib': 'KiB', 'l3_kib': 'KiB'}


def _const(value: int):
    """A deferred constant: a performance variable whose value is already known."""
    return sn.defer(value)


def declared(extras: Mapping) -> tuple[dict[str, int], str]:
    """The node a partition's system file declares (``extras['topology']``, the file ``site
    new`` captured): its :func:`fingerprint` and its path (from the checkout where inside
    it); ``({}, '')`` where none is declared (no file, ``live``) or the file does not read.

    Why recorded with the node's own: the run report then holds both, so the peer verdict
    holds every node to the declared one (a DIMM missing on every node, SMT switched off
    across the partition) without reading system files, and judges a stored run the same
    after the system file changed.
    """
    path = extras.get('topology')
    if not isinstance(path, str) or not path or path == 'live' or not os.path.isfile(path):
        return {}, ''
    try:
        fp = fingerprint(path)
    except (OSError, ET.ParseError, PlacementError):
        return {}, ''
    try:
        shown = str(Path(path).resolve().relative_to(repo_root().resolve()))
    except ValueError:
        shown = path
    return fp, shown


def declared_count(extras: Mapping) -> int:
    """The partition's node count its system file declares (``extras['nodes']``), 0 where
    it declares none or something that is no count."""
    n = extras.get('nodes')
    return n if type(n) is int and n > 0 else 0


def fingerprint(xml_path: str) -> dict[str, int]:
    """The node of an ``lstopo --disallowed`` file in numbers: packages, cores, PUs, SMT,
    NUMA nodes and their memory (in whole GiB: kernels reserve a few MiB more or less from
    boot to boot, a DIMM is GiB), L1d/L2/L3 sizes (all of the node's, whatever the job may
    use), and ``pus_allowed``, the PUs the job may use.

    The whole node is read with the file's ``allowed_cpuset`` left out, so a cpuset left
    behind differs from its peers in ``pus_allowed`` alone, not in cores and PUs too.
    """
    root = ET.parse(xml_path).getroot()
    machine = root.find('object')
    allowed = topology.from_xml(ET.tostring(root, encoding='unicode'), xml_path)
    if machine is not None:
        machine.attrib.pop('allowed_cpuset', None)
    whole = topology.from_xml(ET.tostring(root, encoding='unicode'), xml_path)
    cores = whole.count('Core')
    return {
        'packages': whole.count('Package'), 'cores': cores, 'pus': len(whole.pus),
        'pus_allowed': len(allowed.pus), 'smt': len(whole.pus) // max(1, cores),
        'numa_nodes': len(whole.numa_nodes),
        'numa_memory_gib': round(sum(int(o.get('local_memory', '0')) for o in root.iter('object')
                                     if o.get('type') == 'NUMANode') / 2**30),
        'l1d_kib': whole.cache_sizes.get('L1Cache', 0) // 1024,
        'l2_kib': whole.cache_sizes.get('L2Cache', 0) // 1024,
        'l3_kib': whole.cache_sizes.get('L3Cache', 0) // 1024,
    }


class NodeHealthFamilyBase(rfm.RunOnlyRegressionTest, NodeHealthMixin):
    """The whole family on one node, one job: each member (:attr:`members`) run in turn.

    ``scale`` is the mode: ``small`` runs the members tagged ``quick``, ``large`` those
    tagged ``acceptance`` (and ``full``), so ``-t nodes -t quick`` selects one family test
    per node. The builds are the members' fixtures, once per partition and environment.
    Each member's values are the family's performance variables ``<member>.<var>`` with the
    member's own references; a member that fails (setup, its program, its sanity) has no
    values and fails the node's case in its performance phase, the others still reported.
    """

    #: The member classes (unregistered checks of the family), set by the concrete check.
    members: list = []
    scale = parameter(SCALES)
    kernels = fixture(KernelsBuild, scope='environment')
    bindprobe = fixture(BindProbeBuild, scope='environment')
    executable = 'echo'
    executable_opts = ['node_health_family done']
    #: Variables for the members (``-S member_vars=npb_dir:DIR,budget_scale:2``): ``-S``
    #: reaches the registered family test, not its members.
    member_vars = variable(typ.Dict[str, str], value={})
    #: The member classes to run, by name (``-S only_members=NodeMatmulCheck,NodeMemWriteCheck``;
    #: empty: all): ``-n`` selects the family test, never one of its members.
    only_members = variable(typ.List[str], value=[])
    #: Per member (its ReFrame unique name): its name, result and loggable fields (after
    #: the run), from which a run report reader rebuilds each member's case.
    family = variable(typ.Dict[str, typ.Dict[str, object]], value={})

    @run_after('init')
    def family_tags(self):
        self.tags = set(self.tags) | {TAG} | (SCALE_TAGS[self.scale] - OTHER_FAMILIES)

    @run_after('setup')
    def setup_members(self):
        # the members' launchers run inside this job: the family's script runs as it is
        self.job.launcher = getlauncher('local')()
        mode = 'quick' if self.scale == SMALL else 'acceptance'
        self._members = family.make_members(family.chosen(type(self).members,
                                                          self.only_members), mode)
        for m in self._members:
            family.setup_member(self, m)
        self.family = {m.key: family.record(m) for m in self._members}

    @run_before('run')
    def run_members(self):
        lines, total = [], 0.0
        for m in self._members:
            if m.result:
                continue
            limit = family.write_member_script(m)
            if not m.result:
                lines += family.job_lines(m, limit)
                total += limit + 10
        self.prerun_cmds = list(self.prerun_cmds) + lines
        self.time_limit = max(total, 60.0) + 60

    @sanity_function
    def validate(self):
        return sn.assert_found(rf'^{family.MARK} end ', self.stdout,
                               msg='the family job ran no member')

    @run_before('performance')
    def judge_members(self):
        codes = family.exit_codes(os.path.join(self.stagedir, sn.evaluate(self.stdout)))
        part = self.current_partition.fullname
        refs = dict(self.reference.get(part, {})) if self.reference else {}
        perf = {}
        for m in self._members:
            if m.result:
                continue
            for var, (value, ref, lower, upper, unit) in family.judge_member(
                    m, codes.get(m.key)).items():
                name = f'{m.key}{family.SEP}{var}'
                perf[name] = family.perf_function(value, unit)
                if ref is not None:
                    refs[name] = (ref, lower, upper, unit)
        self.perf_variables = perf
        self.reference = {part: refs} if refs else {}
        self.family = {m.key: family.record(m) for m in self._members}

    @run_after('performance')
    def members_failed(self):
        failed = [f'{m.key} ({m.fail_phase}: {m.fail_reason})' for m in self._members
                  if m.result == 'fail']
        if failed:
            raise PerformanceError(f'{len(failed)} member(s) of the family failed on node '
                                   f'{self.node}: ' + '; '.join(failed))
