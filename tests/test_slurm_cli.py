"""The CLI on Slurm runs: no Slurm, sbatch's refusal verbatim, `nightshift stop` and `attach` on a submitted chain."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from nightshift.hpc.chain import chain_jobs, read_record
from nightshift.hpc.client import make_client
from nightshift.hpc.submit import submit_run
from nightshift.supervisor.cli.watch.attach import attach_argv
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import load_state
from tests.fixtures_core import nightshift, require_tool, workspace  # noqa: F401
from tests.fixtures_slurm import QUICK, slurm_cluster, wait_for  # noqa: F401
from tests.test_bad_input import one_line_error

SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\n{more}'
SLEEPER = {"s1t1": [["sleep", 300]]}


def runs_of(ws) -> list:
    return sorted((ws.path / ".nightshift" / "runs").glob("*")) if (ws.path / ".nightshift" / "runs").exists() else []


def without_slurm(tmp_path) -> dict:
    """A PATH with python, git and tmux but none of Slurm's commands."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "tmux", "sh", "bash", "env"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), bin_dir / tool)
    return {"PATH": str(bin_dir)}


def test_without_slurm_run_and_submit_say_so_in_one_line_and_create_nothing(workspace, tmp_path):
    ws = workspace.configure(SLEEPER, backend="local", extra=SLURM.format(more=""))
    env = without_slurm(tmp_path)
    one_line_error(nightshift("run", str(ws.path), "--backend", "slurm", env=env), "Slurm commands not found",
                   "--backend tmux")
    one_line_error(nightshift("submit", str(ws.path), env=env), "Slurm commands not found")
    assert runs_of(ws) == []


@pytest.mark.slurm
def test_sbatch_refusal_is_shown_verbatim_and_the_run_ends_on_record(slurm_cluster, workspace):
    ws = workspace.configure(SLEEPER, backend="local", extra=SLURM.format(more='partition = "nosuch"\n'))
    line = one_line_error(nightshift("submit", str(ws.path)), "sbatch: error: Batch job submission failed: Invalid partition name specified",
                          "[slurm] in nightshift.toml")
    assert line.startswith("nightshift: ")
    [root] = runs_of(ws)
    state = load_state(root)[0]
    assert state["outcome"] == "failed" and "Invalid partition" in state["finish_reason"]
    assert [r["what"] for r in read_record(RunPaths(root))] == []  # no job was ever queued


@pytest.mark.slurm
def test_stop_on_a_running_chain_cancels_the_continuation_and_ends_the_run(slurm_cluster, workspace):
    require_tool("tmux")
    # The walltime warning is sent by the test below, not by Slurm: grace well inside the time limit.
    ws = workspace.configure(SLEEPER, backend="local", extra=SLURM.format(more='grace = "30s"\n').replace(
        'time = "5:00"', 'time = "10:00"'))
    run_id, first = submit_run(ws.path)
    run = RunPaths.for_run(ws.path, run_id)
    client = make_client("cli", backoff=QUICK)
    wait_for(lambda: len(chain_jobs(run, client)) == 2 and "agent.started" in ws.types(run), timeout=150,
             what="the job running the agent, with its continuation queued")
    argv = attach_argv(run)  # what `nightshift attach` and the TUI's `a` run
    assert argv[:4] == ["srun", f"--jobid={first}", "--overlap", "--pty"] and "attach" in argv
    # The race, held open: the job hears its walltime warning after `stop` cancelled its continuation and before
    # the run has ended (the supervisor is held still meanwhile). A job that then queued a continuation again
    # left a third job (seen once under load: [19, 20, 21]).
    supervisor = json.loads(run.supervisor.read_text())["pid"]
    os.kill(supervisor, signal.SIGSTOP)
    try:
        stop = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "stop", run_id], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "NIGHTSHIFT_ACK_TIMEOUT": "120"})
        wait_for(lambda: "cancelled" in whats(run), timeout=60, what="stop to cancel the queued continuation")
        client.signal(first, "USR1")  # what Slurm sends at the job's limit minus the grace
        wait_for(lambda: "walltime_warning" in whats(run), timeout=60, what="the job to hear its walltime warning")
    finally:
        os.kill(supervisor, signal.SIGCONT)
    out, err = stop.communicate(timeout=150)
    assert stop.returncode == 0, err
    assert "continuation jobs cancelled" in out and f"job {first} stops the run" in out
    wait_for(lambda: load_state(run.root)[0]["outcome"] == "stopped", timeout=150, what="the run to end stopped")
    wait_for(lambda: "finished" in whats(run), timeout=150, what="the job to record the end of the run")
    wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), timeout=150, what="every job of the chain to end")
    assert [r["job_id"] for r in read_record(run) if r["what"] == "submitted"] == [first, first + 1]
    assert attach_argv(run) is None


def whats(run: RunPaths) -> list[str]:
    return [r["what"] for r in read_record(run)]


@pytest.mark.slurm
def test_stop_while_the_chain_is_queued_cancels_it_and_records_the_end(slurm_cluster, workspace):
    ws = workspace.configure(SLEEPER, backend="local", extra=SLURM.format(more='extra = ["--begin=now+1hour"]\n'))
    run_id, first = submit_run(ws.path)
    run = RunPaths.for_run(ws.path, run_id)
    client = make_client("cli", backoff=QUICK)
    assert [j.state for j in chain_jobs(run, client)] == ["PENDING"]
    assert attach_argv(run) is None
    proc = nightshift("stop", run_id)
    assert proc.returncode == 0 and f"its queued jobs were cancelled ({first})" in proc.stdout, proc.stderr
    state = load_state(run.root)[0]
    assert state["outcome"] == "stopped" and state["phase"] == "finished"
    wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), what="the queued job to be cancelled")
    one_line_error(nightshift("stop", run_id), "already finished")
