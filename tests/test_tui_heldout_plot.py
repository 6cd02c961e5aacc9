"""The TUI's Oracle tab plots the held-out comparisons as the report and `nightshift plot` do: the fold carries no
held-out figure (the agent's side never sees one), so the user's view reads each verdict's full figures from the
private store outside the workspace and draws them as '<comparison> (held out)' beside the visible lines."""
from __future__ import annotations

import json

from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.heldout import private_folder
from nightshift.supervisor.run.paths import make_private_dir
from nightshift.supervisor.run.registry import register
from tests.fixtures_tui import FIXED_NOW, HOST, clock_from, heartbeat, make_run, verdict
from tests.test_tui_actions import open_dashboard, until
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen
from nightshift.tui.widgets.oracle_plot import OracleHistoryPlot

HELD = [40.0, 6.0, 0.8]  # the held-out sigma8 error over its tolerance at each verdict: closing in, then passing


def write_heldout_run(home):
    run = make_run(home, "exam", "20261122-060000-e0e0")
    with clock_from(1800, step=20):
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=str(run.workspace), goal="sigma8 held out",
                   agent="claude", backend="tmux", host=HOST)
        log.append("shift.started", 1, token="t", base="b")
        for turn, (tt, ee) in enumerate([(9e-3, 8e-3), (4e-3, 3e-3), (2e-3, 1e-3)], start=1):
            verdict(log, run, 1, turn, tt, ee, 0.0)
        log.close()
    folder = make_private_dir(private_folder(run.root))  # what verify/oracle/exam.py writes, outside the workspace
    for turn, ratio in enumerate(HELD, start=1):
        body = {"comparisons": [{"name": "sigma8", "heldout": True, "passed": ratio <= 1, "ratio": ratio,
                                 "columns": []}], "problems": [], "release": None}
        (folder / f"1-t{turn}.oracle.json").write_text(json.dumps(body))
    heartbeat(run, age=5)
    register(run, host=HOST, created=FIXED_NOW)
    return run


async def open_oracle_tab(app, pilot, run) -> None:
    await open_dashboard(app, pilot)
    app.open_run(run.run_id)
    await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
    await pilot.press("4")


def heldout_home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return write_heldout_run(home)


async def test_the_oracle_tab_plots_the_held_out_line(tmp_path, monkeypatch):
    run = heldout_home(tmp_path, monkeypatch)
    app = make_app(clock=lambda: FIXED_NOW, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_oracle_tab(app, pilot, run)
        plot = app.screen.query_one(OracleHistoryPlot)
        await until(pilot, lambda: "sigma8 (held out)" in plot.series)
        assert [v for _, v in plot.series["sigma8 (held out)"]] == HELD
        assert [i for i, _ in plot.series["sigma8 (held out)"]] == [i for i, _ in plot.series["lensed C_l"]]
        assert "=sigma8 (held out)" in str(plot.render())  # in the legend, beside the visible comparisons


async def test_the_oracle_tab_shows_a_row_per_comparison_and_its_columns_when_asked(tmp_path, monkeypatch):
    """Issue 29: one line per comparison (a table by its worst column); `c` shows every column, and again one."""
    from textual.widgets import DataTable

    run = heldout_home(tmp_path, monkeypatch)
    app = make_app(clock=lambda: FIXED_NOW, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_oracle_tab(app, pilot, run)
        table = app.screen.query_one("#oracle-table", DataTable)

        def columns_shown() -> list[str]:
            return [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        await until(pilot, lambda: any("(worst of 2)" in c for c in columns_shown()))
        visible = [c for c in columns_shown() if "(held" not in c]
        assert len([c for c in visible if "worst of" in c]) == 1, visible
        table.focus()
        await pilot.press("c")
        await until(pilot, lambda: {"TT", "EE"} <= set(columns_shown()))
        await pilot.press("c")
        await until(pilot, lambda: any("(worst of 2)" in c for c in columns_shown()))
