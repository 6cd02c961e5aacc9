"""A whole run from `nightshift init` defaults, the interactive Claude Code CLI in tmux against the fake model, whose
tool-call decision helper is killed mid-session (issue 30): the calls after it are refused (never allowed), the
supervisor says so at the next stop (an event), ends that session, and the next shift's turn has a helper again
that decides as before; the run ends verified."""
from __future__ import annotations

import json
import os
import signal
import threading

from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from tests.fake_anthropic import bash, text, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import require_tool, wait_for, workspace  # noqa: F401
from tests.fixtures_namespace import need_namespace


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_helper_killed_mid_session_ends_it_and_the_next_shift_has_one(workspace, fake_claude):
    require_tool("tmux")
    need_namespace()
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="interactive", backend="tmux")
    fake.push(tools(bash("touch a; while [ ! -e go ]; do sleep 0.05; done")),
              tools(bash("touch b")),
              text("I stop here"),
              tools(write(str(ws / "nightshift.toml"), "goal = 'easier'\n")),
              tools(write(str(ws / "check.txt"), "ok")),
              tools(bash(claim("fixed"))), text("really done"))
    run = create_run(ws, resolve_config(ws))
    result: list[int] = []
    threading.Thread(target=lambda: result.append(run_foreground(run, say=lambda _: None)), daemon=True).start()
    try:
        wait_for(lambda: (ws / "a").exists(), 120, what="the first tool call to run")
        pid_file = run.root / "tmp" / "s1t1.hook" / "pid"
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not _alive(pid), 30, what="the helper to end")
        (ws / "go").touch()
        wait_for(lambda: result, 240, what="the run to end")
    finally:
        if not result:
            from nightshift.supervisor.run.inbox import send_command
            send_command(run, "stop")
            wait_for(lambda: result, 60, what="the stop")
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    assert result == [0] and evs[-1]["type"] == "run.finished" and evs[-1]["data"]["outcome"] == "done", \
        [e["type"] for e in evs]
    assert not (ws / "b").exists()  # refused after the helper died, never allowed
    stops = [e["data"] for e in evs if e["type"] == "agent.stopped"]
    assert stops[0]["reason"] == "helper_lost" and "decision helper" in stops[0]["error"], stops[0]
    denied = [e["data"] for e in evs if e["type"] == "policy.denied"]
    helper = [d for d in denied if d["rule"] == "helper"]
    assert len(helper) == 1 and "ended while the session ran" in helper[0]["message"], denied
    assert any(e["type"] == "shift.started" and e["shift"] == 2 for e in evs)
    # The next shift's helper decides as before: nightshift.toml stays the user's.
    config = [d for d in denied if d["rule"] == "config"]
    assert config and config[0]["decided_by"] == "helper", denied
    assert "easier" not in (ws / "nightshift.toml").read_text()
