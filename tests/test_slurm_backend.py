"""The Slurm backend of the shift loop against the real localhost cluster: turns as batch jobs."""
from __future__ import annotations

import subprocess

import pytest

from nightshift.hpc.backend import SlurmBackend
from nightshift.hpc.client import make_client
from nightshift.hpc.script import read_status
from nightshift.supervisor.backends.base import LaunchSpec, read_exit
from nightshift.supervisor.config.schema import parse_config
from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.shift.launcher import run_foreground
from nightshift.supervisor.run.paths import RunPaths
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_slurm import QUICK, slurm_cluster, start_if_pending, wait_for  # noqa: F401

pytestmark = pytest.mark.slurm
SLURM = '[slurm]\nclient = "cli"\ntime = "{time}"\npoll_interval = "1s"\nmax_job_retries = {retries}\n{more}'


def backend_for(tmp_path, time="5:00", retries=1, more=""):
    config = parse_config(SLURM.format(time=time, retries=retries, more=more))
    run = RunPaths.for_run(tmp_path / "ws", "20260101-000000-abcd").create()
    return SlurmBackend(config, run, client=make_client("cli", backoff=QUICK)), run


def spec_for(run: RunPaths, command: str, shift: int = 1, turn: int = 1) -> LaunchSpec:
    run.shift_dir(shift).mkdir(parents=True, exist_ok=True)
    f = lambda name: run.turn_file(shift, turn, name)  # noqa: E731
    return LaunchSpec(run_id=run.run_id, shift=shift, turn=turn, command=command, cwd=run.workspace,
                      env={"NIGHTSHIFT_SHIFT": str(shift)}, wrapper=f("sh"), log_file=f("log"),
                      started_file=f("started"), exit_file=f("exit"))


def wait_over(backend, target, timeout=90):
    wait_for(lambda: not backend.is_alive(target), timeout=timeout, what="the turn's job to end")


def test_a_turn_runs_as_a_batch_job_and_reports_its_states(slurm_cluster, tmp_path):
    backend, run = backend_for(tmp_path)
    spec = spec_for(run, "echo agent at work; sleep 3; exit 4")
    target = backend.launch(spec)
    assert target["backend"] == "slurm" and target["job_name"] == f"ns-{run.run_id}-s1t1"
    script = run.turn_file(1, 1, "sbatch").read_text()
    assert f"#SBATCH --job-name=ns-{run.run_id}-s1t1" in script and f"bash {spec.wrapper}" in script
    assert backend.find(spec)["job_id"] == target["job_id"]  # a restarted supervisor adopts, never resubmits
    wait_over(backend, target)  # the loop asks is_alive each tick; that is what polls
    assert read_exit(spec) == 4 and "agent at work" in backend.capture(target)
    assert read_status(run.turn_file(1, 1, "job.json"))["exit"] == 4
    states = [c.get("state") for c in backend.take_changes()]
    assert "RUNNING" in states and states[-1] == "FAILED"
    assert backend.find(spec) is None


def test_a_failing_batch_script_is_resubmitted_a_bounded_number_of_times(slurm_cluster, tmp_path):
    backend, run = backend_for(tmp_path, retries=1, more='setup = "echo setup broke; exit 3"\n')
    spec = spec_for(run, "echo never runs")
    target = backend.launch(spec)
    first = target["job_id"]
    wait_over(backend, target)
    changes = backend.take_changes()
    retries = [c for c in changes if c.get("retry")]
    assert len(retries) == 1 and retries[0]["replaces"] == first and target["job_id"] != first
    end = backend.describe_end(target)
    assert end["reason"] == "job_failed" and "after 1 resubmission" in end["error"]
    assert not spec.started_file.exists() and "setup broke" in spec.log_file.read_text()


