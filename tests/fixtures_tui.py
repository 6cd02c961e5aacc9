"""Fixture run directories for the TUI tests, written with the real EventLog and write_snapshot under a
fixed clock, so the screens are the same on every machine and every day.

``tui_world`` builds a home folder with several runs in every condition the dashboard must show (working on
another login node, done, paused, half written, deleted, a torn log line) and registers them in the private
registry (conftest gives each test its own XDG_STATE_HOME). ``write_big_run`` writes a run with a million
events in bulk, with a snapshot near its end, for the reattach test and the benchmark.
"""
from __future__ import annotations

import contextlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest

import nightshift.supervisor.run.events as events_module
from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.registry import register
from nightshift.supervisor.run.state import apply, empty_state, write_snapshot

FIXED_NOW = datetime(2026, 11, 22, 9, 0, 0, tzinfo=timezone.utc).timestamp()
HOST = "login2"  # not this machine: liveness comes from the heartbeat's age, measured with the fixed clock


def fixed_clock() -> float:
    return FIXED_NOW


def ts_at(seconds_before_now: float) -> str:
    at = datetime.fromtimestamp(FIXED_NOW - seconds_before_now, tz=timezone.utc)
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@contextlib.contextmanager
def clock_from(seconds_before_now: float, step: float = 60.0) -> Iterator[None]:
    """Event timestamps start ``seconds_before_now`` before FIXED_NOW and advance ``step`` per event."""
    at = [seconds_before_now]

    def fake_now() -> str:
        stamp = ts_at(at[0])
        at[0] -= step
        return stamp

    real = events_module.utc_now
    events_module.utc_now = fake_now
    try:
        yield
    finally:
        events_module.utc_now = real


def make_run(home: Path, name: str, run_id: str) -> RunPaths:
    workspace = home / "work" / name
    workspace.mkdir(parents=True, exist_ok=True)
    return RunPaths.for_run(workspace, run_id).create()


def heartbeat(run: RunPaths, age: float, host: str = HOST, **extra: Any) -> None:
    run.supervisor.write_text(json.dumps({"host": host, "pid": 4242, "started": FIXED_NOW - 7200, **extra}))
    os.utime(run.supervisor, (FIXED_NOW - age, FIXED_NOW - age))


def oracle_report(tt: float, ee: float, pk: float) -> dict[str, Any]:
    """Shaped like supervisor/oracle's report (oracle.json), with the fields the Oracle tab reads."""
    def col(name, rel, x, rtol, points):
        return {"column": name, "rtol": rtol, "atol": 0.0, "points": points, "failing": 0 if rel <= rtol else 31,
                "nonfinite": 0, "max_rel": rel, "x_max_rel": x, "max_abs": rel * 2.1e3, "x_max_abs": x,
                "median_rel": rel / 9, "p95_rel": rel / 2, "ratio": rel / rtol, "passed": rel <= rtol}
    return {"v": 1, "mode": "full", "passed": False, "comparisons": [
        {"name": "lensed C_l", "passed": tt <= 1e-3 and ee <= 1e-3, "ratio": max(tt, ee) / 1e-3, "error": None,
         "columns": [col("TT", tt, 2401, 1e-3, 2499), col("EE", ee, 1717, 1e-3, 2499)]},
        {"name": "P(k)", "passed": pk <= 1e-2, "ratio": pk / 1e-2, "error": None,
         "columns": [col("P", pk, 0.31, 1e-2, 400)]}]}


def verdict(log: EventLog, run: RunPaths, shift: int, turn: int, tt: float, ee: float, pk: float,
            passed: bool = False) -> None:
    worst_cl, worst_pk = max(tt, ee) / 1e-3, pk / 1e-2
    checks = [{"name": "oracle", "passed": passed, "summary": f"lensed C_l worst {max(tt, ee):.2e} vs rtol 1e-3",
               "lines": [f"lensed C_l TT: max rel {tt:.2e} at l=2401 > 1e-3"]},
              {"name": "tests", "passed": True, "summary": "14 passed", "lines": []},
              {"name": "plan", "passed": passed, "summary": "2 of 5 plan items open", "lines": ["- [ ] halofit"]}]
    data = {"turn": turn, "passed": passed, "claimed": "done", "summary": ("PASS: " if passed else "FAIL: ") +
            checks[0]["summary"], "checks": checks, "metric": max(worst_cl, worst_pk),
            "metrics": {"lensed C_l": worst_cl, "P(k)": worst_pk}}
    folder = run.turn_file(shift, turn, "oracle")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "oracle.json").write_text(json.dumps(oracle_report(tt, ee, pk)))
    run.turn_file(shift, turn, "verdict.json").write_text(json.dumps(data, indent=1))
    log.append("verify.started", shift, turn=turn)
    log.append("verify.finished", shift, **data)


