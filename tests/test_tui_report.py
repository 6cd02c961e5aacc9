"""The TUI's report key: `o` on a run screen writes the run's HTML report through the face's seam and says
where; the TUI alone (no face) says how to get it. Pilot tests against fixture run directories."""
from __future__ import annotations

from nightshift.supervisor.cli.tui_seams import face_seams
from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401 - pytest fixture
from tests.test_tui_actions import notices, open_dashboard, until
from nightshift.tui.app import make_app
from nightshift.tui.seams import Seams


async def test_report_key_writes_the_report_and_says_where(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False, seams=face_seams())
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen.__class__.__name__ == "RunScreen")
        await pilot.press("o")
        await until(pilot, lambda: any(m.startswith("report written: ") for m in notices(app)), timeout=60)
    path = next(m for m in notices(app) if m.startswith("report written: ")).split()[2]
    assert path.endswith("report.html") and "nightshift report: run" in open(path).read()


async def test_report_key_without_the_face_says_how(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False, seams=Seams())
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: app.screen.__class__.__name__ == "RunScreen")
        await pilot.press("o")
        await until(pilot, lambda: any("nightshift report" in m for m in notices(app)))
