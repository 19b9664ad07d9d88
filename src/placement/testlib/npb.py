"""The NPB OpenMP base check: one benchmark, class, thread count, affinity and policy per case.

Concrete checks (``reframe_tests/npb.py``) only choose parameter values and tags,
as hpctestlib's benchmark families do. Everything a case needs comes from here:

* placement: :class:`~placement.testlib.placed.PlacedRunMixin` computes the
  environment and launch prefix with the placement engine and runs the binding
  probe in the same job; ``assert_placed()`` is part of the sanity;
* binaries: :mod:`placement.npb.locate` (``-S npb_dir=``, ``NPB_DIR``, the Spack
  view, PATH); without them the case is skipped with the way to install NPB;
* repeats: the job runs the binary ``repeats`` times in a shell loop written by
  :mod:`placement.npb.loop`, each run under a ``timeout`` watchdog
  (:mod:`placement.npb.budget`) and followed by a marker line
  (:mod:`placement.npb.output`);
* an oversubscribed case (more threads than PUs) first runs the same case at
  the full count and gives each of its runs ten times that wall time;
* references: the system's ``$ref`` file (:mod:`placement.testlib.references`)
  plus the guards every system gets (:mod:`placement.judgement.verdict.guards`).
"""

from __future__ import annotations

import functools
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import (parameter, performance_function, run_after, run_before,
                                   sanity_function, variable)
from reframe.core.exceptions import ReframeError
from reframe.core.pipeline import RegressionTestDict

from ..engine import launch
from ..judgement import repeats
from .. import npb
from ..util import repo_root, spack_spec
from .node_load import NodeLoadMixin
from .placed import PlacedRunMixin, stdout_text
from .references import BaselineReferencesMixin
from .samples import PerfSamplesMixin

AFFINITIES = ['none', 'compact', 'scatter', 'explicit']
#: Memory policies of the full family: every policy of :mod:`placement.engine.policies` but ``bind``,
#: which keeps memory on the placement's nodes, where ``local`` puts NPB's first-touch arrays
#: too, and differs from it only once those nodes run out of memory (MemoryPolicyCheck checks
#: that it applies).
NPB_POLICIES = ['first-touch', 'interleave', 'local', 'preferred']

#: Output of the full-count comparison run of an oversubscribed case.
FULL_RUN_OUTPUT = 'npb-full.out'


