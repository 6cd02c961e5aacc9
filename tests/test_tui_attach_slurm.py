"""`a` in the TUI on a submitted run, in a real terminal: the TUI hands the terminal to
``srun --jobid J --overlap --pty tmux ... attach`` (the agent's tmux server inside the chain job on the localhost
cluster), and comes back when the user detaches."""
from __future__ import annotations

import sys

import pytest

from nightshift.hpc.chain import cancel_chain, chain_jobs
from nightshift.hpc.client import make_client
from nightshift.hpc.submit import submit_run
from nightshift.supervisor.run.paths import RunPaths
from tests.fixtures_core import nightshift, require_tool, workspace  # noqa: F401 - pytest fixture
from tests.fixtures_slurm import QUICK, slurm_cluster, wait_for  # noqa: F401 - pytest fixture
from tests.test_tui_demo import REPO

pytestmark = pytest.mark.slurm
SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\ngrace = 30\npoll_interval = "1s"\n'


def screen(pane) -> str:
    return "\n".join(pane.capture_pane())


def test_attach_from_the_tui_goes_through_srun_and_returns(slurm_cluster, workspace, server, tmp_path):
    require_tool("tmux")
    ws = workspace.configure({"s1t1": [["sleep", 300]]}, backend="local", extra=SLURM)
    run_id, first = submit_run(ws.path)
    run = RunPaths.for_run(ws.path, run_id)
    client = make_client("cli", backoff=QUICK)
    pane = None
    try:
        wait_for(lambda: "agent.started" in ws.types(run), timeout=60, what="the agent to start in the job")
        env = f"HOME={tmp_path} TERM=xterm-256color"
        tui = server.new_session(session_name="tui", x=120, y=30, window_command=(
            f"cd {REPO} && env {env} {sys.executable} -m nightshift.supervisor.cli.main tui {run.root}; sleep 60"))
        pane = tui.windows[0].panes[0]
        wait_for(lambda: run_id in screen(pane), timeout=30, what="the TUI on the run")
        pane.send_keys("a", enter=False)
        # the agent's own tmux session, inside the job: its status line names the session and the shift's window
        wait_for(lambda: "[agent]" in screen(pane) and "s1t1" in screen(pane), timeout=30,
                 what="the agent's tmux session through srun")
        pane.send_keys("C-b", enter=False, literal=False)
        pane.send_keys("d", enter=False)
        # its footer (Help and Quit first, #47: the tmux window may come back narrower, cutting the later keys)
        wait_for(lambda: run_id in screen(pane) and "? Help" in screen(pane), timeout=30, what="the TUI back")
        pane.send_keys("q", enter=False)
    finally:
        if pane is not None:
            print(screen(pane))  # what the terminal showed, for a failure
        nightshift("stop", run_id, cwd=ws.path)
        cancel_chain(run, client)
        wait_for(lambda: all(j.terminal for j in chain_jobs(run, client)), what="every job of the chain to end")
