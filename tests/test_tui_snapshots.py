"""Snapshots of every TUI screen at 80x24 and 120x40, from the fixture run directories and a fixed clock.

Regenerate after a deliberate change of the screens with
``pytest tests/test_tui_snapshots.py --snapshot-update`` and look at the SVGs before committing them.
"""
from __future__ import annotations

import pytest

from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401 - pytest fixture
from nightshift.tui.app import make_app

SIZES = [(80, 24), (120, 40)]
# Keys from the dashboard to each screen (the newest run, a Boltzmann solver on its third shift, is first).
SCREENS = {
    "dashboard": [],
    "agent": ["enter"],
    "plan": ["enter", "2"],
    "notes": ["enter", "3"],
    "oracle": ["enter", "4"],
    "shifts": ["enter", "5"],
    "events": ["enter", "6"],
    "verdict": ["enter", "5", "down", "enter"],
    "help": ["question_mark"],
    "stop_confirm": ["x"],
    "problem_row": ["down", "down"],  # the half-written run: what is wrong, under the table
}


async def settle(pilot) -> None:
    app = pilot.app
    while not app.loaded:
        await pilot.pause(0.02)
    await pilot.pause(0.1)


def keys_then_settle(keys):
    async def run_before(pilot) -> None:
        await settle(pilot)
        if keys:
            pilot.app.clear_notifications()  # the load notice is in the dashboard's snapshot only
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.05)
            await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.2)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.05)
    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen_snapshot(tui_home, snap_compare, screen, size):
    app = make_app(clock=fixed_clock, live=False)
    assert snap_compare(app, terminal_size=size, run_before=keys_then_settle(SCREENS[screen]))
