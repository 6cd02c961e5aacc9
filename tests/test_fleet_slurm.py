"""Fleets on Slurm, on the real localhost cluster: the lanes' first turns go out as ONE job array, each lane's own
supervisor takes its task for its first turn and goes on with ordinary jobs; a fleet killed right after submitting
the array and resumed submits no second one. Scripted command agents, real git worktrees, a real oracle."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nightshift.hpc.array import array_name
from nightshift.hpc.client import make_client
from tests.fixtures_core import kill_supervisor, nightshift, workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet, lane_events, lane_run_dirs, show, solver  # noqa: F401
from tests.fixtures_slurm import QUICK, slurm_cluster, wait_for  # noqa: F401

pytestmark = pytest.mark.slurm
SLURM = '\n[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\n'
FAST = [["write", "solver.py", solver(1e-8)], ["write", "check.txt", "ok"], ["claim", "done", "converged"]]
# Lane 1 is fast, but its first turn forgets check.txt: its second turn, pushed back, is a job of its own.
SCRIPT = {"lane-1:s1t1": [["write", "solver.py", solver(1e-8)], ["claim", "done", "converged (not yet)"]],
          "lane-1:default": FAST, "default": [["sleep", 300]]}


def targets(run_dir) -> list[dict]:
    return [e["data"]["target"] for e in lane_events(run_dir) if e["type"] in ("agent.started", "agent.adopted")
            and e["data"].get("target")]


@pytest.fixture
def jobs_cancelled(slurm_cluster, fleet):  # noqa: F811
    """Cancel, by id, every job the fleet and its lanes submitted (the array's tasks one by one)."""
    yield fleet
    for run_dir in [*(fleet.ws.path / ".nightshift" / "runs").glob("*"), *lane_run_dirs(fleet.ws.path)]:
        kill_supervisor(run_dir)  # first, so no supervisor submits a job while they are cancelled
    client = make_client("cli", backoff=QUICK)
    ids = {t["job_id"] for d in lane_run_dirs(fleet.ws.path) for t in targets(d)}
    for data in fleet.of("fleet.array_submitted") if (fleet.ws.path / ".nightshift" / "runs").exists() else []:
        ids |= set((data.get("tasks") or {}).values())
    for job_id in ids:
        client.cancel(job_id)


def array_tasks(array_id: int, fleet_id: str) -> dict:
    client = make_client("cli", backoff=QUICK)
    return {j.job_id: j for j in client.query(prefix=array_name(fleet_id)).values()
            if str(j.job_id).startswith(f"{array_id}_")}


@pytest.mark.timeout(600)
def test_three_lanes_first_turns_go_out_as_one_array_the_fast_lane_wins(jobs_cancelled: Fleet):
    fleet = jobs_cancelled
    fleet.configure(SCRIPT, "lanes = 3\n" + SLURM, backend="slurm")
    proc = nightshift("run", "--foreground", "--no-check", cwd=fleet.ws.path, timeout=500)
    assert proc.returncode == 0, proc.stdout + proc.stderr + show(fleet)
    fleet_id = fleet.run_dir().name
    [array] = fleet.of("fleet.array_submitted")
    assert array["lanes"] == [1, 2, 3] and isinstance(array["job_id"], int), show(fleet)
    a = array["job_id"]
    assert array["tasks"] == {"1": f"{a}_0", "2": f"{a}_1", "3": f"{a}_2"}
    script = (fleet.run_dir() / "slurm" / "array" / "array.sbatch").read_text()
    assert "#SBATCH --array=0-2" in script and f"--job-name={array_name(fleet_id)}" in script
    # the controller knows one array with a task per lane (its own id "<array>_<task>")
    tasks = array_tasks(a, fleet_id)
    assert sorted(tasks) == [f"{a}_0", f"{a}_1", f"{a}_2"], tasks
    # each lane's first turn ran in its task, nothing submitted for it; lane 1 went on with a job of its own
    by_lane = {d.name.rsplit("-l", 1)[1]: d for d in lane_run_dirs(fleet.ws.path)}
    for k, task in (("1", f"{a}_0"), ("2", f"{a}_1"), ("3", f"{a}_2")):
        first = targets(by_lane[k])[0]
        assert first["job_id"] == task and first["array_id"] == a, (k, first)
    later = [t["job_id"] for t in targets(by_lane["1"])[1:]]
    assert later and all(isinstance(j, int) for j in later), targets(by_lane["1"])
    assert "scripted agent lane-1:s1t1" in (by_lane["1"] / "shifts" / "1" / "t1.log").read_text()
    # the fast lane won, was checked by the fleet and merged; the run is done
    assert fleet.of("run.finished")[-1]["outcome"] == "done", show(fleet)
    ended = {d["lane"]: d["outcome"] for d in fleet.of("lane.ended")}
    assert ended[1] == "verified" and ended[2] == ended[3] == "stopped", show(fleet)
    assert fleet.git("show", "HEAD:check.txt") == "ok" and "1e-08" in fleet.git("show", "HEAD:solver.py")


@pytest.mark.timeout(600)
@pytest.mark.parametrize("crash_after", ["fleet.array_submitting", "fleet.array_submitted"])
def test_kill_9_right_after_the_array_and_resume_submits_no_second_array(jobs_cancelled: Fleet, crash_after):
    """Killed once the array is recorded as submitted, or as about to be (then the resumed fleet looks for it by
    its name first, and submits it only where the controller has none)."""
    fleet = jobs_cancelled
    fleet.configure({"lane-1:default": [["sleep", 2], *FAST], "default": [["sleep", 300]]}, "lanes = 2\n" + SLURM,
                    backend="slurm")
    proc = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", "--foreground", "--no-check"],
                          cwd=fleet.ws.path, capture_output=True, text=True, timeout=200,
                          env={**os.environ, "NIGHTSHIFT_TEST_CRASH_AFTER": crash_after})
    assert proc.returncode == -9, proc.stdout + proc.stderr  # killed right after recording the event
    assert not fleet.of("lane.started") and len(fleet.of(crash_after)) == 1
    assert nightshift("resume", fleet.run_dir().name, cwd=fleet.ws.path).returncode == 0
    wait_for(lambda: fleet.of("run.finished"), timeout=300, what="the resumed fleet to finish")
    assert fleet.of("run.finished")[-1]["outcome"] == "done", show(fleet)
    assert len(fleet.of("fleet.array_submitting")) == len(fleet.of("fleet.array_submitted")) == 1, show(fleet)
    a = fleet.of("fleet.array_submitted")[0]["job_id"]
    assert fleet.of("fleet.array_submitted")[0]["found"] is False  # one sbatch, by the supervisor that recorded it
    assert sorted(array_tasks(a, fleet.run_dir().name)) == [f"{a}_0", f"{a}_1"]
    client = make_client("cli", backoff=QUICK)
    arrays = {str(j.job_id).split("_")[0] for j in client.query(prefix=array_name(fleet.run_dir().name)).values()}
    assert arrays == {str(a)}  # no second array was ever queued
    for run_dir in lane_run_dirs(fleet.ws.path):
        first = targets(run_dir)[0]
        assert str(first["job_id"]).startswith(f"{a}_"), first  # each lane still took its task
        launched = [(e["shift"], e["data"]["turn"]) for e in lane_events(run_dir) if e["type"] == "agent.started"]
        assert len(launched) == len(set(launched)), run_dir


