"""`nightshift submit`: the whole run as a self-continuing chain of batch jobs on the localhost cluster."""
from __future__ import annotations

import pytest

from nightshift.hpc.chain import attach_argv, cancel_chain, chain_jobs, read_record
from nightshift.hpc.client import make_client
from nightshift.hpc.submit import submit_run
from nightshift.supervisor.run.paths import RunPaths
from tests.fixtures_core import require_tool, workspace  # noqa: F401
from tests.fixtures_slurm import QUICK, slurm_cluster, wait_for  # noqa: F401

pytestmark = pytest.mark.slurm
FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed check.txt"]]
SLURM = '[slurm]\nclient = "cli"\ntime = "{time}"\ngrace = 30\npoll_interval = "1s"\n'


def run_of(ws, run_id: str) -> RunPaths:
    return RunPaths.for_run(ws.path, run_id)


def finished(ws, run):
    events = ws.events(run)
    return events and events[-1]["type"] == "run.finished" and events[-1]


def test_a_submitted_run_finishes_in_its_job_and_cancels_its_continuation(slurm_cluster, workspace):
    require_tool("tmux")
    ws = workspace.configure({"s1t1": FIX}, backend="local", extra=SLURM.format(time="5:00"))
    run_id, first = submit_run(ws.path)
    run = run_of(ws, run_id)
    assert run.root.joinpath("slurm", "supervisor.sbatch").read_text().count("#SBATCH --signal=B:USR1@30") == 1
    end = wait_for(lambda: finished(ws, run), timeout=150, what="the run to finish inside its job")
    assert end["data"]["outcome"] == "done"
    client = make_client("cli", backoff=QUICK)
    wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), what="the chain to end")
    what = [r["what"] for r in read_record(run)]
    assert what[:3] == ["submitted", "started", "submitted"] and "cancelled" in what and what[-1] == "finished"
    started = read_record(run)[1]  # what the TUI shows of the chain's running job, without asking Slurm
    assert started["job_id"] == first and started["time_limit"] == 300 and started["start"] and started["cpus"] == 1
    states = {j.job_id: j.state for j in chain_jobs(run, client)}
    assert states[first] == "COMPLETED" and sorted(states.values()) == ["CANCELLED", "COMPLETED"]
    assert [t for t in ws.types(run) if t == "agent.started"] == ["agent.started"]
    assert ws.types(run).index("tests.baseline") < ws.types(run).index("shift.started")  # taken in the job, first


def test_stop_cancels_the_whole_chain(slurm_cluster, workspace):
    require_tool("tmux")
    ws = workspace.configure({"s1t1": [["sleep", 300]]}, backend="local", extra=SLURM.format(time="5:00"))
    run_id, first = submit_run(ws.path)
    run = run_of(ws, run_id)
    client = make_client("cli", backoff=QUICK)
    wait_for(lambda: len(chain_jobs(run, client)) == 2 and "agent.started" in ws.types(run), timeout=150,
             what="the job running the agent, with its successor queued")
    argv = attach_argv(run, client)
    assert argv[:4] == ["srun", f"--jobid={first}", "--overlap", "--pty"] and argv[-3:] == ["attach", "-t", "agent"]
    assert sorted(cancel_chain(run, client)) == sorted(j.job_id for j in chain_jobs(run, client))
    wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), what="every job of the chain to end")


@pytest.mark.slow
def test_a_job_killed_at_its_walltime_is_continued_by_the_next(slurm_cluster, workspace):
    require_tool("tmux")
    ws = workspace.configure({"s1t1": [["sleep", 600]], "s2t1": FIX}, backend="local", extra=SLURM.format(time="1"))
    run_id, first = submit_run(ws.path)
    run = run_of(ws, run_id)
    end = wait_for(lambda: finished(ws, run), timeout=400, every=2, what="the continuation to finish the run")
    assert end["data"]["outcome"] == "done"
    types = ws.types(run)
    nudges = [e for e in ws.events(run) if e["type"] == "command.accepted" and e["data"].get("verb") == "nudge"]
    assert nudges and "walltime" in nudges[0]["data"]["args"]["message"]  # the USR1 wrap-up reached the run
    assert types.count("supervisor.started") == 2 and types.count("shift.started") == 2
    assert types.count("tests.baseline") == 1  # the test ratchet's start, kept by the continuation (issue #28)
    record = read_record(run)
    assert [r["what"] for r in record].count("started") == 2 and any(r["what"] == "walltime_warning" for r in record)
    client = make_client("cli", backoff=QUICK)
    states = {j.job_id: j.state for j in chain_jobs(run, client)}
    assert states.get(first) == "TIMEOUT"


def test_slurm_modules_setup_and_env_reach_the_checks_in_the_job(slurm_cluster, workspace):
    """The tests (like the oracle) run in the job beside the agent: they see [slurm] setup and env, which this
    shell does not have, so the run can only pass inside a job that set them up."""
    require_tool("tmux")
    check = 'test "$(cat check.txt)" = ok && test "$NS_PROBE" = "on air" && test "$NS_SETUP" = yes'
    extra = SLURM.format(time="5:00") + 'setup = "export NS_SETUP=yes"\nenv = {NS_PROBE = "on air"}\n'
    ws = workspace.configure({"s1t1": FIX}, backend="local", test_command=check, extra=extra)
    run_id, _ = submit_run(ws.path)
    run = run_of(ws, run_id)
    end = wait_for(lambda: finished(ws, run), timeout=150, what="the run to finish inside its job")
    assert end["data"]["outcome"] == "done"
    script = run.root.joinpath("slurm", "supervisor.sbatch").read_text().splitlines()
    assert "export NS_SETUP=yes" in script and "export NS_PROBE='on air'" in script
