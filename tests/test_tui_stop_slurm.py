"""One stop: the TUI's stop key takes `nightshift stop`'s own code path (supervisor/cli/watch/stop.py), so on a run
submitted as a chain of batch jobs it cancels the queued jobs exactly as the CLI does. Pilot against the localhost
Slurm cluster: a chain whose only job still waits in the queue ends at once, stopped, its job cancelled; a chain
whose job runs the agent has its queued successor cancelled and the running job ends the run on the stop."""
from __future__ import annotations

import pytest

from nightshift.hpc.chain import chain_jobs, read_record
from nightshift.hpc.client import make_client
from nightshift.hpc.submit import submit_run
from nightshift.supervisor.cli.tui_seams import face_seams
from nightshift.supervisor.run.paths import RunPaths
from tests.fixtures_core import require_tool, workspace  # noqa: F401 - pytest fixture
from tests.fixtures_slurm import QUICK, slurm_cluster, wait_for  # noqa: F401 - pytest fixture
from tests.test_tui_actions import notices, open_dashboard, until
from nightshift.tui.app import make_app

pytestmark = pytest.mark.slurm
SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\ngrace = 30\npoll_interval = "1s"\n{more}'


def finished(ws, run):
    events = ws.events(run)
    return next((e["data"] for e in events if e["type"] == "run.finished"), None)


async def stop_from_the_tui(app, pilot, run_id: str) -> None:
    table = app.screen.query_one("#runs")
    await until(pilot, lambda: run_id in [k.value for k in table.rows], timeout=30)
    table.move_cursor(row=table.get_row_index(run_id))
    await pilot.pause()
    await pilot.press("x")
    await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
    await pilot.press("y")


@pytest.mark.timeout(400)
async def test_the_stop_key_cancels_a_submitted_chains_queued_jobs(slurm_cluster, workspace, tmp_path):
    require_tool("tmux")
    client = make_client("cli", backoff=QUICK)
    ws = workspace.configure({"s1t1": [["sleep", 300]]}, backend="local", extra=SLURM.format(more=""))
    running_id, first = submit_run(ws.path)
    running = RunPaths.for_run(ws.path, running_id)
    wait_for(lambda: len(chain_jobs(running, client)) == 2 and "agent.started" in ws.types(running), timeout=150,
             what="the job running the agent, with its successor queued")
    # A second workspace whose chain's only job waits in the queue (it may not begin for an hour).
    other = tmp_path / "queued"
    other.mkdir()
    from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
    from tests.fixtures_core import AGENT, Workspace
    init_workspace(other, InitOptions(goal="make check.txt say ok", agent="command"))
    (other / "agent.py").write_text(AGENT)
    queued_ws = Workspace(other).configure({"default": [["sleep", 1]]}, backend="local",
                                           extra=SLURM.format(more='extra = ["--begin=now+3600"]\n'))
    queued_id, waiting = submit_run(queued_ws.path)
    queued = RunPaths.for_run(queued_ws.path, queued_id)
    try:
        app = make_app(live=False, seams=face_seams())
        async with app.run_test(size=(200, 40)) as pilot:
            await open_dashboard(app, pilot)
            await stop_from_the_tui(app, pilot, queued_id)
            await until(pilot, lambda: finished(queued_ws, queued), timeout=60)
            await until(pilot, lambda: any(f"{queued_id}: stop accepted" in m and str(waiting) in m
                                           for m in notices(app)), timeout=30)
            await stop_from_the_tui(app, pilot, running_id)
            await until(pilot, lambda: any("cancelled" == r["what"] for r in read_record(running)), timeout=60)
        end = finished(queued_ws, queued)
        assert end["outcome"] == "stopped" and f"cancelled jobs: {waiting}" in end["reason"]
        wait_for(lambda: all(j.terminal for j in chain_jobs(queued, client)), what="the queued job to be cancelled")
        assert {j.state for j in chain_jobs(queued, client)} == {"CANCELLED"}
        # The running chain: its queued successor cancelled at once, the job running the agent ends the run.
        records = read_record(running)
        assert [r["what"] for r in records].count("stopping") == 1
        successor = [j.job_id for j in chain_jobs(running, client) if j.job_id != first]
        assert successor and set(successor) <= {i for r in records if r["what"] == "cancelled"
                                                for i in r.get("job_ids") or []}
        end = wait_for(lambda: finished(ws, running), timeout=150, what="the running job to end the run")
        assert end["outcome"] == "stopped"
        wait_for(lambda: all(j.terminal for j in chain_jobs(running, client)), what="every job of the chain to end")
        assert any(e["type"] == "command.accepted" and e["data"].get("verb") == "stop" for e in ws.events(running))
    finally:
        for run in (running, queued):  # nothing of ours left in the queue, whatever happened
            from nightshift.hpc.chain import cancel_chain
            cancel_chain(run, client)
