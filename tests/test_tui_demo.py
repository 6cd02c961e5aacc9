"""The TUI against a live run: the scripted demo agent (not a model) supervised for real in a private tmux
server (socket ns-<run id>), started through the TUI's own start-run action. The TUI sees the run appear, pauses
and resumes it through the inbox (the real supervisor answers), follows it to its verified end, and shows the
real oracle report."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_tui_actions import notices, until
from nightshift.tui.app import make_app
from nightshift.tui.screens.run_screen import RunScreen
from nightshift.tui.widgets.oracle_view import OracleView


REPO = Path(__file__).resolve().parent.parent


def need_tmux() -> None:
    if shutil.which("tmux") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is missing in CI: .ci/tools/tmux.sh should have installed it")
        pytest.skip("LOUD SKIP: tmux is not installed; the live TUI test needs it (apt-get install tmux)")


@pytest.fixture
def demo_workspace(tmp_path):
    need_tmux()
    from nightshift.supervisor.cli.demo import build_workspace

    workspace = build_workspace(tmp_path / "demo")
    started: list[str] = []
    yield workspace, started
    for run_id in started:  # the run's own private tmux server: supervisor and agent panes
        subprocess.run(["tmux", "-L", f"ns-{run_id}", "kill-server"], capture_output=True)
    runs = workspace / ".nightshift" / "runs"
    for run_dir in runs.glob("*") if runs.exists() else []:
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)


async def test_tui_follows_a_live_demo_run(demo_workspace):
    workspace, started = demo_workspace
    app = make_app(live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.loaded)
        await pilot.press("s")
        await until(pilot, lambda: app.screen.__class__.__name__ == "StartRunScreen")
        app.screen.query_one("#workspace").value = str(workspace)
        await pilot.press("enter")
        await until(pilot, lambda: app.book.followers, timeout=60)
        run_id = next(iter(app.book.followers))
        started.append(run_id)
        await until(pilot, lambda: any("started" in m and run_id in m for m in notices(app)), timeout=60)
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        await pilot.press("p")
        await until(pilot, lambda: any(f"{run_id}: pause accepted" in m for m in notices(app)), timeout=60)
        await until(pilot, lambda: app.book.followers[run_id].state["paused"], timeout=60)
        # The Agent tab shows the agent's output: its pane, or once the turn has ended, its log.
        text = app.screen.query_one("#agent-text")
        await until(pilot, lambda: str(text.render()).strip() not in ("", "(nothing yet)"), timeout=30)
        await pilot.press("r")
        await until(pilot, lambda: any(f"{run_id}: resume accepted" in m for m in notices(app)), timeout=60)
        follower = app.book.followers[run_id]
        await until(pilot, lambda: follower.state["status"] == "done", timeout=240)
        title = app.screen.query_one("#run-title")
        await until(pilot, lambda: "done" in str(title.render()) and "PASS" in str(title.render()))
        await pilot.press("4")
        oracle = app.screen.query_one(OracleView)
        table = oracle.query_one("#oracle-table")
        await until(pilot, lambda: table.row_count == 1)  # trajectory, by its worst column (a row a comparison)
        assert "(worst of 2)" in str(table.get_row_at(0)[2]) and str(table.get_row_at(0)[0]) == "pass"
        table.focus()
        await pilot.press("c")  # every column: logistic and forced, from oracle.json
        await until(pilot, lambda: table.row_count == 2)
        assert {str(table.get_row_at(i)[2]) for i in range(2)} == {"logistic", "forced"}
        assert all(str(table.get_row_at(i)[0]) == "pass" for i in range(2))


def test_tui_in_a_real_terminal_tails_a_live_pane(server, tmp_path):
    """`python -m nightshift.tui.app RUN_DIR` in a tmux pane (a real terminal, unlike Pilot's): the Agent tab shows the
    agent's live pane through capture-pane. A private tmux server from libtmux's plugin holds both."""
    need_tmux()
    from nightshift.supervisor.run.events import EventLog
    from tests.fixtures_tui import make_run
    from tests.test_tui_actions import until_sync

    agent = server.new_session(session_name="agent", window_name="s1t1",
                               window_command="bash -c 'echo AGENT-OUTPUT-42; sleep 120'")
    pane = agent.windows[0].panes[0]
    until_sync(lambda: "AGENT-OUTPUT-42" in "\n".join(pane.capture_pane()))
    run = make_run(tmp_path, "live-pane", "20261122-120000-1e1e")
    log = EventLog(run.events)
    log.append("run.created", run_id=run.run_id, workspace=str(run.workspace), goal="live pane", agent="demo",
               backend="tmux", host="elsewhere")
    log.append("shift.started", 1, token="t", base="b")
    log.append("agent.started", 1, turn=1, target={"backend": "tmux", "socket": server.socket_name,
                                                  "session": "agent", "window": "s1t1", "pane": pane.pane_id})
    log.close()
    env = f"HOME={tmp_path} XDG_STATE_HOME={tmp_path / 'state'} TERM=xterm-256color"
    tui = server.new_session(session_name="tui", x=100, y=30, window_command=(
        f"cd {REPO} && env {env} {sys.executable} -m nightshift.tui.app {run.root}; sleep 60"))
    tui_pane = tui.windows[0].panes[0]
    try:
        until_sync(lambda: "AGENT-OUTPUT-42" in "\n".join(tui_pane.capture_pane()), timeout=30)
    finally:
        print("\n".join(tui_pane.capture_pane()))
    assert "tmux pane" in "\n".join(tui_pane.capture_pane())
    tui_pane.send_keys("q", enter=False)
