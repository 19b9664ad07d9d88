"""A case whose job still waits on the scheduler when the time box closes is named: its job id,
the job's state and the scheduler's reason, on a WAITING line, in the UNFINISHED line and in
the verdict record; it is no hang, and ``--resume`` runs it again.

The parsing is tested on text the test Slurm printed (``squeue``) and ReFrame 4.10 logged;
one live run on the test Slurm holds its only job (``sbatch -H``) past a short time box.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from placement import acceptance, cli
from placement.acceptance import record
from placement.util import scheduler_queue

FIX = Path(__file__).parent / "fixtures" / "runreports"
FIRST = FIX / "generic-first-run.json"          # every case passed

#: ``squeue -h -j 1,2,999 -o '%i|%T|%r'`` on the test Slurm: job 1 submitted held
#: (``sbatch -H``), job 2 to a partition set DOWN, 999 unknown
SQUEUE = "2|PENDING|PartitionDown\n1|PENDING|JobHeldUser\n"

#: ReFrame 4.10.4's debug log (``reframe.log``): five lines as it wrote them for a run-only
#: case on the test Slurm; then, in the same format, a compiled case there (its build job,
#: set up first, local) and a run-only one on the local scheduler
LOG = """\
[2026-12-05T00:14:01.763212] debug: WaitCase /6903903d @testcluster:srun+gnu: [CMD] 'srun --version'
[2026-12-05T00:14:01.772638] debug: WaitCase /6903903d @testcluster:srun+gnu: Setting up <class 'type'> job for test 'WaitCase' (scheduler: 'squeue', launcher: 'srun')
[2026-12-05T00:14:01.796514] debug: WaitCase /6903903d @testcluster:srun+gnu: [CMD] 'sbatch rfm_job.sh'
[2026-12-05T00:14:01.808640] debug: WaitCase /6903903d @testcluster:srun+gnu: Spawned run job (id=1)
[2026-12-05T00:14:03.806670] debug: reframe: [CMD] 'squeue -h -j 1 -o "%%i|%%T|%%N|%%r"'
[2026-12-05T00:14:04.100000] debug: Stream %kernel=triad /1a2b3c4d @testcluster:srun+gnu: Setting up <class 'type'> job for test 'Stream_1' (scheduler: 'local', launcher: 'local')
[2026-12-05T00:14:04.100001] debug: Stream %kernel=triad /1a2b3c4d @testcluster:srun+gnu: Setting up <class 'type'> job for test 'Stream_1' (scheduler: 'squeue', launcher: 'srun')
[2026-12-05T00:14:04.200000] debug: Stream %kernel=triad /1a2b3c4d @testcluster:srun+gnu: Spawned run job (id=2)
[2026-12-05T00:14:05.100000] debug: EndCase %case=a /5e6f7a8b @generic:default+gnu: Setting up <class 'type'> job for test 'EndCase_2' (scheduler: 'local', launcher: 'local')
[2026-12-05T00:14:05.200000] debug: EndCase %case=a /5e6f7a8b @generic:default+gnu: Spawned run job (id=4242)
"""


def test_reframes_log_names_each_run_job_with_its_scheduler():
    assert scheduler_queue.spawned_jobs(LOG.splitlines()) == {"squeue": ["1", "2"],
                                                              "local": ["4242"]}


def test_a_log_of_local_jobs_alone_asks_no_scheduler_and_writes_nothing(tmp_path):
    log = tmp_path / "reframe.log"
    log.write_text("".join(ln + "\n" for ln in LOG.splitlines()[8:]))
    out = tmp_path / "run-report-x.queue"
    assert scheduler_queue.main([str(log), str(out)]) == 0 and not out.exists()
    assert scheduler_queue.main([str(tmp_path / "no.log"), str(out)]) == 0 and not out.exists()
    assert scheduler_queue.main([]) == 2


def test_squeue_text_becomes_states_and_forged_lines_are_dropped():
    forged = ("3|PENDING|Resources\x1b[2J\n4|pending|x\nfive|PENDING|x\n6|RUNNING\n"
              f"7|PENDING|{'R' * 121}\n8_2|PENDING|Priority\n8_3|RUNNING|None\n")
    states = scheduler_queue.parse_squeue(SQUEUE + forged)
    assert states["1"] == scheduler_queue.JobState("1", "PENDING", "JobHeldUser")
    assert states["2"].reason == "PartitionDown" and scheduler_queue.is_waiting("squeue", "PENDING")
    assert not scheduler_queue.is_waiting("slurm", "RUNNING")
    assert states["3"].reason == "" and states["7"].reason == ""    # not a name: left out
    assert "4" not in states and "five" not in states and "6" not in states
    assert states["8"] == scheduler_queue.JobState("8", "PENDING", "Priority")   # array task


#: ``qstat -xml -u root`` on the test Grid Engine (``tests/sge_cluster.py``): job 1 submitted
#: held (``qsub -h``)
QSTAT_XML = """\
<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>1</JB_job_number>
      <JAT_prio>0.00000</JAT_prio>
      <JB_name>j.sh</JB_name>
      <JB_owner>root</JB_owner>
      <state>hqw</state>
      <JB_submission_time>2026-12-05T00:45:26</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
    </job_list>
  </job_info>
