"""``placement site new NAME``: a system file written from the cluster's own compute node.

As ``spack compiler find`` writes configuration from what is on the machine, this
asks the scheduler how many nodes the partition has and for one of them, captures
its topology there (``lstopo --of xml`` through the partition's scheduler and
launcher, the job :mod:`placement.testlib.node_topology` submits) and names that
node, tries a task on a second node where there are several, writes
``config/systems/NAME.py`` (one file per system, the lines a site tunes marked
``# site:``) with the topology beside it, shows the thread sweep and the maps the
system gets, then runs the binding and memory-policy checks there and says in
one line whether the node is ready. Run again on a changed node, it says what
changed (PUs, packages, NUMA nodes, numbering) before replacing the file
(:mod:`placement.site`).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..site import capture, ready, scheduler, system_file

description = "describe a cluster: a system file from its compute node"


def setup_parser(site: argparse.ArgumentParser) -> None:
    ssub = site.add_subparsers(dest="site_command", required=True)
    p = ssub.add_parser("new", help="capture a partition's compute node and write its system file")
    p.add_argument("name", help="the system's name (config/systems/NAME.py)")
    p.add_argument("--scheduler", required=True, choices=tuple(system_file.SCHEDULERS))
    p.add_argument("--partition", help="the partition or queue (slurm, sge, pbs)")
    p.add_argument("--host", help="the compute node (ssh)")
    p.add_argument("--launcher", choices=system_file.LAUNCHERS,
                   help="default: srun under slurm, mpirun under pbs, else local")
    p.add_argument("--access", action="append",
                   help="a scheduler option for every job (repeatable; default: the partition "
                        "and whole-node exclusivity)")
    p.add_argument("--no-check", action="store_true",
                   help="write the file without running the binding checks")
    p.add_argument("--force", action="store_true",
                   help="replace the system file and topology of an existing system (after "
                        "saying what changed on the node); without it an existing one is "
                        "left as it is")


def site(args: argparse.Namespace) -> int:
    return {"new": new}[args.site_command](args)


def new(args: argparse.Namespace) -> int:
    name = system_file.check_name(args.name)
    launcher = args.launcher or system_file.SCHEDULERS[args.scheduler][1]
    scheduler.check_partition(args.scheduler, args.partition, args.host)
    access = args.access if args.access else system_file.default_access(args.scheduler,
                                                                        args.partition)
    answers = system_file.Answers(name, args.scheduler, args.partition, launcher, access,
                                  args.host, scheduler.node_count(args.scheduler, args.partition),
                                  system_file.login_pattern())
    dest, topo_dest, node = capture.write_system(answers, args.force, print)
    print(f"wrote {dest} (lines a site tunes are marked '# site:') and {topo_dest}")
    for line in ready.node_lines(node):
        print(line)
    if args.no_check:
        print(f"NOT CHECKED {name}: run `placement site new {name} ...` without --no-check, or "
              f"reframe --system {name} -n '{ready.READY_CHECKS}' -r")
        return 0
    settings = system_file.root() / "config" / "settings.py"
    with tempfile.TemporaryDirectory(prefix="placement-site-") as tmp:
        counts, failed = ready.ready_checks(name, settings, Path(tmp))
    for line in failed[:5]:
        print(f"  failed: {line}")
    summary = f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"
    if counts["fail"] or not counts["pass"]:
        print(f"NODE NOT READY {name}: binding and memory-policy checks: {summary}")
        return 1
    print(f"NODE READY {name}: binding and memory-policy checks: {summary}")
    return 0
