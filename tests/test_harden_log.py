"""The log's own edges: a torn tail followed by garbage never makes seq jump, and a snapshot that is valid JSON
but does not match the log (seq and offset of the last event it folded) is rebuilt, not trusted."""
from __future__ import annotations

import json

from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.state import empty_state, load_state, write_snapshot
from tests.fixtures_core import supervise, workspace  # noqa: F401

SLOW_FIX = [["sleep", "1"], ["write", "check.txt", "ok"], ["claim", "done", "fixed"]]
WRONG = [["write", "check.txt", "no"], ["claim", "done", "premature"]]


def assert_gapless_and_done(ws, run) -> list[dict]:
    events = ws.events(run)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), [e["seq"] for e in events]
    assert [e["type"] for e in events].count("run.finished") == 1
    assert events[-1]["data"]["outcome"] == "done"
    return events


def test_a_torn_tail_followed_by_garbage_does_not_make_seq_jump(workspace):
    ws = workspace.configure({"s1t1": WRONG, "s1t2": SLOW_FIX})
    run = ws.create_run()
    assert supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": "commit.created"}).returncode == -9
    with open(run.events, "ab") as fh:
        fh.write(b'{"v":1,"seq":41,"ts":"2026-01-01T00:00:00.000000Z","type":"pushback.se\n')  # torn, then cut short
        fh.write(b'\x00\x00{"seq": 9999, "type": "x"}\n')  # garbage that parses
        fh.write(b'\xff\xfegarbage without an end')
    resumed = supervise(run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    events = assert_gapless_and_done(ws, run)
    assert [e["type"] for e in events].count("shift.started") == 1


def test_a_snapshot_that_disagrees_with_the_log_is_rebuilt_not_trusted(workspace):
    ws = workspace.configure({"s1t1": WRONG, "s1t2": SLOW_FIX})
    run = ws.create_run()
    assert supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": "commit.created"}).returncode == -9
    # Valid JSON, at the log's end, but it claims to have folded only the first event: trusted, the supervisor
    # would believe no shift ever started and begin shift 1 again.
    size = run.events.stat().st_size
    write_snapshot(run.snapshot, {**empty_state(), "seq": 1}, size)
    resumed = supervise(run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "snapshot.json disagrees with events.jsonl" in resumed.stdout
    events = assert_gapless_and_done(ws, run)
    assert [e["shift"] for e in events if e["type"] == "shift.started"] == [1]


def test_load_state_checks_the_snapshot_against_the_event_it_names(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    for n in range(5):
        log.append("run.paused" if n % 2 else "run.resumed", None, n=n)
    state, offset, warnings = load_state(tmp_path)
    assert state["seq"] == 5 and not warnings
    write_snapshot(tmp_path / "snapshot.json", state, offset)
    assert load_state(tmp_path)[2] == []  # consistent: trusted
    snap = json.loads((tmp_path / "snapshot.json").read_text())
    write_snapshot(tmp_path / "snapshot.json", {**snap["state"], "seq": 4}, offset)  # seq does not match
    state, _, warnings = load_state(tmp_path)
    assert state["seq"] == 5 and "folded seq 4 but the event ending at byte" in warnings[0]
    write_snapshot(tmp_path / "snapshot.json", snap["state"], offset - 3)  # offset inside a line
    state, _, warnings = load_state(tmp_path)
    assert state["seq"] == 5 and "not the end of an event" in warnings[0]
