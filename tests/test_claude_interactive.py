"""Interactive Claude Code in a tmux pane, its Stop hook driven by the real loop: two push-backs with the measured
failure, then the verified finish. And the hook itself: outside a run, garbage, a dead supervisor."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

from nightshift.supervisor.shift import stop_channel
from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from tests.fake_anthropic import bash, text, tools, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import require_tool, workspace  # noqa: F401


def test_stop_hook_pushes_back_twice_then_lets_the_agent_finish(workspace, fake_claude):
    require_tool("tmux")
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="interactive", backend="tmux")
    check = str(ws / "check.txt")
    fake.push(tools(write(check, "no"), bash(claim("first try"))), text("done"),
              tools(write(check, "still no"), bash(claim("second try")), match="Stop hook feedback"), text("done"),
              tools(write(check, "ok"), bash(claim("third try")), match="Stop hook feedback"), text("really done"))
    run = create_run(ws, resolve_config(ws))
    code = run_foreground(run, say=lambda _: None)
    evs = [json.loads(line) for line in run.events.read_text().splitlines()]
    assert code == 0, [e["type"] for e in evs]
    stops = [e["data"] for e in evs if e["type"] == "agent.stopped"]
    assert [s["reason"] for s in stops] == ["hook", "hook", "hook"]
    assert [s["claim"]["summary"] for s in stops] == ["first try", "second try", "third try"]
    pushbacks = [e["data"] for e in evs if e["type"] == "pushback.sent"]
    assert [p["delivery"] for p in pushbacks] == ["hook", "hook"]
    assert [e["type"] for e in evs].count("agent.started") == 1  # one session throughout
    feedback = [r.last_user_text() for r in fake.requests if "Stop hook feedback" in (r.last_user_text() or "")]
    assert len(feedback) == 2 and "tests: exit status 1" in feedback[0]
    assert stops[0]["session_id"] and stops[0]["cost_usd"] > 0


def hook(env: dict, stdin: str, timeout: float = 30) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NIGHTSHIFT_")}
    return subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "hook", "stop"], input=stdin, text=True,
                          capture_output=True, env={**clean, **env}, timeout=timeout)


def test_hook_outside_a_run_or_with_garbage_does_nothing(tmp_path):
    (tmp_path / "stops").mkdir()
    out = hook({}, json.dumps({"session_id": "s", "last_assistant_message": "hi"}))
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""
    out = hook({"NIGHTSHIFT_RUN_DIR": str(tmp_path), "NIGHTSHIFT_TOKEN": "t"}, "not json {")
    assert out.returncode == 0 and out.stdout == "" and not list((tmp_path / "stops").iterdir())


def test_hook_releases_the_agent_when_the_supervisor_is_gone(tmp_path):
    (tmp_path / "stops").mkdir()
    started = time.monotonic()
    out = hook({"NIGHTSHIFT_RUN_DIR": str(tmp_path), "NIGHTSHIFT_TOKEN": "t", "NIGHTSHIFT_HOOK_TIMEOUT": "20"},
               json.dumps({"session_id": "s"}))
    assert out.returncode == 0 and out.stdout == ""
    assert time.monotonic() - started < 10  # not the whole timeout: the dead supervisor was noticed
    released = list((tmp_path / "stops").glob("*.released.json"))
    assert len(released) == 1 and json.loads(released[0].read_text())["why"] == "supervisor not running"


def test_hook_prints_the_block_answer(tmp_path):
    stops = tmp_path / "stops"
    stops.mkdir()
    (tmp_path / "supervisor.json").write_text(json.dumps({"host": os.uname().nodename, "pid": os.getpid()}))

    def answer():
        while not stop_channel.pending(stops):
            time.sleep(0.01)
        request = stop_channel.pending(stops)[0]
        assert request["token"] == "tok" and request["last_assistant_message"] == "I am done."
        stop_channel.answer(stops, request["id"], "block", "oracle: TT 3e-2 > rtol 1e-3")
    threading.Thread(target=answer, daemon=True).start()
    out = hook({"NIGHTSHIFT_RUN_DIR": str(tmp_path), "NIGHTSHIFT_TOKEN": "tok"},
               json.dumps({"session_id": "s", "last_assistant_message": "I am done."}))
    assert json.loads(out.stdout) == {"decision": "block", "reason": "oracle: TT 3e-2 > rtol 1e-3"}


def test_another_claude_session_in_the_workspace_is_untouched(workspace, fake_claude):
    """A second session, started by hand with nightshift's settings file, gets no block and posts no stop."""
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="interactive", backend="tmux")
    run = create_run(ws, resolve_config(ws))
    from nightshift.supervisor.agents.claude import ClaudeAgent
    from nightshift.supervisor.agents.base import TurnContext
    from nightshift.supervisor.shift.launcher import frozen_config
    agent = ClaudeAgent("interactive")
    ctx = TurnContext(run=run, config=frozen_config(run), shift=1, turn=1, prompt_file=ws / "x", fresh=True,
                      token="tok")
    agent.prepare(ctx)
    fake.push(text("hello from the other session"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIGHTSHIFT_")}
    out = subprocess.run(["claude", "-p", "hi", "--settings", str(agent.settings_file(ctx)), "--output-format",
                          "json"], cwd=ws, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["result"] == "hello from the other session"
    assert not list(run.stops.iterdir())