@pytest.mark.timeout(600)
def test_a_submitted_fleet_runs_its_supervisor_in_the_chain_of_batch_jobs(slurm_cluster, fleet: Fleet):  # noqa: F811
    from nightshift.hpc.chain import cancel_chain, chain_jobs, read_record
    from nightshift.hpc.submit import submit_run
    from nightshift.supervisor.run.paths import RunPaths
    from tests.fixtures_core import require_tool

    require_tool("tmux")
    fleet.configure({"lane-1:default": FAST, "default": [["sleep", 300]]}, "lanes = 2\n" + SLURM, backend="local")
    run_id, first = submit_run(fleet.ws.path)
    run = RunPaths.for_run(fleet.ws.path, run_id)
    client = make_client("cli", backoff=QUICK)
    try:
        wait_for(lambda: fleet.of("run.finished"), timeout=300, what="the fleet to finish inside its job")
        wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), what="the chain to end")
    finally:
        cancel_chain(run, client)  # by the ids the controller gives for this run's chain
    assert fleet.of("run.finished")[-1]["outcome"] == "done", show(fleet)
    record = read_record(run)
    assert record[0]["what"] == "submitted" and record[0]["job_id"] == first
    assert record[1]["what"] == "started" and record[-1]["what"] == "finished", record
    # the job ran the fleet's supervisor: lanes in worktrees, the fast one checked by the fleet and merged
    started = [e for e in fleet.events() if e["type"] == "supervisor.started"]
    assert started and started[0]["data"].get("phase") == "fleet", show(fleet)
    assert sorted(d["lane"] for d in fleet.of("lane.started")) == [1, 2]
    assert [d["lane"] for d in fleet.of("lane.ended") if d["outcome"] == "verified"] == [1]
    assert fleet.git("show", "HEAD:check.txt") == "ok"
    assert not fleet.of("fleet.array_submitted")  # inside the job the lanes' agents run on its node, no array


