"""Submitting a workspace to Slurm from the TUI, on the localhost cluster: the form shows the #SBATCH settings and
the whole script first; a partition the cluster refuses gives sbatch's words verbatim and creates nothing; fixed,
the same form submits and the run finishes in its chain job."""
from __future__ import annotations

import pytest

from nightshift.supervisor.cli.tui_seams import face_seams
from nightshift.supervisor.run.registry import registry_path
from tests.fixtures_core import require_tool, workspace  # noqa: F401 - pytest fixture
from tests.fixtures_slurm import slurm_cluster, wait_for  # noqa: F401 - pytest fixture
from tests.test_tui_actions import until
from nightshift.tui.app import make_app
from nightshift.tui.screens.submit import SubmitScreen

pytestmark = pytest.mark.slurm
FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed check.txt"]]
SLURM = '[slurm]\nclient = "cli"\ntime = "5:00"\ngrace = 30\npoll_interval = "1s"\npartition = "{partition}"\n'


def form_text(app, part: str) -> str:
    return str(app.screen.query_one(f"#submit-{part}").render())


async def enter_workspace(pilot, path) -> None:
    box = pilot.app.screen.query_one("#submit-workspace")
    box.value = str(path)
    box.focus()
    await pilot.press("enter")


async def test_submit_from_the_tui_shows_the_script_refuses_verbatim_then_runs(slurm_cluster, workspace):
    require_tool("tmux")
    ws = workspace.configure({"s1t1": FIX}, backend="local", extra=SLURM.format(partition="nosuch"))
    app = make_app(live=False, seams=face_seams())
    said: list[str] = []  # every notification, kept: a toast expires (5 s) before a loaded machine looks at it
    notify = app.notify
    app.notify = lambda message, *args, **kwargs: (said.append(str(message)), notify(message, *args, **kwargs))[1]
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.loaded)
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, SubmitScreen))
        await enter_workspace(pilot, ws.path)
        await until(pilot, lambda: "#SBATCH --partition=nosuch" in form_text(app, "settings"), timeout=30)
        script = form_text(app, "script")
        assert script.startswith("#!/bin/bash") and "-m nightshift.hpc.chain_job" in script and "#SBATCH --time=5:00" in script

        await pilot.press("enter")  # send: Slurm refuses the partition, in its own words
        await until(pilot, lambda: "not submitted" in form_text(app, "error"), timeout=60)
        error = form_text(app, "error")
        assert "sbatch: error: invalid partition specified: nosuch" in error
        assert "Invalid partition name specified" in error
        assert not (ws.path / ".nightshift" / "runs").exists() or not any((ws.path / ".nightshift" / "runs").iterdir())
        assert not registry_path().exists() or not registry_path().read_text().strip()  # nothing created
        assert isinstance(app.screen, SubmitScreen)  # the form stays open to fix and retry

        toml = ws.path / "nightshift.toml"
        toml.write_text(toml.read_text().replace('partition = "nosuch"', 'partition = "debug"'))
        await enter_workspace(pilot, ws.path)  # previews again: the refused plan is gone
        await until(pilot, lambda: "#SBATCH --partition=debug" in form_text(app, "settings"), timeout=30)
        run_id = app.screen.plan.run_id
        await pilot.press("enter")
        await until(pilot, lambda: any(f"run {run_id} submitted as Slurm job" in m for m in said), timeout=60)
        assert not isinstance(app.screen, SubmitScreen)

    run = next((ws.path / ".nightshift" / "runs").iterdir())
    assert run.name == run_id  # the run has the id and the script the form showed
    assert "#SBATCH --partition=debug" in (run / "slurm" / "supervisor.sbatch").read_text()
    wait_for(lambda: (events := ws.events(_paths(run))) and events[-1]["type"] == "run.finished", timeout=120,
             what="the submitted run to finish in its job")
    assert ws.events(_paths(run))[-1]["data"]["outcome"] == "done"


def _paths(root):
    from nightshift.supervisor.run.paths import RunPaths

    return RunPaths(root)
