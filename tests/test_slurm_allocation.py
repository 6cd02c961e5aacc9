"""The allocation a Slurm run spends, without a cluster: GPUs read from TRES/gres strings, a job's core-hours from
sacct or else elapsed x CPUs (said so), a job that vanished, the fold of the job events, and the lines the TUI
and `status` show."""
from __future__ import annotations

from nightshift.hpc.accounting import FROM_ELAPSED, FROM_SACCT, job_usage
from nightshift.hpc.backend import job_event
from nightshift.hpc.jobs import JobInfo, gpus_in
from nightshift.supervisor.run.allocation import allocation, describe
from nightshift.supervisor.run.state import apply, empty_state
from nightshift.tui.slurm_view import chain_line, end_line, state_text, where_cell


def test_gpus_from_tres_and_gres_strings():
    assert gpus_in("cpu=4,mem=8G,node=1,billing=4,gres/gpu=2,gres/gpu:a100=2") == 2  # the untyped count wins
    assert gpus_in("gpu:a100:2") == 2 and gpus_in("gpu:1") == 1 and gpus_in("gpu:a100:1,gpu:v100:1") == 2
    assert gpus_in("cpu=1,node=1") == 0 and gpus_in("") == 0 and gpus_in("gpumem=4") == 0


def test_usage_from_sacct_else_elapsed_times_cpus_said_so():
    last = JobInfo(1, "ns-x", "COMPLETED", run_time=1800, cpus=4, gpus=1, start=1000.0)
    acct = JobInfo(1, "ns-x", "COMPLETED", run_time=3600, cpus=8, gpus=2)
    assert job_usage(last, acct) == {"core_hours": 8.0, "gpu_hours": 2.0, "elapsed": 3600, "cpus": 8, "gpus": 2,
                                     "accounting": FROM_SACCT}
    assert job_usage(last, None)["core_hours"] == 2.0 and job_usage(last, None)["accounting"] == FROM_ELAPSED
    assert job_usage(None, None) is None  # nothing known: nothing counted, never a guess


def test_a_job_that_vanished_while_running_counts_to_its_scripts_end():
    seen = JobInfo(2, "ns-x", "RUNNING", run_time=60, cpus=2, start=1000.0)
    assert job_usage(seen, None, ended=1000.0 + 3600)["core_hours"] == 2.0
    assert job_usage(seen, None, ended=None)["core_hours"] == round(60 * 2 / 3600, 6)


def fold(*datas):
    state = empty_state()
    for seq, data in enumerate(datas, start=1):
        kind = data.pop("type", "slurm.job_changed")
        apply(state, {"seq": seq, "ts": "2026-11-22T08:00:00.0Z", "type": kind, "shift": 1, "data": data})
    return state


def test_the_fold_keeps_the_job_counts_spending_and_the_last_end():
    running = JobInfo(7, "ns-r", "RUNNING", node="n1", start=1000.0, time_limit=3600, run_time=10, cpus=4)
    ended = JobInfo(7, "ns-r", "TIMEOUT", reason="TimeLimit", node="n1", start=1000.0, time_limit=3600,
                    run_time=3600, cpus=4)
    state = fold(job_event(7, running), job_event(7, ended, **job_usage(ended, None)),
                 {"type": "agent.stopped", "reason": "walltime"}, job_event(8, None, retry=1, replaces=7,
                                                                            message="resubmitted as 8"))
    assert state["core_hours"] == 4.0 and state["accounting"] == [FROM_ELAPSED] and state["slurm_jobs"] == 2
    assert "resubmitted as 8" in end_line(state) and "job 7 ended TIMEOUT (TimeLimit)" in end_line(state)
    gone = fold(job_event(7, running), job_event(7, None))
    assert gone["slurm"]["state"] == "RUNNING" and gone["slurm"]["gone"]  # the last known state, marked gone


def test_allocation_counts_the_running_job_and_the_burn_rate():
    state = fold(job_event(7, JobInfo(7, "ns-r", "RUNNING", node="n1", start=1000.0, time_limit=7200, cpus=8)))
    alloc = allocation(state, now=2800.0)
    assert alloc.core_hours == 4.0 and alloc.cores_now == 8 and alloc.rate == 8.0
    assert describe(alloc, 100) == "4.00 core-h of 100 · 8.00 core-h/h · 8 cores now"
    assert where_cell(state, 2800.0) == "slurm 7 RUNNING n1 1:30 left"


def test_state_words_with_slurms_reason():
    assert state_text({"state": "PENDING", "reason": "Priority"}) == "PENDING (Priority)"
    assert state_text({"state": "COMPLETING", "node": "n3"}) == "COMPLETING on n3"
    assert state_text({"state": "OUT_OF_MEMORY", "reason": "OutOfMemory"}) == "OUT_OF_MEMORY (OutOfMemory)"
    assert state_text({}) == "submitted"


def test_the_chain_line_from_the_chain_record():
    records = [{"what": "submitted", "job_id": 10}, {"what": "started", "job_id": 10, "node": "n1"},
               {"what": "submitted", "job_id": 11}, {"what": "walltime_warning", "job_id": 10},
               {"what": "started", "job_id": 11, "node": "n2"}, {"what": "submitted", "job_id": 12}]
    assert chain_line(records) == ("chain: job 2 of the chain (11) on n2 · successor 12 queued · job 10 reached its "
                                   "walltime; job 11 continued from the event log")
    assert chain_line([{"what": "submitted", "job_id": 5}]) == "chain: job 5 submitted, not started yet"
    assert chain_line([]) is None