def test_requeued_job_stays_the_same_turn(slurm_cluster, tmp_path):
    backend, run = backend_for(tmp_path)
    spec = spec_for(run, 'echo "run $SLURM_RESTART_COUNT"; sleep 8')
    target = backend.launch(spec)
    client = backend.client
    wait_for(lambda: backend.is_alive(target) and (j := backend.job_state(target)) and j.running, what="running")
    # RUNNING comes before the batch script has printed anything: requeue only once the first run is at work,
    # or the first run has nothing to leave in the log (the one failure of a CI run)
    wait_for(lambda: spec.log_file.exists() and "(restart 0)" in spec.log_file.read_text(), what="the first run's output")
    client.requeue(target["job_id"])
    wait_for(lambda: backend.is_alive(target) and (j := backend.job_state(target)) and j.pending, what="requeued")

    def rerun_finished():
        start_if_pending(client, target["job_id"], backend.job_state(target))
        return read_exit(spec) is not None

    wait_for(rerun_finished, every=2, what="the rerun to finish")
    assert read_exit(spec) == 0 and "run 1" in spec.log_file.read_text() and "(restart 0)" in spec.log_file.read_text()
    assert any(c.get("restarts") == 1 for c in backend.take_changes())


def test_terminate_cancels_the_job(slurm_cluster, tmp_path):
    backend, run = backend_for(tmp_path)
    target = backend.launch(spec_for(run, "sleep 300"))
    wait_for(lambda: (j := backend.job_state(target)) and j.running if backend.is_alive(target) else False,
             what="running")
    backend.terminate(target)
    wait_over(backend, target)
    assert backend.describe_end(target)["reason"] == "cancelled"


@pytest.mark.slow
def test_walltime_ends_the_turn_cleanly(slurm_cluster, tmp_path):
    backend, run = backend_for(tmp_path, time="1", more="grace = 30\n")
    spec = spec_for(run, "sleep 600")
    target = backend.launch(spec)
    wait_over(backend, target, timeout=150)
    assert backend.describe_end(target)["reason"] == "walltime"
    assert any(c.get("walltime_signal") for c in backend.take_changes())
    assert read_exit(spec) is None and "DUE TO TIME LIMIT" in spec.log_file.read_text()


def test_shifts_of_a_run_are_batch_jobs_end_to_end(slurm_cluster, workspace):
    wrong = [["write", "check.txt", "no"], ["claim", "done", "all good (it is not)"]]
    fix = [["write", "check.txt", "ok"], ["claim", "done", "fixed check.txt"]]
    ws = workspace.configure({"s1t1": wrong, "s1t2": fix}, backend="slurm",
                             extra=SLURM.format(time="5:00", retries=1, more=""))
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    targets = [e["data"]["target"] for e in ws.events(run) if e["type"] == "agent.started"]
    assert [t["backend"] for t in targets] == ["slurm", "slurm"]
    assert run.turn_file(1, 2, "sbatch").exists() and "scripted agent s1t2" in run.turn_file(1, 2, "log").read_text()
    assert ws.events(run)[-1]["data"]["outcome"] == "done"
    log = subprocess.run(["git", "log", "--format=%s"], cwd=ws.path, capture_output=True, text=True).stdout
    assert "nightshift: shift 1 turn 2: PASS" in log


def test_the_demo_run_with_its_shifts_as_batch_jobs(slurm_cluster, tmp_path):
    from nightshift.supervisor.config.slurm import SlurmConfig
    from nightshift.supervisor.cli.demo import build_workspace
    from nightshift.supervisor.shift.launcher import create_run, resolve_config

    workspace = build_workspace(tmp_path / "demo")
    config = resolve_config(workspace, backend="slurm")
    config = config.model_copy(update={"slurm": SlurmConfig(client="cli", time="10:00", poll_interval=1)})
    run = create_run(workspace, config)
    assert run_foreground(run, say=lambda _: None) == 0
    events = read_events(run.events).events
    started = [e["data"]["target"] for e in events if e["type"] == "agent.started"]
    assert len(started) >= 2 and all(t["backend"] == "slurm" for t in started)
    assert len({t["job_id"] for t in started}) == len(started)  # one job per turn, none submitted twice
    assert events[-1]["data"]["outcome"] == "done"
