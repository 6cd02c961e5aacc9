"""The TUI's start-run form shows the preflight's result before it starts a run: a workspace that would fail is
named with its problems and not started; one that passes starts on the next Enter, with the result handed to
the run (which records it, as `nightshift run` does). The preflight is the face's real one."""
from __future__ import annotations

import sys

from nightshift.supervisor.cli.demo import build_workspace
from nightshift.supervisor.cli.tui_seams import preflight
from tests.fixtures_core import require_tool
from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401 - pytest fixture
from tests.test_tui_actions import notices, open_dashboard, until
from nightshift.tui.app import make_app
from nightshift.tui.seams import Seams


async def failing_preflight_in_start_form(app, pilot, ws):
    """Open the start-run form, check ``ws`` (whose preflight fails); returns what the form's preflight shows."""
    await open_dashboard(app, pilot)
    await pilot.press("s")
    await until(pilot, lambda: app.screen.__class__.__name__ == "StartRunScreen")
    app.screen.query_one("#workspace").value = str(ws)
    await pilot.press("enter")
    shown = lambda: str(app.screen.query_one("#preflight").render())  # noqa: E731
    await until(pilot, lambda: "fix the problems above" in shown(), timeout=120)
    return shown


async def test_the_start_form_shows_the_preflight_and_starts_only_what_would_not_fail(tui_home, tmp_path):
    require_tool("git")
    ws = build_workspace(tmp_path / "demo")
    toml = ws / "nightshift.toml"
    good = toml.read_text()
    toml.write_text(good.replace(f'command = "{sys.executable} solver.py"', 'command = "pyhton solver.py"'))
    started = []
    seams = Seams(preflight=preflight, start_run=lambda path, checked=None: started.append((path, checked)) or
                  (_FakeRun(), "nowhere"))
    app = make_app(clock=fixed_clock, live=False, seams=seams)
    async with app.run_test(size=(130, 50)) as pilot:
        shown = await failing_preflight_in_start_form(app, pilot, ws)
        assert "FAIL  oracle" in shown() and "`pyhton solver.py` cannot run" in shown()
        toml.write_text(good)  # the user fixes it; Enter checks again, then Enter starts
        await pilot.press("enter")
        await until(pilot, lambda: "ready: Enter starts the run" in shown(), timeout=120)
        assert started == []
        await pilot.press("enter")
        await until(pilot, lambda: started, timeout=30)
    path, checked = started[0]
    assert path == ws and checked.passed and not checked.found.failed


class _FakeRun:
    run_id = "r-recorded"
