"""A stalled agent (no output, no tool call, no stop for `[limits] stall_after`) is nudged once, then its shift is
ended and a fresh one started; both are events. Real tmux, real git, a scripted command agent that hangs."""
from __future__ import annotations

import subprocess

from nightshift.supervisor.run.state import load_state
from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.test_bad_input import one_line_error

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def stall_after(ws, value: str):
    """Set [limits] stall_after in the workspace's committed nightshift.toml."""
    toml = ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[limits]\n", f'[limits]\nstall_after = "{value}"\n'))
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "stall_after"], cwd=ws.path,
                   check=True)
    return ws


def test_a_hanging_agent_is_nudged_once_then_its_shift_is_ended_and_a_fresh_one_started(workspace):
    # Shift 1 prints its first line, then hangs in silence; shift 2 does the work.
    ws = stall_after(workspace.configure({"s1t1": [["sleep", "600"]], "s2t1": FIX}), "3s")
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    events = ws.events(run)
    stalled = [e["data"] for e in events if e["type"] == "agent.stalled"]
    assert [s["action"] for s in stalled] == ["nudged", "ended"]
    assert all(e["shift"] == 1 for e in events if e["type"] == "agent.stalled")
    ended = [e for e in events if e["type"] == "shift.ended"]
    assert ended and ended[0]["shift"] == 1 and ended[0]["data"]["reason"] == "stalled"
    stop = next(e["data"] for e in events if e["type"] == "agent.stopped")
    assert stop["reason"] == "stalled"
    state = load_state(run.root)[0]
    assert state["outcome"] == "done" and state["shift"] == 2


def test_an_agent_that_keeps_printing_is_not_stalled(workspace):
    """Output is activity: a slow agent that says what it does is left alone, however long it takes."""
    chatty = [["shell", "for i in 1 2 3 4 5 6 7 8; do echo working $i; sleep 1; done"], *FIX]
    ws = stall_after(workspace.configure({"s1t1": chatty}), "3s")
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    assert "agent.stalled" not in ws.types(run)


def test_stall_after_shorter_than_a_claude_tool_call_is_one_line(workspace):
    toml = workspace.path / "nightshift.toml"  # as `nightshift init` wrote it, with a Claude Code agent
    text = toml.read_text().replace("[limits]\n", '[limits]\nstall_after = "5m"\n').replace(
        'kind = "command"', 'kind = "claude"', 1)
    toml.write_text(text)
    one_line_error(nightshift("run", str(workspace.path)), "limits.stall_after", "Bash tool", "15m")
    toml.write_text(text.replace('stall_after = "5m"', "stall_after = 0"))
    one_line_error(nightshift("run", str(workspace.path)), "limits.stall_after")
    assert not (workspace.path / ".nightshift" / "runs").exists()  # nothing half-created