def test_a_fleet_that_cannot_start_is_refused_by_submit_in_one_line(slurm_cluster, fleet: Fleet):  # noqa: F811
    fleet.configure({}, "lanes = 2\n" + SLURM, backend="local")
    (fleet.ws.path / "notes.txt").write_text("uncommitted")
    subprocess.run(["git", "add", "notes.txt"], cwd=fleet.ws.path, check=True)
    proc = nightshift("submit", "--no-check", str(fleet.ws.path), cwd=fleet.ws.path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "uncommitted change" in proc.stderr, proc.stderr
    assert "commit or stash them" in proc.stderr
    assert not list(fleet.ws.path.glob(".nightshift/runs/*"))
    proc = nightshift("submit", "--no-check", "--lanes", "0", str(fleet.ws.path), cwd=fleet.ws.path)
    assert proc.returncode == 2 and "--lanes 0: a fleet needs 1 lane or more" in proc.stderr, proc.stderr


def test_the_tasks_of_an_array_are_read_from_the_controllers_one_answer():
    """scontrol -o show job as Slurm 22.05 writes an array: the tasks still waiting share one record, a started task
    has its own line; each is known by "<array>_<task>" (no cluster needed)."""
    from nightshift.hpc.cli_client import _parse_jobs, array_tasks

    waiting = ("JobId=41 ArrayJobId=41 ArrayTaskId=1-2%5 JobName=ns-f-array UserId=root(0) GroupId=root(0) "
               "JobState=PENDING Reason=Resources Dependency=(null) Restarts=0 ExitCode=0:0 RunTime=00:00:00 "
               "TimeLimit=00:05:00 NodeList= BatchHost= NumCPUs=1")
    running = ("JobId=42 ArrayJobId=41 ArrayTaskId=0 JobName=ns-f-array UserId=root(0) GroupId=root(0) "
               "JobState=RUNNING Reason=None Restarts=0 ExitCode=0:0 RunTime=00:00:07 TimeLimit=00:05:00 "
               "NodeList=localhost BatchHost=localhost NumCPUs=1")
    assert [(j.job_id, j.state) for j in _parse_jobs(waiting)] == [("41_1", "PENDING"), ("41_2", "PENDING")]
    assert [(j.job_id, j.state, j.node) for j in _parse_jobs(running)] == [("41_0", "RUNNING", "localhost")]
    assert array_tasks("0-6:3,9") == [0, 3, 6, 9] and array_tasks("garbage") == []


def test_a_lane_takes_its_offered_task_once_and_the_task_runs_that_turns_wrapper(tmp_path):
    """The hand-over between the fleet, a lane's supervisor and the array task, with real files and real bash (the
    task's side runs as Slurm would run it, with SLURM_ARRAY_TASK_ID set; no cluster needed)."""
    from nightshift.hpc import array

    fleet_root, lane = tmp_path / "fleet", tmp_path / "lane run"
    fleet_root.mkdir(), lane.mkdir()
    wrapper, log = lane / "t1.sh", lane / "t1.log"
    wrapper.write_text("echo the first turn of the lane\n")
    assert array.claim(lane, 1, 1, wrapper, log) is None  # nothing offered: the lane submits its own job
    array.offer(lane, fleet_root, 77, 1)
    assert array.claim(lane, 1, 2, wrapper, log) is None  # the offer is for the first turn only
    took = array.claim(lane, 1, 1, wrapper, log)
    assert took["job_id"] == "77_1" and took["status_file"].endswith("task-1.job.json")
    assert array.claim(lane, 1, 1, wrapper, log) is None and array.claimed(lane, 1, 1) == took  # taken once
    array.offer(lane, fleet_root, 78, 1)  # a fleet resumed later offers nothing again
    assert array.claimed(lane, 1, 1)["job_id"] == "77_1" and not (lane / array.OFFER).exists()
    task = tmp_path / "task.sh"
    task.write_text(array.dispatcher([tmp_path / "nobody", lane]))
    proc = subprocess.run(["bash", str(task)], env={**os.environ, "SLURM_ARRAY_TASK_ID": "1"}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "runs" in proc.stdout and log.read_text() == "the first turn of the lane\n"
    proc = subprocess.run(["bash", str(task)], env={**os.environ, "SLURM_ARRAY_TASK_ID": "5"}, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 3 and "belongs to no lane" in proc.stderr


def test_an_array_submitted_but_not_yet_recorded_is_found_by_its_name_not_submitted_again(slurm_cluster, tmp_path):
    """The window the event log cannot close: sbatch answered, the supervisor died before recording the id."""
    from nightshift.hpc import array
    from nightshift.supervisor.config.schema import parse_config
    from nightshift.supervisor.run.paths import RunPaths

    config = parse_config(SLURM)
    run = RunPaths.for_run(tmp_path / "ws", "20260101-000000-arr1").create()
    roots = [tmp_path / "lane-1", tmp_path / "lane-2"]
    client = make_client("cli", backoff=QUICK)
    first = array.submit(config, run, roots, look=False)
    try:
        assert set(first) == {"job_id"}
        again = array.submit(config, run, roots, look=True)
        assert again == {"job_id": first["job_id"], "found": True}
        assert sorted(array_tasks(first["job_id"], run.run_id)) == [f"{first['job_id']}_0", f"{first['job_id']}_1"]
    finally:
        for k in range(2):
            client.cancel(f"{first['job_id']}_{k}")


@pytest.mark.timeout(600)
def test_an_array_slurm_refuses_is_said_in_slurms_words_and_the_fleet_ends_without_a_traceback(jobs_cancelled: Fleet):
    fleet = jobs_cancelled
    fleet.configure({"default": FAST}, "lanes = 2\n" + SLURM + 'partition = "nosuchpartition"\n', backend="slurm")
    proc = nightshift("run", "--foreground", "--no-check", cwd=fleet.ws.path, timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    [array] = fleet.of("fleet.array_submitted")
    assert array["job_id"] is None and "invalid partition" in array["refused"].lower(), array
    finished = fleet.of("run.finished")[-1]
    assert finished["outcome"] == "failed" and "fix [slurm] in" in finished["reason"], show(fleet)
    assert "Invalid partition" in proc.stdout + proc.stderr, proc.stdout + proc.stderr  # Slurm's words, to the user
    assert not fleet.of("lane.started")  # no lane's supervisor was started only to be refused the same way