class NpbBase(rfm.RunOnlyRegressionTest, PlacedRunMixin, BaselineReferencesMixin,
              PerfSamplesMixin, NodeLoadMixin):
    """One NPB 3.x OpenMP benchmark, repeated, placed and verified."""

    #: The NPB benchmark: BT, CG, EP, FT, SP, LU, MG or IS (a family narrows it).
    benchmark = parameter(list(npb.locate.BENCHMARKS))
    #: NPB's problem class; here S, a family sets its own (S, W quick; A, B acceptance).
    npb_class = parameter(['S'])
    #: OpenMP threads: a number, ``full`` (every PU of the partition) or ``2xfull``;
    #: here 1 and ``full``, resolved into :attr:`num_threads` at setup.
    threads = parameter([1, 'full'])
    #: The thread map (:mod:`placement.engine.maps`): ``none`` (the OS places threads),
    #: ``compact``, ``scatter`` or ``explicit`` (the partition's map); here ``none``.
    affinity = parameter(['none'])
    #: The NUMA memory policy: ``first-touch`` (the kernel's default) or one of
    #: :data:`NPB_POLICIES`; here ``first-touch``.
    policy = parameter(['first-touch'])

    #: How threads are bound: gomp (GOMP_CPU_AFFINITY, what the studies used),
    #: omp, kmp, likwid, numactl, taskset or hwloc.
    binder = variable(str, value='gomp')
    #: The thread count this case runs with, resolved from ``threads`` at setup.
    num_threads = variable(int, value=0)
    #: Runs per case; the studies averaged five. With ``max_repeats`` above it, the
    #: runs always made before the judge is asked.
    repeats = variable(int, value=5)
    #: Adaptive repeats: above ``repeats``, the job asks ``placement judge`` after each
    #: run whether the verdict against the baseline's stored runs (``wall``) is still
    #: undecided, and runs again up to this cap. 0: exactly ``repeats`` runs.
    max_repeats = variable(int, value=0)
    #: Folder with NPB binaries; empty: ``$NPB_DIR``, the Spack view, PATH.
    npb_dir = variable(str, value='')
    #: A case whose run times vary more than this (percent) is unstable: a failed
    #: performance check, only where the baseline keeps no runs of this case; with
    #: stored runs the verdict judges it (undecided at the cap, with its spread).
    cv_limit = variable(float, value=5.0)
    #: Runs shorter than this (seconds) are not judged for stability or collapse:
    #: NPB's timer prints hundredths, and start-up noise dominates.
    min_judged_s = variable(float, value=1.0)
    #: How many times slower this node's cores are than the slow reference core the
    #: budgets assume (:mod:`placement.npb.budget`): every run's watchdog budget and
    #: the job's time limit are this many times longer. An emulated node under QEMU's TCG
    #: needs it. Unset: the partition's ``extras['npb_budget_scale']`` (a slow partition
    #: says it once in its configuration), else 1, a real node; ``-S budget_scale=N``
    #: overrides both. Resolved at setup.
    budget_scale = variable(float, type(None), value=None)
    #: The binary this case runs (set at setup).
    npb_binary = variable(typ.Str[r'.*'], value='')
    #: NPB's ``Version`` line of the runs (set after the run), for the report's provenance.
    npb_version = variable(str, value='')
    #: How the binary was built, from NPB's own report: compiler, flags, compile date.
    npb_build = variable(str, value='')
    #: The Spack spec NPB was installed with (set at setup); empty when not from Spack.
    npb_spec = variable(str, value='')

    reference_index = ['benchmark', 'npb_class', 'num_threads', 'affinity', 'policy']
    valid_systems = ['*']
    # one environment: the binaries are prebuilt, the probe needs C + OpenMP
    valid_prog_environs = ['gnu']
    exclusive_access = True
    keep_files = [FULL_RUN_OUTPUT]
    maintainers = ['placement']

    @run_after('init')
    def describe(self):
        self.descr = (f'NPB {self.benchmark} class {self.npb_class}, {self.threads} threads, '
                      f'{self.affinity} affinity, {self.policy} memory')

    @run_after('setup')
    def check_repeats(self):
        """Zero runs would pass vacuously: refuse a count below one before anything runs."""
        why = repeats.loop_script.refused_count('repeats', self.repeats, 'NPB cases run at least once')
        if why:
            raise ReframeError(why)

    @run_after('setup')
    def resolve_budget_scale(self):
        """``-S budget_scale``, else the partition's extra, else 1; a scale of 0, below it,
        NaN or infinite gives no usable watchdog: refused at setup in one line."""
        part = self.current_partition
        try:
            self.budget_scale = npb.budget.resolve_scale(
                self.budget_scale, part.extras.get(npb.budget.SCALE_EXTRA), part.fullname)
        except ValueError as err:
            raise ReframeError(str(err)) from None

    @run_after('setup')
    def find_binary(self):
        found = npb.locate.locate(self.benchmark, self.npb_class, self.npb_dir or None,
                                  repo_root())
        if found.path:
            self.npb_binary = found.path
            self.npb_spec = spack_spec.of_program(found.path, 'npb')
        elif self.is_dry_run():
            # dry runs write job scripts on machines without NPB (CI): name it for PATH
            self.npb_binary = npb.locate.binary_name(self.benchmark, self.npb_class)
        else:
            self.skip(found.why_missing(self.benchmark, self.npb_class))

    @run_after('setup')
    def check_judge(self):
        """Adaptive repeats need the judge in the job: refuse at setup, in one line, a Python
        that cannot run it (a failing judge would stop the loop at ``repeats`` silently)."""
        if self.max_repeats > self.repeats and self.reference_file.is_file():
            why = repeats.conditions.unavailable()
            if why:
                raise ReframeError(why)

    @run_after('setup')
    def set_time_limit(self):
        self.time_limit = npb.budget.job_time_limit(
            self.benchmark, self.npb_class, self.num_threads, self.topology_pus,
            max(self.repeats, self.max_repeats),  # room for every run the judge may ask
            self.budget_scale)

    @property
    def oversubscribed(self) -> bool:
        return self.num_threads > self.topology_pus

    @run_after('setup')
    def set_program(self):
        # the watchdog is the program; the mixin puts the launch prefix before it
        self.executable = 'timeout'
        self.executable_opts = ['--kill-after=10', npb.loop.LIMIT_ARG,
                                shlex.quote(self.npb_binary)]

    def _full_count_command(self) -> str:
        """The same case at the full count, through the placement engine and the same launcher."""
        topo = self.topology
        explicit = (self._explicit_map(self.current_partition.extras.get('explicit_map'), topo)
                    if self.affinity == 'explicit' else None)
        full = launch.settings(topo, len(topo.pus), self.affinity, self.policy,
                               binder=self.binder, explicit=explicit, oversubscribe=True)
        budget = npb.budget.run_budget(self.benchmark, self.npb_class, len(topo.pus),
                                       len(topo.pus), self.budget_scale)
        env = ['env'] + [f'{k}={v}' for k, v in full.env.items()]
        launcher = self.job.launcher.command(self.job)
        cmd = (launcher + env + full.prefix +
               ['timeout', '--kill-after=10', f'{budget:.0f}', self.npb_binary])
        return shlex.join(cmd) + f' > {FULL_RUN_OUTPUT} 2>&1'

    @run_before('run')
    def write_repeat_loop(self):
        """The whole repeat loop (:mod:`placement.npb.loop`) around the launched program."""
        # after the mixin's hook: the probe line stays first
        budget = npb.budget.run_budget(self.benchmark, self.npb_class, self.num_threads,
                                       self.topology_pus, self.budget_scale)
        loop = npb.loop.script(
            self._repeat_loop(), budget,
            full_count=self._full_count_command() if self.oversubscribed else None,
            full_threads=self.topology_pus)
        self.prerun_cmds = list(self.prerun_cmds) + loop.before
        self.postrun_cmds = loop.after + list(self.postrun_cmds)

    def _has_stored_runs(self) -> bool:
        """Whether the system's baseline keeps this case's runs (``_samples``) of ``wall``."""
        return self.stored_runs('wall') is not None

    def _repeat_loop(self) -> npb.loop.RepeatLoop:
        """Fixed runs, or runs until the judge decides when a cap and the case's stored
        runs exist (without them the judge has nothing to decide by: it would stop the loop
        at ``repeats`` all the same, with an error line for an entry the file lacks)."""
        ref = self.reference_file
        if self.max_repeats <= self.repeats or not ref.is_file() or \
                not self._has_stored_runs():
            return npb.loop.RepeatLoop.fixed(self.repeats)
        walls = ("awk '/^npb-run /{for(i=1;i<=NF;i++) if($i ~ /^wall=/) print substr($i,6)}' "
                 + shlex.quote(sn.evaluate(self.stdout)))
        more = repeats.conditions.shell_condition(ref, self.entry('wall'), walls,
                                         self.repeats, self.max_repeats)
        return npb.loop.RepeatLoop(self.repeats, self.max_repeats, more)

    @property
    def expected_runs(self) -> int:
        """Runs the job should have reported: any count the adaptive loop may stop at."""
        n = len(self._runs)
        return n if self.repeats <= n <= max(self.repeats, self.max_repeats) else self.repeats

    # --- reading the output -------------------------------------------------------------

    @functools.cached_property
    def _runs(self) -> list[npb.output.RunRecord]:
        return npb.output.parse_runs(stdout_text(self))

    @functools.cached_property
    def _full_run(self) -> tuple[npb.output.FullRun | None, npb.output.NpbResult | None]:
        marker = npb.output.parse_full_run(stdout_text(self))
        path = os.path.join(self.stagedir, FULL_RUN_OUTPUT)
        result = None
        if os.path.exists(path):
            with open(path) as fp:
                result = npb.output.parse_result(fp.read())
        return marker, result

    def _full_run_problems(self) -> list[str]:
        if not self.oversubscribed:
            return []
        marker, result = self._full_run
        if marker is None:
            return ['the full-count comparison run did not report']
        if marker.stopped:
            return []          # too slow: judged by `stopped`
        if result is None or not result.complete or not result.verified:
            return [f'the full-count comparison run did not verify (exit status {marker.rc}, '
                    f'see {FULL_RUN_OUTPUT})']
        return []

    @sn.deferrable
    def assert_runs_verified(self):
        """Every run verified, for the class and thread count asked, and none is missing."""
        issues = npb.output.run_problems(self._runs, self.expected_runs, self.npb_class,
                                         self.num_threads) + self._full_run_problems()
        return sn.assert_false(issues, msg='; '.join(issues))

    @sanity_function
    def validate(self):
        return sn.all([self.assert_runs_verified(), self.assert_placed()])

    def _times(self) -> npb.output.Summary:
        return npb.output.summarize([r.time_s for r in npb.output.completed(self._runs)])

    @performance_function('s')
    def time(self):
        """Mean of NPB's ``Time in seconds`` over the runs that completed."""
        return self._times().mean

    @performance_function('s')
    def time_sd(self):
        return self._times().sd or 0.0

    @performance_function('%')
    def time_cv(self):
        """Coefficient of variation of the run times; above ``cv_limit`` the case is unstable."""
        return 100.0 * (self._times().cv or 0.0)

    @performance_function('Mop/s')
    def mops(self):
        return npb.output.summarize([r.mops_total for r in npb.output.completed(self._runs)]).mean

    @performance_function('s')
    def wall(self):
        """Mean wall time of the whole process, as time(1) measured it in the studies."""
        return npb.output.summarize([r.wall_s for r in self._runs if not r.stopped]).mean

    @performance_function('runs')
    def stopped(self):
        """Runs the watchdog ended (a collapse or a run over its budget)."""
        marker, _ = self._full_run if self.oversubscribed else (None, None)
        full_stopped = bool(marker and marker.stopped)
        return sum(r.stopped for r in self._runs) + int(full_stopped)

    def _slowdown(self) -> float:
        """Slowest oversubscribed run over the full-count run's wall time."""
        marker, _ = self._full_run
        return max(r.wall_s for r in self._runs) / max(marker.wall_s, 1e-3)

    @run_before('performance')
    def record_runs(self):
        """Each run's time, Mop/s and wall time, NPB's version and build, into the run report."""
        if self.is_dry_run():
            return
        done = npb.output.completed(self._runs)     # complete: time and Mop/s are set
        self.perf_samples = {'time': [r.time_s for r in done], 'mops': [r.mops_total for r in done],
                             'wall': [r.wall_s for r in self._runs if not r.stopped]}
        self.perf_launches = dict(self.perf_samples)  # each NPB run is its own process
        self.npb_version = next((r.version for r in done if r.version), '')
        self.npb_build = next((r.build for r in done if r.build), '')
        self.no_bound = npb.states.short_run_states(self.perf_samples, self.min_judged_s)

    @run_before('performance')
    def add_guards(self):
        """Stored references for this case plus the fixed guards: unstable, stopped, collapsed."""
        if self.is_dry_run():
            return
        if self.oversubscribed:
            self.perf_variables['slowdown'] = sn.make_performance_function(self._slowdown, 'x')
        guards = {'stopped': (0, None, 0, 'runs')}
        try:
            # with stored runs the verdict judges the spread (undecided, with its CV),
            # not a bare FAIL; without them the fixed `unstable` guard stays
            if self._times().mean >= self.min_judged_s and not self._has_stored_runs():
                guards['time_cv'] = (self.cv_limit, None, 0, '%')
        except ValueError:
            pass                # no completed run: `stopped` fails the case
        marker, _ = self._full_run if self.oversubscribed else (None, None)
        if marker and marker.wall_s >= self.min_judged_s:
            guards['slowdown'] = (npb.budget.COLLAPSE_FACTOR, None, 0, 'x')
        stored = self._stored_references()
        self.reference = {self.current_partition.fullname: {**stored, **guards}}

    def _stored_references(self) -> dict:
        """This case's entries of the system's ``$ref`` file, looked up by ReFrame itself."""
        ref = self.reference
        if isinstance(ref, RegressionTestDict) and ref.index:
            try:
                return dict(ref[self])
            except KeyError:
                return {}
        out = {}
        part = self.current_partition.fullname
        for name in self.perf_variables:
            try:
                out[name] = ref[f'{part}:{name}']
            except KeyError:
                pass
        return out