def finish_with_snapshot(run: RunPaths, keep_tail: int = 2) -> None:
    """A snapshot a few events before the end, as the supervisor leaves it: readers fold only the tail."""
    lines = run.events.read_bytes().splitlines(keepends=True)
    head = b"".join(lines[:-keep_tail]) if keep_tail else b"".join(lines)
    state = empty_state()
    for line in head.splitlines():
        apply(state, json.loads(line))
    write_snapshot(run.snapshot, state, len(head))


def write_cosmo(home: Path) -> RunPaths:
    """A run working on its third shift, supervised from another login node, with oracle history."""
    run = make_run(home, "class-solver", "20261121-220000-c0de")
    ws = run.workspace
    (ws / "CLAUDE.md").write_text("# Plan\n\nGoal: lensed C_l within 0.1% of CLASS.\n\n"
                                  "- [x] background and thermodynamics\n- [x] perturbations, scalar modes\n"
                                  "- [x] lensing\n- [ ] halofit non-linear P(k)\n- [ ] tensor modes\n")
    (ws / "CHANGELOG.md").write_text("# Lab notes\n\n## Shift 2\n- RK45 in the tight-coupling regime: 4e-3 at l=2400,"
                                     " **failed**; switched to an implicit stepper.\n\n## Shift 1\n- First pass.\n")
    with clock_from(11 * 3600, step=1200):
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=str(ws), goal="A Boltzmann solver whose lensed C_l "
                   "agree with CLASS to 0.1%", agent="claude", backend="tmux", host=HOST, base="a1b2c3d")
        figures = [(4.1e-2, 9e-3, 8e-2), (4.0e-3, 2.2e-3, 2.5e-2), (1.8e-3, 6e-4, 9e-3)]
        for shift, (tt, ee, pk) in enumerate(figures, start=1):
            log.append("shift.started", shift, token=f"tok{shift}", base="a1b2c3d", prompt_file="t1.prompt.md")
            run.shift_dir(shift).mkdir(parents=True, exist_ok=True)
            run.turn_file(shift, 1, "prompt.md").write_text(f"Orientation for shift {shift}: read CLAUDE.md.\n")
            run.turn_file(shift, 1, "log").write_text(f"\x1b[1mshift {shift}\x1b[0m working on the stepper\n"
                                                      "$ python -m solver --out out/\nwrote out/cl_lensed.dat\n")
            log.append("agent.started", shift, turn=1, target={"backend": "log"})
            log.append("agent.stopped", shift, turn=1, reason="claim", exit_code=None, cost_usd=1.25,
                       claim={"status": "done", "summary": "all spectra agree"})
            verdict(log, run, shift, 1, tt, ee, pk)
            log.append("commit.created", shift, turn=1, sha=f"{shift}f00dbeefcafe", head=None, passed=False, stale=False)
            if shift < 3:
                run.turn_file(shift, 2, "prompt.md").write_text("lensed C_l TT still fails: 4.0e-03 at l=2401 > 1e-3.\n"
                                                                "Record the failed approach in CHANGELOG.md.\n")
                log.append("pushback.sent", shift, turn=2, mode="fresh", delivery="new")
                log.append("shift.ended", shift, reason="pushed back (fresh shift)")
        log.append("pushback.sent", 3, turn=2, mode="session", delivery="typed")
        log.append("agent.started", 3, turn=2, target={"backend": "log"})
        log.close()
    run.turn_file(3, 2, "log").write_text("tightening the tolerance of the implicit stepper\n$ pytest -q\n14 passed\n")
    finish_with_snapshot(run)
    heartbeat(run, age=3)
    return run


def write_done(home: Path) -> RunPaths:
    run = make_run(home, "ode-demo", "20261120-080000-d0e5")
    with clock_from(2 * 86400, step=40):
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=str(run.workspace), goal="ODE integrator to 1e-6",
                   agent="demo", backend="local", host=HOST)
        log.append("shift.started", 1, token="t", base="b")
        log.append("agent.started", 1, turn=1, target={"backend": "local"})
        log.append("agent.stopped", 1, turn=1, reason="exit", cost_usd=0.0)
        verdict(log, run, 1, 1, 2e-7, 1e-7, 1e-4, passed=True)
        log.append("run.finished", outcome="done", reason="verified")
        log.close()
    heartbeat(run, age=2 * 86400 - 300, stopped=True)
    return run


