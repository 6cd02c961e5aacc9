"""[limits] max_core_hours on the real localhost cluster: the turn's job finishes its turn, its core-hours are
counted from the job's record (here without accounting: elapsed x allocated CPUs, and said so), then the run
pauses like the cost budget; `nightshift status` shows the allocation beside the model cost."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fixtures_core import nightshift, workspace  # noqa: F401 - pytest fixture
from tests.fixtures_slurm import slurm_cluster, wait_for  # noqa: F401 - pytest fixture

pytestmark = pytest.mark.slurm
SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\ncpus = 2\n'


def test_the_core_hour_budget_pauses_a_run_after_its_turn(slurm_cluster, workspace):
    script = {"s1t1": [["write", "check.txt", "no"], ["sleep", "3"], ["claim", "done", "all good (it is not)"]]}
    ws = workspace.configure(script, backend="slurm", extra=SLURM)
    toml = ws.path / "nightshift.toml"  # 2 CPUs for a few seconds spend more than 0.001 core-hours (3.6 core-s)
    toml.write_text(toml.read_text().replace("[limits]\n", "[limits]\nmax_core_hours = 0.001\n"))
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), timeout=150, what="run.paused")
        events = ws.events(run)
        exceeded = [e["data"] for e in events if e["type"] == "budget.exceeded"]
        assert exceeded and exceeded[0]["what"] == "max_core_hours" and exceeded[0]["value"] >= 0.001
        stops = [e["data"] for e in events if e["type"] == "agent.stopped"]
        assert [s["reason"] for s in stops] == ["exit"]  # the agent finished its turn; nothing was killed
        assert [e["type"] for e in events].count("agent.started") == 1  # and no further job was submitted
        spent = [e["data"] for e in events if e["type"] == "slurm.job_changed" and "core_hours" in e["data"]]
        assert spent[0]["cpus"] == 2 and spent[0]["core_hours"] > 0
        assert spent[0]["accounting"] == "elapsed x allocated CPUs (no accounting)"
        status = nightshift("status", run.run_id).stdout
        assert "allocation " in status and "core-h of 0.001" in status and "(elapsed x allocated CPUs" in status
        assert f"slurm job  {spent[0]['job_id']} COMPLETED" in status
        nightshift("stop", run.run_id)
        proc.wait(timeout=60)
    finally:
        proc.kill()


def test_the_core_hour_budget_pauses_a_submitted_run_inside_its_job(slurm_cluster, workspace):
    """`nightshift submit`: the supervisor runs in the chain's job and counts that job's CPUs from its start."""
    from nightshift.hpc.chain import cancel_chain, chain_jobs
    from nightshift.hpc.client import make_client
    from nightshift.hpc.submit import submit_run
    from nightshift.supervisor.run.paths import RunPaths
    from tests.fixtures_core import require_tool

    require_tool("tmux")
    script = {"s1t1": [["write", "check.txt", "no"], ["sleep", "3"], ["claim", "done", "all good (it is not)"]]}
    ws = workspace.configure(script, backend="local", extra=SLURM + 'grace = 30\n')
    toml = ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[limits]\n", "[limits]\nmax_core_hours = 0.001\n"))
    run_id, _ = submit_run(ws.path)
    run = RunPaths.for_run(ws.path, run_id)
    client = make_client("cli")
    try:
        wait_for(lambda: "run.paused" in ws.types(run), timeout=150, what="run.paused inside the job")
        exceeded = [e["data"] for e in ws.events(run) if e["type"] == "budget.exceeded"]
        assert exceeded[0]["what"] == "max_core_hours" and exceeded[0]["value"] >= 0.001
        assert [e["data"]["reason"] for e in ws.events(run) if e["type"] == "agent.stopped"] == ["exit"]
        status = nightshift("status", run_id).stdout
        assert "core-h of 0.001" in status and "elapsed x allocated CPUs of the chain's jobs" in status
    finally:
        nightshift("stop", run_id)
        cancel_chain(run, client)
        wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), what="every job of the chain to end")
