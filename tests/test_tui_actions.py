"""Pilot tests of the TUI's actions against fixture run directories: each key writes the right inbox command,
the supervisor's answer (written here as the supervisor would, with the real EventLog) comes back as a notice,
and the screen follows events appended to the log."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.css.query import NoMatches

from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.state import load_state
from tests.fixtures_tui import fixed_clock, tui_home  # noqa: F401 - pytest fixture
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


async def until(pilot, predicate, timeout: float = 10.0):
    """Let the app run until ``predicate()`` holds (no timing assertion: the timeout only ends a hang)."""
    deadline = time.monotonic() + timeout

    def holds() -> bool:
        try:
            return bool(predicate())
        except NoMatches:  # the screen is still being composed
            return False

    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        await pilot.pause(0.05)


def until_sync(predicate, timeout: float = 10.0) -> None:
    """The same, outside an app (a real terminal in tmux)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.05)


def inbox_commands(run) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(run.inbox.glob("*.json"))]


def answer(run, command: dict, accepted: bool = True, reason: str = "") -> None:
    """Acknowledge a command exactly as the supervisor does: an event carrying the command's id."""
    state, _, _ = load_state(run.root)
    log = EventLog(run.events, last_seq=state["seq"])
    kind = "command.accepted" if accepted else "command.rejected"
    extra = {"reason": reason} if reason else {}
    log.append(kind, None, id=command["id"], verb=command["verb"], args=command.get("args", {}), **extra)
    log.close()


async def open_dashboard(app, pilot):
    await until(pilot, lambda: app.loaded and app.screen.query("#runs") and app.screen.query_one("#runs").row_count)


async def act_and_answer(app, pilot, run, keys: list[str], accepted: bool = True, reason: str = "") -> dict:
    for key in keys:
        await pilot.press(key)
    await until(pilot, lambda: inbox_commands(run))
    command = inbox_commands(run)[0]
    answer(run, command, accepted, reason)
    word = "accepted" if accepted else "refused"
    await until(pilot, lambda: any(word in m for m in notices(app)))
    return command


@pytest.mark.parametrize("key,verb", [("p", "pause"), ("r", "resume")])
async def test_pause_and_resume_keys_write_the_command(tui_home, key, verb):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)  # the newest run (cosmo) is highlighted first
        command = await act_and_answer(app, pilot, runs["cosmo"], [key])
    assert command["verb"] == verb and command["args"] == {}


