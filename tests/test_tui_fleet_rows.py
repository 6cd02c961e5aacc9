"""A fleet is seen and steered as one run on the dashboard: its lanes are rows nested under the fleet's row (never
top-level runs of their own, never missing), the fleet's row carries what the lanes spent together, and the run
keys act on the lane under the cursor. Real fleets: real git worktrees and lane runs, made as `nightshift run
--lanes 2` makes them; for the keys, a running fleet whose lanes' own supervisors answer."""
from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest

from nightshift.supervisor.fleet.state import lane_run
from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet, lane_events, planned_fleet, record_job  # noqa: F401
from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401
from tests.test_tui_actions import notices, open_dashboard, until
from nightshift.tui import seams
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen


def table_rows(app) -> list[tuple[str, list[str]]]:
    table = app.screen.query_one("#runs")
    return [(key.value, [str(c) for c in table.get_row(key)]) for key in table.rows]


async def test_lanes_are_nested_under_their_fleet_with_what_they_spent_together(fleet: Fleet, tui_home):
    _home, others = tui_home  # ordinary runs of the user, registered beside the fleet
    sup = planned_fleet(fleet, "max_core_hours = 20")
    lanes = [lane_run(lane).run_id for _, lane in sorted(sup.fleet["lanes"].items())]
    record_job(lane_run(sup.fleet["lanes"]["1"]), "1001", 6.0)
    record_job(lane_run(sup.fleet["lanes"]["2"]), "1002", 5.5)
    fleet_id = sup.run_paths.run_id
    sup.ledger.close()
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test(size=(200, 40)) as pilot:
        await open_dashboard(app, pilot)
        await until(pilot, lambda: fleet_id in [key for key, _ in table_rows(app)])
        rows = table_rows(app)
        keys = [key for key, _ in rows]
        at = keys.index(fleet_id)
        assert keys[at + 1:at + 3] == lanes, keys  # right under their fleet, in lane order
        assert keys.count(lanes[0]) == 1 and keys.count(lanes[1]) == 1  # not again at the top level
        assert {run.run_id for run in others.values()} <= set(keys)  # the other runs are all still there
        cells = dict(rows)
        assert cells[lanes[0]][0].strip() == "└ lane-1" and cells[lanes[1]][0].strip() == "└ lane-2", rows
        assert cells[lanes[0]][0].startswith(" ")  # indented under the fleet's row
        assert "11.50ch" in cells[fleet_id][8], cells[fleet_id]  # the fleet's cost cell: the lanes together
        assert "6.00ch" in cells[lanes[0]][8] and "5.50ch" in cells[lanes[1]][8]
        title = str(app.screen.query_one("#dash-title").render())
        assert f"{len(others) + 1} runs (2 lanes under their fleets)" in title, title
        table = app.screen.query_one("#runs")
        table.move_cursor(row=table.get_row_index(fleet_id))
        await pilot.press("enter")  # the fleet's own screen says the same figure as its row
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        title = str(app.screen.query_one("#run-title").render())
        assert "lanes together: 11.50 core-h of 20 · model $0.00" in title, title
        assert "allocation 0.00" not in title  # not the fleet's own (empty) allocation against the fleet's limit

    # Opened by its folder (no registry read): the lanes come from the fleet's own log all the same.
    app = make_app(clock=fixed_clock, live=False, runs=[sup.run_paths])
    async with app.run_test(size=(200, 40)) as pilot:
        await open_dashboard(app, pilot)
        await until(pilot, lambda: len(table_rows(app)) == 3)
        assert [key for key, _ in table_rows(app)] == [fleet_id, *lanes]

    status = nightshift("status", fleet_id, cwd=fleet.ws.path)
    assert "11.50 core-h of 20" in status.stdout, status.stdout + status.stderr
    as_json = json.loads(nightshift("status", "--json", fleet_id, cwd=fleet.ws.path).stdout)
    assert as_json["lanes_allocation"] == {"core_hours": 11.5, "gpu_hours": 0.0}


