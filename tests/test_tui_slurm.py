"""The TUI on Slurm runs: a PENDING, a RUNNING and a TIMEOUT-ended run, from a real cluster's job records.

The live test takes the records from the localhost cluster now, writes the runs through the Slurm backend's
own event path, and reads them in the TUI; sdiag shows the TUI asked slurmctld nothing. The snapshots read the
committed capture (tests/data/slurm_tui_jobs.json) under the fixed clock; the live test checks that capture
still looks like what the cluster says (re-make it with NIGHTSHIFT_RECORD_SLURM=1).
"""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from nightshift.hpc.client import make_client
from tests.fixtures_slurm import QUICK, slurm_cluster  # noqa: F401 - pytest fixture
from tests.fixtures_tui import fixed_clock
from tests.fixtures_tui_slurm import RECORDED, capture_jobs, load_recorded, write_slurm_runs
from tests.test_tui_actions import until
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen

CLIENT_RPCS = re.compile(r"^\s*(REQUEST_JOB_INFO\w*|REQUEST_PARTITION_INFO|REQUEST_NODE_INFO\w*)\s*\(\s*\d+\)\s*"
                         r"count:(\d+)", re.M)


def client_rpcs() -> int:
    """The controller's count of the RPCs a client makes to read jobs, partitions, nodes (sdiag)."""
    return sum(int(n) for _, n in CLIENT_RPCS.findall(subprocess.run(["sdiag"], capture_output=True,
                                                                      text=True).stdout))


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    return home


def title(app) -> str:
    return app.screen.title_text().plain


def where_cells(app) -> dict[str, str]:
    return {rid: row.where for rid, row in app.screen._rows.items()}


@pytest.mark.slow
async def test_live_slurm_runs_in_the_tui(slurm_cluster, home, tmp_path):
    client = make_client("cli", backoff=QUICK)
    capture = capture_jobs(client, tmp_path)
    if os.environ.get("NIGHTSHIFT_RECORD_SLURM") == "1":
        RECORDED.parent.mkdir(exist_ok=True)
        RECORDED.write_text(json.dumps(capture, indent=1) + "\n")
    runs = write_slurm_runs(home, capture, fixed_clock=False)
    pend, run, out, nxt = (capture[k][-1]["job_id"] for k in ("pending", "running", "timeout", "next"))
    node = capture["node"]

    before = client_rpcs()
    app = make_app(live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.loaded and len(app.screen._rows) == 3)
        cells = where_cells(app)
        assert re.fullmatch(rf"slurm {pend} PENDING \((Resources|Priority)\)", cells[runs["pending"].run_id])
        assert re.fullmatch(rf"slurm {run} RUNNING {node} 0:0\d left", cells[runs["running"].run_id])
        assert re.fullmatch(rf"slurm {nxt} PENDING \((Resources|Priority)\)", cells[runs["timeout"].run_id])

        app.open_run(runs["running"].run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        text = title(app)
        assert f"job {run} · RUNNING on {node} · elapsed 0:" in text
        assert "left of 0:10:00" in text and "job 1 of this run" in text
        assert "core now" in text  # the running job's CPU burns the allocation already

        await pilot.press("escape")
        app.open_run(runs["timeout"].run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.run_id == runs["timeout"].run_id)
        text = title(app)
        assert f"job {nxt} · PENDING (" in text and "job 2 of this run" in text
        assert f"last job {out} ended TIMEOUT (TimeLimit) → nightshift started a fresh shift" in text
        assert "core-h of 2" in text and "elapsed x allocated CPUs (no accounting)" in text
    assert client_rpcs() == before, "the TUI must read what the supervisor recorded, never ask slurmctld"

    recorded = json.loads(RECORDED.read_text())
    for kind in ("pending", "running", "timeout", "next"):  # the committed capture still says what Slurm says
        live = [(d.get("state"), d.get("reason"), d.get("cpus"), d.get("time_limit")) for d in capture[kind]]
        kept = [(d.get("state"), d.get("reason"), d.get("cpus"), d.get("time_limit")) for d in recorded[kind]]
        assert [x[0] for x in live] == [x[0] for x in kept] and [x[2:] for x in live] == [x[2:] for x in kept]


SCREENS = {"dashboard": [], "timeout": ["enter"], "running": ["down", "enter"], "pending": ["down", "down", "enter"]}


@pytest.mark.parametrize("screen", list(SCREENS))
def test_slurm_screens_snapshot(home, snap_compare, screen):
    write_slurm_runs(home, load_recorded())

    async def run_before(pilot) -> None:
        while not pilot.app.loaded:
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        pilot.app.clear_notifications()
        for key in SCREENS[screen]:
            await pilot.press(key)
            await pilot.pause(0.1)
        await pilot.pause(0.2)

    assert snap_compare(make_app(clock=fixed_clock, live=False), terminal_size=(120, 30), run_before=run_before)
