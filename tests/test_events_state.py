"""The event log and the fold: fsync'd appends, readers from an offset, torn lines, snapshot plus tail."""
from __future__ import annotations

import json

from nightshift.supervisor.run.events import EventLog, read_events
from nightshift.supervisor.run.state import apply, empty_state, load_state, write_snapshot


def fill(log: EventLog, shifts: int) -> None:
    log.append("run.created", None, run_id="r", workspace="/w", goal="g", agent="demo", backend="tmux", base="abc")
    for n in range(1, shifts + 1):
        log.append("shift.started", n, token=f"t{n}", base="abc")
        log.append("agent.started", n, turn=1, target={"backend": "tmux"})
        log.append("agent.stopped", n, turn=1, reason="exit", cost_usd=0.5)
        log.append("verify.finished", n, turn=1, passed=False, summary="FAIL", checks=[], metric=1.0 / n, metrics={})
        log.append("commit.created", n, turn=1, sha=f"s{n}", head=f"s{n}", passed=False, stale=False)
        log.append("shift.ended", n, reason="context")


def test_events_have_the_contracted_shape_and_consecutive_seq(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    fill(log, 2)
    events = read_events(tmp_path / "events.jsonl").events
    assert [e["seq"] for e in events] == list(range(1, 14))
    assert set(events[1]) == {"v", "seq", "ts", "type", "shift", "data"} and events[1]["ts"].endswith("Z")
    reopened = EventLog(tmp_path / "events.jsonl")
    assert reopened.append("run.paused", None, reason="x")["seq"] == 14


def test_reader_skips_a_torn_last_line_and_waits_for_it(tmp_path):
    path = tmp_path / "events.jsonl"
    fill(EventLog(path), 1)
    size = path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(b'{"v":1,"seq":8,"type":"shift.st')
    result = read_events(path)
    assert len(result.events) == 7 and result.offset == size
    assert "incomplete last line" in result.warnings[0]
    writer = EventLog(path)  # the next writer cuts the torn tail off and keeps its bytes aside
    assert "torn last line" in writer.warnings[0]
    assert writer.append("run.resumed", None)["seq"] == 8
    assert len(read_events(path).events) == 8


def test_a_corrupt_line_in_the_middle_is_skipped_not_fatal(tmp_path):
    path = tmp_path / "events.jsonl"
    fill(EventLog(path), 1)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3] + [b"garbage\n"] + lines[3:]))
    result = read_events(path)
    assert len(result.events) == 7 and "unreadable line" in result.warnings[0]


def test_snapshot_plus_tail_equals_a_full_replay(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    log = EventLog(run / "events.jsonl")
    fill(log, 3)
    state, offset, _ = load_state(run)
    write_snapshot(run / "snapshot.json", state, offset)
    fill(log, 2)
    from_snapshot, _, warnings = load_state(run)
    full = empty_state()
    for event in read_events(run / "events.jsonl").events:
        apply(full, event)
    assert from_snapshot == full and not warnings
    assert full["cost_usd"] == 2.5 and full["best_metric"] == 1.0 / 3
    assert [row["n"] for row in full["shifts"]] == [1, 2, 3]  # shift numbers restart in the second fill
    assert json.loads((run / "snapshot.json").read_text())["seq"] == 19


def test_a_snapshot_ahead_of_the_log_is_ignored(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    fill(EventLog(run / "events.jsonl"), 1)
    write_snapshot(run / "snapshot.json", {**empty_state(), "seq": 500}, 10 ** 9)
    state, _, warnings = load_state(run)
    assert state["seq"] == 7 and "ahead" in warnings[0]
