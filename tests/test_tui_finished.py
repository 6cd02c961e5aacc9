"""Issue 47's TUI: a finished run's Shifts tab shows its last shift finished, with a length that no longer counts
(it said `End running`, the length still growing); the Plan tab counts the plan as the verdict does (it said "4/8
done" where the verdict said "4/4": every checkbox of CLAUDE.md against the "## Plan" section's); at 80x24 the
footer shows `? Help` and `q Quit` (they were cut off) on the dashboard and on a run's screen. Pilot tests on the
fixture runs (tests/fixtures_tui.py), each checked both ways."""
from __future__ import annotations

from nightshift.supervisor.verify.checks import check_plan
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen
from nightshift.tui.widgets.doc_view import DocView
from nightshift.tui.widgets.shifts_table import ShiftsTable
from tests.fixtures_tui import FIXED_NOW, tui_home  # noqa: F401 - pytest fixture
from tests.test_tui_actions import until


async def open_tab(app, pilot, key: str) -> RunScreen:
    await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
    await pilot.press(key)
    await pilot.pause(0.05)
    await app.workers.wait_for_complete()
    return app.screen


def last_shift_cells(app) -> dict[str, str]:
    table = app.screen.query_one(ShiftsTable)
    keys = [c.key.value for c in table.ordered_columns]
    return dict(zip(keys, (str(c) for c in table.get_row_at(0))))


async def shift_rows_at(run_id: str, times: list[float]) -> list[dict[str, str]]:
    """The newest shift's row of run ``run_id``, read at each clock time (the app's clock moved on in between)."""
    now = [times[0]]
    app = make_app(clock=lambda: now[0], live=False, open_run=run_id)
    seen = []
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(app, pilot, "5")
        await until(pilot, lambda: app.screen.query_one(ShiftsTable).row_count > 0)
        for at in times:
            now[0] = at
            app.screen.refresh_tab("shifts")
            await pilot.pause(0.05)
            seen.append(last_shift_cells(app))
    return seen


async def test_a_finished_runs_last_shift_is_finished_and_its_length_stops(tui_home):
    _home, runs = tui_home
    first, later = await shift_rows_at(runs["done"].run_id, [FIXED_NOW, FIXED_NOW + 5 * 3600])
    assert first["end"] == "run done", first  # the run's end closed it (no shift.ended of its own)
    assert first["length"] == later["length"] != "-", (first, later)
    # the other way: a run still working has its shift running, its length counting
    first, later = await shift_rows_at(runs["cosmo"].run_id, [FIXED_NOW, FIXED_NOW + 5 * 3600])
    assert first["end"] == later["end"] == "running"
    assert first["length"] != later["length"]


PLAN = """# decay

## Definition of done
- [ ] decay.dat agrees with the reference to 1e-6
- [ ] the tests pass
- [ ] the lab notes say what was tried
- [ ] nothing but the solver changed

## Plan
- [x] read the reference
- [x] write the solver
{third}
- [x] record the approach in CHANGELOG.md

## Oracle
- [ ] an unrelated checkbox outside the plan
"""


async def plan_head(run, text: str) -> str:
    (run.workspace / "CLAUDE.md").write_text(text)
    app = make_app(live=False, open_run=run.run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(app, pilot, "2")
        head = app.screen.query_one("#plan-doc", DocView).query_one("#doc-head")
        await until(pilot, lambda: "plan:" in str(head.render()))
        return str(head.render())


async def test_the_plan_tab_counts_as_the_verdict_counts(tui_home):
    _home, runs = tui_home
    run = runs["done"]
    for third, expect in (("- [x] switch to RK4", "4/4"), ("- [ ] switch to RK4", "3/4")):
        text = PLAN.format(third=third)
        head = await plan_head(run, text)
        verdict = check_plan(run.workspace / "CLAUDE.md", {}, claimed_done=True, require_all=True).summary
        assert verdict == f"plan: {expect} checked", verdict
        assert f"plan: {expect} checked" in head, head  # the verdict's words, not 4/9 (every checkbox)


async def footer_keys(app, pilot) -> dict[str, bool]:
    """Each footer key's description: whether it is wholly on screen."""
    from textual.widgets._footer import FooterKey
    # the footer is laid out after the screen's first frames: wait for its keys to have a place
    await until(pilot, lambda: any(k.region.width > 0 for k in app.screen.query(FooterKey)))
    await pilot.pause(0.1)
    width = app.screen.size.width
    found = {}
    for key in app.screen.query(FooterKey):
        region = key.region
        found[key.description] = region.width > 0 and region.x >= 0 and region.right <= width
    return found


async def test_help_and_quit_are_on_the_footer_at_80x24(tui_home):
    _home, runs = tui_home
    app = make_app(live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.loaded)
        shown = await footer_keys(app, pilot)
        assert shown.get("Help") and shown.get("Quit"), shown
        assert not all(shown.values()), shown  # 80 columns cannot hold every key: what is cut is not Help or Quit
    app = make_app(live=False, open_run=runs["cosmo"].run_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_tab(app, pilot, "5")
        shown = await footer_keys(app, pilot)
        assert shown.get("Help") and shown.get("Quit"), shown
        await pilot.press("question_mark")  # and the keys do what they say
        await until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