</job_info>
"""
#: the start and end of ``qstat -j 1`` there
QSTAT_J = """\
==============================================================
job_number:                 1
exec_file:                  job_scripts/1
submission_time:            Sat Dec  5 00:45:26 2026
owner:                      root
job_name:                   j.sh
binding:                    NONE
job_type:                   NONE
scheduling info:            Job is in hold state
"""


def test_qstat_text_becomes_states_with_the_scheduling_info():
    assert scheduler_queue.parse_qstat_xml(QSTAT_XML) == {
        "1": scheduler_queue.JobState("1", "hqw", "")}
    assert scheduler_queue.parse_qstat_j(QSTAT_J) == {"1": "Job is in hold state"}
    assert scheduler_queue.parse_qstat_xml("<job_info") == {}
    assert scheduler_queue.is_waiting("sge-access", "hqw")
    assert scheduler_queue.is_waiting("sge", "Eqw")
    assert not scheduler_queue.is_waiting("sge", "r")
    assert not scheduler_queue.is_waiting("sge", "dr")
    assert not scheduler_queue.is_waiting("local", "PENDING")


def _waiting_part(tmp_path: Path, queue: dict | None, name: str | None = None) -> tuple[Path, dict]:
    """A part whose case the box interrupted while its Slurm job 1 waited, as ReFrame 4.10
    records it (``jobid`` '1', ``scheduler`` 'squeue', no time limit of its own), with the
    scheduler's answer ``queue`` beside it."""
    data = json.loads(FIRST.read_text())
    tc = next(t for t in data["runs"][0]["testcases"] if not t.get("fixture"))
    tc.update(result="abort", fail_phase="run", time_limit=None, jobid="1",
              scheduler="squeue", fail_reason="aborted due to KeyboardInterrupt")
    if name is not None:
        tc["display_name"] = name
    report = tmp_path / "run-report-acceptance-generic-quick-1.json"
    report.write_text(json.dumps(data))
    if queue is not None:
        report.with_suffix(".queue").write_text(json.dumps(
            {"taken_at": "2026-12-05T00:14:30Z", "errors": [], "jobs": {"squeue": queue}}))
    return report, tc