def test_the_chain_line_shows_the_running_jobs_time_left():
    records = [{"what": "submitted", "job_id": 10},
               {"what": "started", "job_id": 10, "node": "n1", "start": 1000.0, "time_limit": 3600, "cpus": 4}]
    assert chain_line(records, now=1600.0) == "chain: job 1 of the chain (10) on n1 · elapsed 0:10:00 · 0:50:00 left"


def test_a_submitted_runs_allocation_from_its_chain_record(tmp_path):
    import json

    from nightshift.supervisor.run.allocation import CHAIN_SOURCE, chain_usage

    (tmp_path / "slurm").mkdir()
    records = [{"what": "started", "job_id": 1, "start": 0.0 + 1000, "cpus": 2, "ts": 1000},
               {"what": "started", "job_id": 2, "start": 4600.0, "cpus": 4, "ts": 4600},  # job 1 ran 1 h on 2 CPUs
               '{"what": "torn']
    (tmp_path / "slurm" / "chain.jsonl").write_text("\n".join(r if isinstance(r, str) else json.dumps(r)
                                                              for r in records))
    assert chain_usage(tmp_path, now=4600.0 + 1800) == (2.0 + 2.0, 4, 1000.0)  # job 2: half an hour on 4 CPUs
    alloc = allocation(empty_state(), 4600.0 + 1800, tmp_path)
    assert alloc.core_hours == 4.0 and alloc.cores_now == 4 and alloc.accounting == CHAIN_SOURCE


# `scontrol -o show job` lines as Slurm prints them (shortened): 22.05 says TRES= (what the job holds) and, for a
# GPU request, TresPerNode=; 23.02 and later say ReqTRES= and AllocTRES= (the latter "(null)" while it waits).
SCONTROL_2205_RUNNING = (
    "JobId=41 JobName=ns-a-t1 UserId=ana(1000) GroupId=ana(1000) JobState=RUNNING Reason=None Dependency=(null) "
    "Requeue=1 Restarts=0 BatchFlag=1 ExitCode=0:0 RunTime=00:10:00 TimeLimit=01:00:00 "
    "StartTime=2026-11-20T10:00:00 Partition=gpu NodeList=g7 BatchHost=g7 NumNodes=1 NumCPUs=8 NumTasks=1 "
    "CPUs/Task=8 TRES=cpu=8,mem=32G,node=1,billing=8,gres/gpu=2 TresPerNode=gres:gpu:2")
SCONTROL_2205_PENDING = (
    "JobId=42 JobName=ns-a-t2 UserId=ana(1000) JobState=PENDING Reason=Resources Dependency=(null) "
    "RunTime=00:00:00 TimeLimit=01:00:00 StartTime=Unknown Partition=gpu NodeList=(null) NumNodes=1 NumCPUs=8 "
    "TRES=cpu=8,mem=32G,node=1,billing=8 TresPerNode=gres:gpu:a100:3")
SCONTROL_2311_RUNNING = (
    "JobId=51 JobName=ns-b-t1 UserId=ana(1000) GroupId=ana(1000) JobState=RUNNING Reason=None Dependency=(null) "
    "RunTime=03:55:39 TimeLimit=3-00:00:00 StartTime=2026-11-20T10:00:00 Partition=a100 NodeList=gpu14 "
    "BatchHost=gpu14 NumNodes=1 NumCPUs=12 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "ReqTRES=cpu=1,mem=4000M,node=1,billing=12,gres/gpu=1 "
    "AllocTRES=cpu=12,mem=48000M,node=1,billing=12,gres/gpu=4,gres/gpu:a100=4 Socks/Node=* TresPerNode=gres/gpu:1")
SCONTROL_2311_PENDING = (
    "JobId=52 JobName=ns-b-t2 UserId=ana(1000) JobState=PENDING Reason=Priority Dependency=(null) "
    "RunTime=00:00:00 TimeLimit=11:00:00 StartTime=Unknown Partition=gpu NodeList=(null) NumNodes=1 NumCPUs=8 "
    "ReqTRES=cpu=8,mem=32G,node=1,billing=8,gres/gpu=2 AllocTRES=(null)")
SCONTROL_2311_CPU_ONLY = (
    "JobId=53 JobName=ns-b-t3 UserId=ana(1000) JobState=RUNNING Reason=None RunTime=00:01:00 TimeLimit=01:00:00 "
    "StartTime=2026-11-20T10:00:00 NodeList=c1 BatchHost=c1 NumCPUs=4 ReqTRES=cpu=4,mem=8G,node=1,billing=4 "
    "AllocTRES=cpu=4,mem=8G,node=1,billing=4")


def test_gpu_counts_from_scontrol_lines_of_old_and_new_slurm():
    from nightshift.hpc.cli_client import _parse_line

    assert _parse_line(SCONTROL_2205_RUNNING).gpus == 2
    assert _parse_line(SCONTROL_2205_PENDING).gpus == 3  # what it asks for, while it waits
    running = _parse_line(SCONTROL_2311_RUNNING)
    assert running.gpus == 4 and running.cpus == 12  # what it was given, not the 1 it asked for
    assert _parse_line(SCONTROL_2311_PENDING).gpus == 2  # AllocTRES is "(null)" until it runs
    assert _parse_line(SCONTROL_2311_CPU_ONLY).gpus == 0