async def test_a_fleet_started_while_the_dashboard_is_open_shows_up_with_its_lanes_under_it(fleet: Fleet, tui_home):
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test(size=(200, 40)) as pilot:
        await open_dashboard(app, pilot)
        before = [key for key, _ in table_rows(app)]
        sup = planned_fleet(fleet, "max_core_hours = 20")  # registered, planned, its lanes made: as a fleet starts
        sup.ledger.close()
        lanes = [lane_run(lane).run_id for _, lane in sorted(sup.fleet["lanes"].items())]
        app.poll_now()  # the live worker's own look at the registry and the logs
        await until(pilot, lambda: len(table_rows(app)) == len(before) + 3)
        assert [key for key, _ in table_rows(app)] == [sup.run_paths.run_id, *lanes, *before]


@pytest.mark.timeout(600)
async def test_the_run_keys_act_on_the_lane_under_the_cursor(fleet: Fleet):
    fleet.configure({"default": [["sleep", 1], ["append", "notes.txt", "x"]]}, "lanes = 2\n", breaker=500,
                    max_shifts=50)
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", "--foreground", "--no-check"],
                            cwd=fleet.ws.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: list(fleet.ws.path.glob(".nightshift/runs/*")) and len(fleet.of("lane.started")) == 2,
                 timeout=240, what="both lanes supervised")
        planned = {d["lane"]: d for d in fleet.of("lane.planned")}
        lane1, lane2 = (lane_run(planned[k]) for k in (1, 2))
        for lane in (lane1, lane2):  # each lane's own supervisor is up and has started its agent
            wait_for(lambda: any(e["type"] == "agent.started" for e in lane_events(lane.root)), timeout=240,
                     what=f"lane {lane.run_id} to start its agent")
        # The lanes' own supervisors answer; on a busy machine that may take longer than the default wait.
        app = make_app(live=False, seams=seams.Seams(send=functools.partial(seams.send, wait=120)))
        async with app.run_test(size=(200, 40)) as pilot:
            await open_dashboard(app, pilot)
            table = app.screen.query_one("#runs")
            await until(pilot, lambda: lane2.run_id in [k.value for k in table.rows])
            table.move_cursor(row=table.get_row_index(lane2.run_id))
            await pilot.pause()

            def answered(lane, verb: str) -> bool:
                return any(e["type"] == "command.accepted" and e["data"].get("verb") == verb
                           for e in lane_events(lane.root))

            await pilot.press("p")
            await until(pilot, lambda: any(f"{lane2.run_id}: pause accepted" in m for m in notices(app)), 150)
            await pilot.press("n")
            await until(pilot, lambda: app.screen.__class__.__name__ == "NudgeScreen")
            await pilot.press(*"try a finer grid", "enter")
            await until(pilot, lambda: answered(lane2, "nudge"), 150)
            await pilot.press("a")  # headless there is no terminal to hand over: the notice names the lane's pane
            await until(pilot, lambda: any(lane2.run_id in m for m in notices(app) if "attach" in m or "pane" in m))
            await pilot.press("x")
            await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
            await pilot.press("y")
            await until(pilot, lambda: any(e["type"] == "run.finished" for e in lane_events(lane2.root)), 150)
            # The keys reached lane 2 alone: lane 1 and the fleet itself got none of them.
            assert not any(answered(lane1, verb) for verb in ("pause", "nudge", "stop"))
            assert not [e for e in fleet.events() if e["type"].startswith("command.")]
            assert any(e["type"] == "run.finished" and e["data"]["outcome"] == "stopped"
                       for e in lane_events(lane2.root))
        assert nightshift("stop", fleet.run_dir().name, cwd=fleet.ws.path).returncode == 0
        proc.wait(timeout=120)
    finally:
        proc.kill()
