"""Kill -9 of the supervisor at several points of the loop, then resume: the run continues from its log, a
live agent is adopted (never launched twice), and no shift or turn is lost or counted twice."""
from __future__ import annotations

import pytest

from tests.fixtures_core import supervise, workspace  # noqa: F401

SLOW_FIX = [["sleep", "2"], ["write", "check.txt", "ok"], ["claim", "done", "fixed"]]
WRONG = [["write", "check.txt", "no"], ["claim", "done", "premature"]]


@pytest.mark.parametrize("crash_after, script", [
    ("shift.started", {"s1t1": SLOW_FIX}),          # before the agent was launched
    ("agent.started", {"s1t1": SLOW_FIX}),          # while the agent works: it must be adopted
    ("agent.stopped", {"s1t1": SLOW_FIX}),          # before verifying
    ("verify.started", {"s1t1": SLOW_FIX}),         # while verifying
    ("commit.created", {"s1t1": WRONG, "s1t2": SLOW_FIX}),  # between the commit and the push-back
    ("pushback.sent", {"s1t1": WRONG, "s1t2": SLOW_FIX}),   # after deciding, before launching the next turn
])
def test_kill_9_then_resume_continues_the_same_run(workspace, crash_after, script):
    ws = workspace.configure(script)
    run = ws.create_run()
    crashed = supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": crash_after})
    assert crashed.returncode == -9, crashed.stderr
    assert ws.types(run)[-1] == crash_after
    resumed = supervise(run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    events = ws.events(run)
    types = [e["type"] for e in events]
    assert events[-1]["data"]["outcome"] == "done"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert types.count("shift.started") == 1
    turns = len(script)
    launched = [e["data"]["turn"] for e in events if e["type"] in ("agent.started", "agent.adopted")]
    assert sorted(set(launched)) == list(range(1, turns + 1))
    assert [e["data"]["turn"] for e in events if e["type"] == "agent.started"] == sorted(
        set(e["data"]["turn"] for e in events if e["type"] == "agent.started"))  # never launched twice
    stopped = [e["data"]["turn"] for e in events if e["type"] == "agent.stopped"]
    assert stopped == list(range(1, turns + 1))  # each stop recorded once
    for turn in range(1, turns + 1):
        log = run.turn_file(1, turn, "log").read_text()
        assert log.count(f"scripted agent s1t{turn}") == 1  # the agent ran exactly once per turn
    if crash_after == "agent.started":
        assert "agent.adopted" in types


def test_a_torn_last_event_after_a_crash_is_skipped_and_the_run_continues(workspace):
    ws = workspace.configure({"s1t1": WRONG, "s1t2": SLOW_FIX})
    run = ws.create_run()
    supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": "commit.created"})
    with open(run.events, "ab") as fh:
        fh.write(b'{"v":1,"seq":99,"ts":"2026-01-01T00:00:00.000000Z","type":"pushback.se')  # torn mid-write
    resumed = supervise(run)
    assert resumed.returncode == 0
    assert "torn last line" in resumed.stdout
    assert run.events.with_suffix(".jsonl.torn").read_bytes().startswith(b'{"v":1,"seq":99')
    assert ws.events(run)[-1]["data"]["outcome"] == "done"