async def test_stop_asks_first_and_cancel_sends_nothing(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("x")
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen")
        await pilot.press("n")
        await pilot.pause(0.2)
        assert inbox_commands(runs["cosmo"]) == []
        command = await act_and_answer(app, pilot, runs["cosmo"], ["x", "y"])
    assert command["verb"] == "stop"


async def test_nudge_sends_the_typed_message(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("n")
        await until(pilot, lambda: app.screen.__class__.__name__ == "NudgeScreen")
        await pilot.press(*"use the implicit stepper", "enter")
        await until(pilot, lambda: inbox_commands(runs["cosmo"]))
        command = inbox_commands(runs["cosmo"])[0]
        answer(runs["cosmo"], command)
        await until(pilot, lambda: any("nudge accepted" in m for m in notices(app)))
    assert command["verb"] == "nudge" and command["args"] == {"message": "use the implicit stepper"}


async def test_a_refused_command_is_a_notice(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await act_and_answer(app, pilot, runs["cosmo"], ["p"], accepted=False, reason="already paused")
        assert any("refused by the supervisor: already paused" in m for m in notices(app))


async def test_palette_runs_the_same_actions(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"Pause 2026")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: inbox_commands(runs["cosmo"]))
        command = inbox_commands(runs["cosmo"])[0]
        answer(runs["cosmo"], command)
        await until(pilot, lambda: any("pause accepted" in m for m in notices(app)))
    assert command["verb"] == "pause"


async def test_actions_on_a_missing_run_are_refused_with_a_notice(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("down")  # the deleted workspace's row
        await pilot.press("p")
        await until(pilot, lambda: any("missing" in m for m in notices(app)))
    assert not runs["gone"].root.exists()


async def test_verdict_screen_shows_checks_and_pushback(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        await pilot.press("5")  # Shifts tab; the newest shift is first
        await pilot.press("down")  # shift 2
        await pilot.press("enter")
        await until(pilot, lambda: app.screen.__class__.__name__ == "VerdictScreen")
        body = app.screen.query_one("#verdict-body")
        await until(pilot, lambda: "Push-back" in str(body.render()))
        text = str(body.render())
    assert "FAIL oracle" in text and "Push-back (turn 2" in text and "still fails" in text


async def test_attach_without_a_pane_says_so(tui_home):
    home, runs = tui_home
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("a")
        await until(pilot, lambda: any("no agent pane" in m for m in notices(app)))


async def test_attach_to_a_tmux_pane_hands_over_or_says_how(tui_home):
    """Headless there is no terminal to hand over: the notice gives the command the real attach_argv built."""
    home, runs = tui_home
    run = runs["cosmo"]
    state, _, _ = load_state(run.root)
    log = EventLog(run.events, last_seq=state["seq"])
    log.append("agent.started", 3, turn=3, target={"backend": "tmux", "socket": "ns-x", "session": "agent",
                                                   "window": "s3", "pane": "%1"})
    log.close()
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("a")
        await until(pilot, lambda: any("tmux -L ns-x attach -t agent:s3" in m for m in notices(app)))


async def test_start_run_in_a_folder_without_config_is_a_notice(tui_home, tmp_path):
    """The notice's command pastes into a shell as it is, even for a path with a space and a quote."""
    home, runs = tui_home
    folder = tmp_path / "my lab's run" / "ws"
    folder.mkdir(parents=True)
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("s")
        await until(pilot, lambda: app.screen.__class__.__name__ == "StartRunScreen")
        field = app.screen.query_one("#workspace")
        field.value = str(folder)
        await pilot.press("enter")
        await until(pilot, lambda: any("has no nightshift.toml" in m for m in notices(app)))
    notice = next(m for m in notices(app) if "has no nightshift.toml" in m)
    command = notice.split("`")[1]
    assert command.startswith("nightshift init '")  # quoted, not `nightshift init /tmp/.../my lab's run/ws`
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"  # `nightshift` as this install has it
    pasted = subprocess.run(["bash", "-c", command + " --yes --agent command"], capture_output=True, text=True,
                            env={**os.environ, "PATH": path}, timeout=60)
    assert pasted.returncode == 0, pasted.stderr
    assert (folder / "nightshift.toml").is_file()


async def test_help_screen_opens_and_closes(tui_home):
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test() as pilot:
        await open_dashboard(app, pilot)
        await pilot.press("question_mark")
        await until(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen.__class__.__name__ == "DashboardScreen")


async def test_a_waiting_agent_shows_and_y_approves_it(tui_home):
    """An agent waiting for a human: the run screen says what for, and `y` sends approve (N would deny)."""
    from nightshift.supervisor.run.events import EventLog
    from nightshift.supervisor.run.state import load_state
    from nightshift.tui.screens.run_screen import RunScreen

    home, runs = tui_home
    run = runs["cosmo"]
    log = EventLog(run.events, last_seq=load_state(run.root)[0]["seq"])
    log.append("agent.waiting", 3, kind="human", what="permission for Bash: make install", on_wait="wait")
    log.close()
    app = make_app(clock=fixed_clock, live=False, open_run=run.run_id)
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        title = app.screen.query_one("#run-title")
        await until(pilot, lambda: "WAITS for permission for Bash: make install" in str(title.render()))
        command = await act_and_answer(app, pilot, run, ["y"])
    assert command["verb"] == "approve"
