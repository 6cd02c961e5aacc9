"""A synthetic long run for `nightshift report` tests and bench/bench_report.py: many shifts and turns written
in bulk through the real fold (supervisor.run.state.apply) and snapshot, with what a night brings: a preflight
gap, two comparisons (one held out) closing in on their tolerance, pauses, a nudge, policy refusals, an API
wait, a breaker trip, judge findings, a CHANGELOG with failed approaches, and a verified end.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import apply, empty_state, write_snapshot

T0 = datetime(2026, 11, 20, 22, 0, 0, tzinfo=timezone.utc)

CONFIG = """goal = "P(k) and C_l agree with CLASS to 0.1%"
[limits]
max_shifts = 2000
max_hours = 200
max_cost_usd = 500
[oracle]
command = "python -m solver"
[[oracle.compare]]
name = "C_l TT"
candidate = "out/cl.dat"
reference = "reference/cl.dat"
rtol = 1e-3
[[oracle.compare]]
name = "P(k)"
candidate = "out/pk.dat"
reference = "/elsewhere/pk.dat"
rtol = 1e-3
heldout = true
"""

CHANGELOG = """# CHANGELOG: lab notes

## Current status

Both spectra within tolerance.

## Failed approaches

- Halofit from the 2012 paper: P(k) 4% off at k > 1 h/Mpc; the 2016 revision is what CLASS uses.
- Tighter ODE tolerance alone (1e-8): no change in C_l TT, 3x slower.

## Entries

### shift 1
- set up
"""


def _ts(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def write_long_run(root: Path, shifts: int = 1000, turns: int = 2, run_id: str = "20261120-220000-long",
                   finished: bool = True) -> RunPaths:
    """Write the run under ``root/ws``; about ``shifts * (turns * 8 + 2)`` events. Returns its paths."""
    ws = root / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "CHANGELOG.md").write_text(CHANGELOG)
    run = RunPaths.for_run(ws, run_id).create()
    run.config.write_text(CONFIG)
    state = empty_state()
    seq, clock = 0, 0.0
    total = shifts * turns
    with open(run.events, "w", encoding="utf-8") as fh:
        def emit(type_: str, shift: int | None, **data) -> None:
            nonlocal seq, clock
            seq += 1
            clock += 3.0
            event = {"v": 1, "seq": seq, "ts": _ts(clock), "type": type_, "shift": shift, "data": data}
            fh.write(json.dumps(event, separators=(",", ":")) + "\n")
            apply(state, event)
        emit("run.created", None, run_id=run_id, workspace=str(ws), goal="P(k) and C_l agree with CLASS to 0.1%",
             agent="claude", backend="slurm", host="login1", base="0" * 40)
        emit("preflight.finished", None, metrics={"C_l TT": 2.0e3, "P(k)": 5.0e2}, metric=2.0e3, passed=True,
             problems=[])
        k = 0
        for s in range(1, shifts + 1):
            emit("shift.started", s, token="t", base="b")
            for t in range(1, turns + 1):
                k += 1
                frac = k / total
                tt, pk = 2.0e3 ** (1 - frac) * 0.5 ** frac, 5.0e2 ** (1 - frac) * 0.8 ** frac
                last = finished and k == total
                emit("agent.started", s, turn=t, target={"backend": "slurm", "job_id": 1000 + k})
                emit("slurm.job_changed", s, job_id=1000 + k, state="RUNNING", reason="", node="n1")
                emit("agent.stopped", s, turn=t, reason="exit", exit_code=0, cost_usd=0.05,
                     usage={"input_tokens": 20000 + t, "output_tokens": 1500}, context_tokens=60000 + 100 * t,
                     claim={"status": "done", "summary": "within tolerance"} if last else None)
                emit("slurm.job_changed", s, job_id=1000 + k, state="COMPLETED", reason="", node="n1", core_hours=0.5)
                emit("verify.started", s, turn=t)
                passed = last
                judge = ({"available": True, "passed": True, "findings": [
                    {"criterion": "No tolerance was loosened.", "verdict": "PASS", "evidence": "none", "fix": ""}]}
                    if last else None)
                emit("verify.finished", s, turn=t, passed=passed, claimed="done" if last else None,
                     summary=(f"{'PASS' if passed else 'FAIL'}: oracle: worst C_l TT {tt:.3g}x tolerance; "
                              f"tests: {10 + k * 40 // total} passed, 0 failing, 0 regressed"),
                     checks=[{"name": "tests", "passed": True, "summary": f"tests: {10 + k * 40 // total} passed",
                              "lines": []}],
                     metric=max(tt, pk), metrics={"C_l TT": tt, "P(k)": pk}, judge=judge, judge_cost_usd=0.01 if last else 0)
                emit("commit.created", s, turn=t, sha=f"{k:08x}" + "c" * 32, head=f"{k:08x}" + "c" * 32, passed=passed, stale=False)
                if not last:
                    emit("pushback.sent", s, turn=t + 1, mode="session" if t < turns else "fresh", delivery="launch")
            if s == 3:
                emit("policy.denied", s, rule="Bash(git push*)", reason="pushing is not allowed in a run")
                emit("agent.waiting", s, until=_ts(clock + 600), reason="usage limit reached")
            if s == max(4, shifts // 2):
                emit("breaker.tripped", s, stops=4, reason="4 stops in a row with no diff and no better verdict")
                emit("run.paused", s, reason="breaker: 4 stops with no change", kind="breaker")
                emit("command.accepted", s, id="c1", verb="nudge", args={"message": "try the 2016 halofit"})
                emit("run.resumed", s, by="user", reset_breaker=True)
            emit("shift.ended", s, reason="pushbacks exhausted" if s < shifts else "claimed done")
        if finished:
            emit("run.finished", shifts, outcome="done", reason="within tolerance")
        offset = fh.tell()
    write_snapshot(run.snapshot, state, offset)
    return run
