"""The TUI shows a fleet's lanes under its run as a leaderboard (a Lanes tab, the winner first, held-out
comparisons as pass or fail only); an ordinary run has no such tab. The fleet is a real one: scripted lanes in
worktrees, checked by the fleet."""
from __future__ import annotations

from nightshift.supervisor.fleet.launch import create_fleet, supervise_any
from nightshift.supervisor.shift.launcher import resolve_config
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet, solver  # noqa: F401
from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401
from tests.test_tui_actions import open_dashboard, until
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen
from nightshift.tui.widgets.lanes_table import LanesTable


async def test_a_fleets_lanes_are_a_leaderboard_under_its_run(fleet: Fleet):
    fleet.configure({
        "lane-1:default": [["write", "solver.py", solver(5e-7)], ["write", "check.txt", "ok"], ["claim", "done", "a"]],
        "lane-2:default": [["sleep", 3], ["write", "solver.py", solver(1e-8)], ["write", "check.txt", "ok"],
                           ["claim", "done", "b"]],
    }, 'lanes = 2\nselect = "best"\napproaches = ["coarse grid"]\n', heldout_rtol=6e-7)
    run = create_fleet(fleet.ws.path, resolve_config(fleet.ws.path))
    assert supervise_any(run, say=lambda _: None) == 0
    app = make_app(live=False, open_run=run.run_id)
    async with app.run_test(size=(180, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        await pilot.press("l")
        table = app.screen.query_one(LanesTable)
        await until(pilot, lambda: table.row_count == 2)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(2)]
        assert rows[0][:3] == ["1", "2", "WINNER"] and rows[0][4] == "pass", rows
        assert rows[1][:3] == ["2", "1", "dominated"] and rows[1][7] == "coarse grid", rows
        assert "0.50" in rows[1][3] and "0.8" not in rows[1][3]  # the visible comparison; held-out: pass/fail
        assert rows[0][8].endswith("-l2")  # the lane's own run: attach, nudge, pause or stop it by this id

    # On the dashboard the lanes sit under the fleet's row, each with the fleet's word on it.
    app = make_app(live=False)
    async with app.run_test(size=(180, 40)) as pilot:
        await open_dashboard(app, pilot)
        table = app.screen.query_one("#runs")
        keys = [key.value for key in table.rows]
        assert keys == [run.run_id, f"{run.run_id}-l1", f"{run.run_id}-l2"], keys
        cells = {key: [str(c) for c in table.get_row(key)] for key in keys}
        assert cells[f"{run.run_id}-l2"][:2] == ["  └ lane-2", "WINNER"], cells
        assert cells[f"{run.run_id}-l1"][:2] == ["  └ lane-1", "dominated"], cells
        assert cells[f"{run.run_id}-l1"][4].startswith("0.50")  # the visible comparison, as on the Lanes tab


async def test_an_ordinary_run_has_no_lanes_tab(tui_home):
    _home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False, open_run=runs["cosmo"].run_id)
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        await pilot.press("l")
        await pilot.pause()
        assert not app.screen.query(LanesTable)