def _resume_plan(tmp_path: Path, report: Path, capsys) -> list[str]:
    listing = tmp_path / "unfinished-acceptance-generic-quick.run"
    listing.write_text(f"{report.name}\n")
    assert cli.main(["acceptance", "resume", str(listing)]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_held_job_is_named_waiting_not_hung_and_runs_again(tmp_path, capsys):
    states = scheduler_queue.parse_squeue(SQUEUE)
    report, tc = _waiting_part(tmp_path, {j: {"state": s.state, "reason": s.reason}
                                          for j, s in states.items()})
    plan = _resume_plan(tmp_path, report, capsys)
    assert f"skip /{tc['hashcode']}" not in plan and not any(p.startswith("hung ") for p in plan)
    rec = acceptance.verdict_record([report], "generic", "quick", cut_short=True,
                                    notes=["time box of 60s reached: continue with --resume"])
    assert rec.exit_status == 3 and not any(ln.startswith("HUNG ") for ln in rec.lines)
    waiting = [ln for ln in rec.lines if ln.startswith("WAITING ")]
    assert waiting == [f"WAITING {tc['display_name']} @generic:default+gnu [job 1 PENDING "
                       "(JobHeldUser) when the time box closed: waiting on the scheduler, no "
                       f"hang; --resume runs it again] stage={tc['stagedir']}"]
    assert rec.lines[-1].startswith("ACCEPTANCE generic quick: UNFINISHED 19 passed, 0 failed")
    assert rec.lines[-1].endswith("(time box of 60s reached: continue with --resume; 1 case(s) "
                                  f"waiting on the scheduler: {tc['display_name']} job 1 "
                                  "PENDING (JobHeldUser))")
    found = [f for f in rec.findings if f.kind == "WAITING"]
    assert len(found) == 1 and found[0].line == waiting[0]
    assert found[0].partition == "generic:default"
    assert found[0].data == {"case": tc["display_name"], "job": "1", "scheduler": "squeue",
                             "state": "PENDING", "reason": "JobHeldUser"}
    assert "WAITING" in record.KINDS


@pytest.mark.parametrize("queue", [None, {"1": {"state": "RUNNING", "reason": "None"}}, {},
                                   "not json"], ids=["none", "running", "not-listed", "corrupt"])
def test_without_a_waiting_job_a_case_the_box_cut_is_hung_as_before(tmp_path, capsys, queue):
    report, tc = _waiting_part(tmp_path, None if queue == "not json" else queue)
    if queue == "not json":
        report.with_suffix(".queue").write_text("{not json")
    plan = _resume_plan(tmp_path, report, capsys)
    lines, status = acceptance.summary([report], "generic", "quick", None, 10.0, True, [])
    assert status == 3 and f"hung {tc['display_name']}" in plan
    assert sum(ln.startswith("HUNG ") for ln in lines) == 1
    assert not any(ln.startswith("WAITING ") for ln in lines)
    assert "waiting on the scheduler" not in lines[-1]


def test_a_case_name_that_is_no_name_is_shown_by_its_hash(tmp_path):
    report, tc = _waiting_part(tmp_path, {"1": {"state": "PENDING", "reason": "Priority"}},
                               name="Forged\nACCEPTANCE generic quick: PASS")
    lines, _ = acceptance.summary([report], "generic", "quick", None, 10.0, True, [])
    assert f"WAITING /{tc['hashcode']} @generic:default+gnu [job 1 PENDING (Priority)" in \
        "\n".join(lines)
    assert all("Forged" not in ln for ln in lines)


def test_a_snapshot_holding_what_no_scheduler_says_names_nothing_of_it(tmp_path):
    report, tc = _waiting_part(tmp_path, {"1": {"state": "PENDING\nACCEPTANCE x: PASS",
                                                "reason": "JobHeldUser"}})
    lines, _ = acceptance.summary([report], "generic", "quick", None, 10.0, True, [])
    assert not any(ln.startswith("WAITING ") for ln in lines)
    assert all("ACCEPTANCE x" not in ln for ln in lines)
    report, tc = _waiting_part(tmp_path, {"1": {"state": "PENDING", "reason": "a\rb"}})
    lines, _ = acceptance.summary([report], "generic", "quick", None, 10.0, True, [])
    assert "[job 1 PENDING when the time box closed" in "\n".join(lines)


def test_many_waiting_cases_are_counted_in_the_line_and_each_on_its_own():
    waits = [acceptance.waiting.Waiting(f"Case{i}", "s:p+e", str(i), "slurm", "PENDING",
                                        "Resources", "/stage") for i in range(5)]
    note = acceptance.waiting.note(waits)
    assert note.startswith("5 case(s) waiting on the scheduler: Case0 job 0 PENDING "
                           "(Resources); Case1 ")
    assert "Case3" not in note and note.endswith("; 2 more on WAITING lines")


HELD_CHECK = '''
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import sanity_function


@rfm.simple_test
class HeldCase(rfm.RunOnlyRegressionTest):
    """A case whose job the scheduler holds (submitted with ``sbatch -H``): it never starts."""
    valid_systems = ['testcluster:srun']
    valid_prog_environs = ['gnu']
    tags = {'quick'}
    executable = 'echo'
    executable_opts = ['done']

    @sanity_function
    def validate(self):
        return sn.assert_found(r'^done', self.stdout)
'''


@pytest.mark.slurm
@pytest.mark.reframe
def test_a_held_slurm_job_is_named_in_the_unfinished_line(slurm, acceptance_sh, tmp_path):
    checks = tmp_path / "held_check.py"
    checks.write_text(HELD_CHECK)
    results = tmp_path / "results"
    env = {**os.environ, **slurm.env, "PLACEMENT_RESULTS": str(results),
           "PLACEMENT_REPORTS": str(tmp_path / "reports"),
           "PLACEMENT_BASELINES": str(tmp_path / "baselines")}
    proc = acceptance_sh(env, checks, "--job-option=-H",
                         opts=("-s", "testcluster:srun", "-t", "25"), timeout=600)
    out = proc.stdout + proc.stderr
    lines = proc.stdout.rstrip().splitlines()
    assert proc.returncode == 3, out[-4000:]
    line = lines[-1]
    assert line.startswith("ACCEPTANCE testcluster quick: UNFINISHED 0 passed, 0 failed"), line
    held = [ln for ln in lines if ln.startswith("WAITING HeldCase ")]
    assert len(held) == 1, out[-4000:]
    job = held[0].split("[job ", 1)[1].split()[0]
    assert job.isdigit()
    assert f"HeldCase job {job} PENDING (JobHeldUser)" in line, line
    assert not any(ln.startswith("HUNG ") for ln in lines)
    # the job was asked about before ReFrame cancelled it; Slurm now reads it CANCELLED
    queue = next((results / "runs").glob("run-report-*.queue"))
    assert json.loads(queue.read_text())["jobs"]["squeue"][job]["state"] == "PENDING"
    gone = subprocess.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"],
                          env=env, capture_output=True, text=True).stdout.strip()
    assert gone == "CANCELLED"
    # the verdict record keeps it as a finding with its data
    rec = record.read(next((results / "runs").glob("verdict-run-report-*.json")))
    found = [f for f in rec.findings if f.kind == "WAITING"]
    assert [f.data for f in found] == [{"case": "HeldCase", "job": job, "scheduler": "squeue",
                                        "state": "PENDING", "reason": "JobHeldUser"}]
    print(line)
