"""Headless Claude Code (`claude -p`, stream-json, --resume) driven by the real loop; only the model is fake."""
from __future__ import annotations

import json
import threading
import time

from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from tests.fake_anthropic import bash, text, tools, usage_limit, write
from tests.fixtures_claude import claim, fake_claude  # noqa: F401
from tests.fixtures_core import wait_for, workspace  # noqa: F401


def events(run):
    return [json.loads(line) for line in run.events.read_text().splitlines()]


def test_headless_turn_then_pushback_with_resume(workspace, fake_claude):
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="headless", backend="local")
    fake.push(tools(write(str(ws / "check.txt"), "no"), bash(claim("premature"))), text("done"),
              tools(write(str(ws / "check.txt"), "ok"), bash(claim("fixed")), match="does not pass yet"),
              text("fixed now"))
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    evs = events(run)
    stops = [e["data"] for e in evs if e["type"] == "agent.stopped"]
    assert len(stops) == 2 and stops[0]["claim"]["summary"] == "premature"
    assert stops[0]["cost_usd"] > 0 and stops[0]["session_id"] == stops[1]["session_id"]  # resumed, same session
    assert stops[0]["context_tokens"] > 0
    assert run.turn_file(1, 1, "stream.jsonl").exists() and run.turn_file(1, 2, "stream.jsonl").exists()
    assert "--resume" in run.turn_file(1, 2, "inner.sh").read_text()  # the command, run inside the namespace
    resumed = [r for r in fake.requests if r.kind == "script"][2]
    assert "does not pass yet" in resumed.last_user_text() and len(resumed.body["messages"]) > 3
    state = json.loads(run.snapshot.read_text())["state"]
    assert state["outcome"] == "done" and abs(state["cost_usd"] - sum(s["cost_usd"] for s in stops)) < 1e-9
    for r in fake.requests:  # the key never reaches a file of ours
        assert "dummy" not in json.dumps(r.headers)
    assert "dummy" not in "".join(p.read_text(errors="ignore") for p in run.root.rglob("*") if p.is_file())


def test_usage_limit_waits_and_is_not_counted(workspace, fake_claude):
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="headless", backend="local")
    reset = int(time.time()) + 3
    fake.push(usage_limit(reset, as_error=True),
              tools(write(str(ws / "check.txt"), "ok"), bash(claim("done after the limit"))), text("ok"))
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    evs = events(run)
    waiting = [e["data"] for e in evs if e["type"] == "agent.waiting"]
    assert len(waiting) == 1 and waiting[0]["until"] >= reset
    assert [e["type"] for e in evs].count("shift.started") == 1
    assert [e["type"] for e in evs].count("verify.finished") == 1  # the limited turn was not verified
    assert json.loads(run.snapshot.read_text())["state"]["stale_stops"] == 0


def test_cost_budget_pauses_the_run(workspace, fake_claude):
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="headless", backend="local", max_cost=0.001)
    fake.push(tools(write(str(ws / "check.txt"), "no")), text("done"))
    run = create_run(ws, resolve_config(ws))
    threading.Thread(target=run_foreground, args=(run,), kwargs={"say": lambda _: None}, daemon=True).start()
    wait_for(lambda: any(e["type"] == "run.paused" for e in events(run)), what="the budget pause")
    exceeded = [e["data"] for e in events(run) if e["type"] == "budget.exceeded"]
    assert exceeded[0]["what"] == "max_cost_usd" and exceeded[0]["value"] >= 0.001
    from nightshift.supervisor.run.inbox import send_command
    send_command(run, "stop")
    wait_for(lambda: any(e["type"] == "run.finished" for e in events(run)), what="the stop")


def test_a_full_context_gets_a_fresh_shift_instead_of_a_pushback(workspace, fake_claude):
    fake, seed = fake_claude
    ws = workspace.path
    seed(ws, mode="headless", backend="local", context_window=2000)
    fake.push(tools(write(str(ws / "check.txt"), "no")), text("done"),
              tools(write(str(ws / "check.txt"), "ok"), bash(claim("fixed")), match="orient yourself"), text("ok"))
    run = create_run(ws, resolve_config(ws))
    assert run_foreground(run, say=lambda _: None) == 0
    assert [e["data"]["reason"] for e in events(run) if e["type"] == "shift.ended"] == ["context"]
    turn_scripts = [run.turn_file(2, 1, name) for name in ("sh", "inner.sh")]  # inner.sh: inside the namespace
    assert "--resume" not in "".join(p.read_text() for p in turn_scripts if p.exists())
    assert "claude" in "".join(p.read_text() for p in turn_scripts if p.exists())