def write_paused(home: Path) -> RunPaths:
    run = make_run(home, "camb-port", "20261121-180000-9a05")
    with clock_from(3 * 3600, step=30):
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=str(run.workspace), goal="Port CAMB's recfast",
                   agent="claude", backend="slurm", host=HOST)
        log.append("shift.started", 1, token="t", base="b")
        log.append("slurm.job_changed", 1, job_id="81234", state="RUNNING", reason=None, node="c042")
        log.append("agent.stopped", 1, turn=1, reason="exit", cost_usd=3.5)
        log.append("run.paused", reason="budget: max cost $3 reached")
        log.close()
    heartbeat(run, age=400)  # older than STALE_AFTER: its supervisor is gone
    return run


def write_torn(home: Path) -> RunPaths:
    run = make_run(home, "torn-log", "20261121-230000-7077")
    with clock_from(1800, step=10):
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=None, goal="A log with bad lines",
                   agent="claude", backend="tmux", host=HOST)
        log.close()
    with open(run.events, "ab") as fh:
        fh.write(b'{"v":1,"seq":2,"ts":"2026-11-22T08:40:00.0Z","type":"shift.sta\n')  # unreadable line
        fh.write(b'{"v":1,"seq":3,"ts":"2026-11-22T08:41:00.0Z","type":"shift.started","shift":1,"data":{}}\n')
        fh.write(b'{"v":1,"seq":4,"ts":"2026-11-22T0')  # torn last line
    heartbeat(run, age=10)
    return run


def tui_world(home: Path) -> dict[str, RunPaths]:
    """Every kind of row, registered in the (private) registry in a fixed order."""
    runs = {"done": write_done(home), "paused": write_paused(home), "torn": write_torn(home)}
    half = make_run(home, "half-written", "20261121-235900-4a1f")
    half.config.write_text("goal = 'never started'\n")
    runs["half"] = half
    gone = RunPaths.for_run(home / "work" / "deleted-ws", "20261121-120000-dead")
    runs["gone"] = gone
    runs["cosmo"] = write_cosmo(home)
    for run in runs.values():
        register(run, host=HOST, created=FIXED_NOW)
    return runs


@pytest.fixture
def tui_home(tmp_path, monkeypatch):
    """HOME is a temporary folder (paths show as ~/...), with the fixture runs registered."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    return home, tui_world(home)


def write_big_run(root: Path, n_events: int, name: str = "big", run_id: str | None = None) -> RunPaths:
    """A run with ``n_events`` events written in bulk, and a snapshot a few events before the end.

    The snapshot's goal differs from run.created's on purpose: a reader that shows the snapshot's goal did
    not replay the log.
    """
    run = make_run(root, name, run_id or f"20261101-000000-{n_events % 65536:04x}")
    start = FIXED_NOW - 20 * 86400
    state = empty_state()
    created = {"v": 1, "seq": 1, "ts": ts_at(FIXED_NOW - start), "type": "run.created", "shift": None,
               "data": {"run_id": run.run_id, "workspace": str(run.workspace), "goal": "goal as first logged",
                        "agent": "claude", "backend": "tmux", "host": HOST}}
    apply(state, created)
    tail_n = min(5, n_events - 1)
    body_n = n_events - 1 - tail_n
    with open(run.events, "wb") as fh:
        fh.write((json.dumps(created, separators=(",", ":")) + "\n").encode())
        chunk: list[str] = []
        ts = ts_at(3600)
        for seq in range(2, body_n + 2):
            chunk.append('{"v":1,"seq":%d,"ts":"%s","type":"command.rejected","shift":null,'
                         '"data":{"id":"c%d","verb":"pause","reason":"already paused"}}\n' % (seq, ts, seq))
            if len(chunk) >= 50_000:
                fh.write("".join(chunk).encode())
                chunk = []
        fh.write("".join(chunk).encode())
        offset = fh.tell()
    state["seq"], state["last_event_ts"] = body_n + 1, ts
    state["goal"] = "goal from the snapshot"
    write_snapshot(run.snapshot, state, offset)
    with clock_from(120, step=10):
        log = EventLog(run.events, last_seq=body_n + 1, tail_offset=offset)
        log.append("shift.started", 7, token="t", base="b")
        for _ in range(tail_n - 1):
            log.append("agent.started", 7, turn=1, target={"backend": "log"})
        log.close()
    heartbeat(run, age=2)
    return run
