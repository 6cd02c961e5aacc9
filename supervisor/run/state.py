"""Fold events into a snapshot of a run, and read a run quickly (snapshot.json plus the log's tail).

The fold is the one interpretation of the event log shared by the supervisor (to resume), the CLI
(`status`) and the TUI. Event types, with the ``data`` fields the fold reads:

run.created      run_id workspace goal agent backend host
shift.started    (shift=n) token base prompt_file
agent.started    (shift) turn target            agent.adopted (shift) turn target
agent.waiting    (shift) until reason           agent.stopped (shift) turn reason exit_code claim cost_usd
verify.started   (shift) turn                   verify.finished (shift) turn passed claimed summary checks metrics
                                                heldout (evaluations bits best withheld: what the held-out exam released)
commit.created   (shift) turn sha head passed stale   commit.skipped (same, no sha; head: the next stop's measure)
pushback.sent    (shift) turn mode delivery     shift.ended (shift) reason
budget.exceeded  what limit value               breaker.tripped stops reason
run.paused       reason kind                    run.resumed by
supervisor.started pid phase                    supervisor.crashed reason error
command.accepted id verb                        command.rejected id verb reason
slurm.job_changed job_id state reason node start time_limit run_time cpus gpus [core_hours gpu_hours accounting]
run.finished     outcome reason
preflight.finished passed problems metric metrics summary report (the baseline: the oracle before any shift)
preflight.skipped  reason
tests.baseline   source command passing failing flaky per_test passed_total runs runs_said [collect_errors]
                 (the ratchet's starting set: the tests that passed when the run began; verify/baseline.py)
test.released    tests why by files (a person let tests go from the ratchet: `nightshift release`)
policy.denied    (shift) tool input rule message  policy.sandbox available problem
agent.waiting    (shift) kind=human what        agent.wait_answered (shift) by answer
judge.waiting    (shift) turn until tries error deadline  verify.retried (shift) turn reason
supervisor.revived by reason deaths (written by `resume --dead` before it starts a new supervisor)
agent.stalled    (shift) turn action=nudged|ended silent [delivered]
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.ratchet_state import fold_ratchet

FINAL_STATUSES = ("done", "failed", "stopped")


def empty_state() -> dict[str, Any]:
    return {
        "run_id": None, "workspace": None, "goal": "", "agent": None, "backend": None, "host": None,
        "created": None, "status": "created", "phase": "new", "shift": 0, "turn": 0, "target": None,
        "last_stop": None, "last_verdict": None, "last_pushback": None, "shifts": [],
        "cost_usd": 0.0, "pushbacks_in_shift": 0, "stale_stops": 0, "best_metric": None,
        "metrics": [], "paused": False, "pause_reason": None, "waiting_until": None,
        "outcome": None, "finish_reason": None, "finished_ts": None, "seq": 0, "last_event_ts": None, "slurm": None,
        "nudges": [], "token": None, "shift_base": None, "accepted_base": None, "run_base": None, "launch_turn": 1,
        "verdict_head": None,
        "judge_cost_usd": 0.0, "refusals": 0, "recent_refusals": [], "waiting_for": None, "baseline": None,
        "pause_kind": None, "crash": None, "branch": None, "slurm_jobs": 0, "slurm_end": None,
        "slurm_first_start": None, "core_hours": 0.0, "gpu_hours": 0.0, "accounting": [],
        "heldout": {"evaluations": 0, "bits": 0.0, "best": {}, "withheld": 0}, "ratchet": None,
    }

# Slurm job states after which a job will not run again (hpc/jobs.py has the full vocabulary; run/ imports none).
SLURM_ENDS = ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
              "DEADLINE", "REVOKED")
# Stops of a batch turn that its job's end explains (hpc/backend.py describe_end)
SLURM_STOPS = ("walltime", "preempted", "job_failed", "vanished", "cancelled", "job_ended")


def _shift_row(state: dict[str, Any], n: int) -> dict[str, Any]:
    for row in reversed(state["shifts"]):
        if row["n"] == n:
            return row
    row = {"n": n, "started": None, "ended": None, "end_reason": None, "turns": 0, "verdict": None,
           "commits": [], "cost_usd": 0.0, "judge": None}
    state["shifts"].append(row)
    return row


def apply(state: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """Fold one event into ``state`` (in place) and return it. Unknown types only advance seq."""
    kind, data, ts = event.get("type"), event.get("data") or {}, event.get("ts")
    shift = event.get("shift")
    seq = event.get("seq")
    state["seq"] = max(state["seq"], seq if isinstance(seq, int) else 0)  # a damaged line never stops the fold
    _fold(state, kind, data, ts, shift)
    if state["paused"] and state["phase"] != "finished":
        state["status"] = "paused"  # the turn under way may finish, but the run is held
    return state


def _fold(state: dict[str, Any], kind: str, data: dict[str, Any], ts: str | None, shift: int | None) -> None:
    state["last_event_ts"] = ts
    if kind == "run.created":
        for key in ("run_id", "workspace", "goal", "agent", "backend", "host"):
            state[key] = data.get(key)
        state["created"] = ts
        state["accepted_base"] = state["run_base"] = data.get("base")  # run_base: where the agent's commits begin
        state["last_head"] = data.get("base")  # what the next stop's progress is measured from
    elif kind == "preflight.finished":  # the accuracy history's starting point, before the agent's first change
        state["baseline"] = {"metric": data.get("metric"), "metrics": data.get("metrics") or {},
                             "summary": data.get("summary"), "passed": data.get("passed")}
    elif kind in ("tests.baseline", "test.released"):
        fold_ratchet(state, kind, data, ts)
    elif kind == "shift.started":
        state.update(shift=shift, turn=0, pushbacks_in_shift=0, phase="launching", status="working",
                     token=data.get("token"), shift_base=data.get("base"), launch_turn=1, target=None)
        _shift_row(state, shift)["started"] = ts
    elif kind in ("agent.started", "agent.adopted"):
        state.update(turn=data.get("turn", state["turn"]), target=data.get("target"), phase="agent",
                     status="working", waiting_until=None, waiting_for=None)
        row = _shift_row(state, shift)
        row["turns"] = max(row["turns"], state["turn"])
    elif kind == "agent.waiting" and data.get("kind") == "human":
        state.update(status="waiting", waiting_for=data.get("what") or "a human")
    elif kind == "agent.waiting":
        state.update(status="waiting", waiting_until=data.get("until"))
    elif kind == "agent.wait_answered":
        state.update(status="working", waiting_for=None)
    elif kind == "policy.denied":
        state["refusals"] += 1
        state["recent_refusals"] = (state["recent_refusals"] + [{k: data.get(k) for k in ("tool", "input", "rule",
                                                                                          "message")}])[-20:]
    elif kind == "agent.stopped":
        state.update(last_stop=data, phase="stopped", status="verifying", waiting_for=None)
        if state.get("slurm_end") and data.get("reason") in SLURM_STOPS:
            state["slurm_end"]["stop_reason"] = data["reason"]  # what the loop made of the job's end
        cost = float(data.get("cost_usd") or 0.0)
        state["cost_usd"] += cost
        _shift_row(state, shift)["cost_usd"] += cost
    elif kind == "verify.started":
        state["status"] = "verifying"
    elif kind == "verify.retried":  # the same stop verified again (the judge was down when it was first verified)
        state.update(phase="stopped", status="verifying")
    elif kind == "judge.waiting":
        state.update(status="waiting", waiting_until=data.get("until"))
        state["judge_wait"] = {"shift": shift, "turn": data.get("turn"), "deadline": data.get("deadline")}  # restarts
    elif kind == "verify.finished":
        state.update(last_verdict=data, phase="verified", judge_wait=None, verdict_head=None)  # head: at its commit
        _shift_row(state, shift)["verdict"] = "pass" if data.get("passed") else "fail"
        if data.get("judge"):
            _shift_row(state, shift)["judge"] = data["judge"]
        state["cost_usd"] += float(data.get("judge_cost_usd") or 0.0)
        state["judge_cost_usd"] += float(data.get("judge_cost_usd") or 0.0)
        metric = data.get("metric")
        state["metrics"].append({"shift": shift, "turn": data.get("turn"), "metric": metric,
                                 "values": data.get("metrics") or {}})
        if metric is not None and (state["best_metric"] is None or metric < state["best_metric"]):
            state["best_metric"] = metric
        _fold_heldout(state, data.get("heldout"))
        counted = [c.get("passed_total") for c in data.get("checks") or [] if c.get("name") == "tests"]
        if counted and counted[0] is not None and state.get("ratchet"):  # totals only: the ratchet's count rises
            state["ratchet"]["passed_total"] = max(int(counted[0]), int(state["ratchet"].get("passed_total") or 0))
    elif kind in ("commit.created", "commit.skipped"):
        state["phase"] = "committed"
        if kind == "commit.created":
            _shift_row(state, shift)["commits"].append(data.get("sha"))
        if data.get("passed") and data.get("head"):
            state["accepted_base"] = data["head"]
        state["last_head"] = state["verdict_head"] = data.get("head")  # the commit the verdict checked
        counted = [shift, data.get("turn")]  # a stop verified again (judge hold, `resume`) counts once, not twice
        if data.get("turn") is None or state.get("stale_counted") != counted:
            state["stale_stops"] = state["stale_stops"] + 1 if data.get("stale") else 0
            state["stale_counted"] = counted
    elif kind == "pushback.sent":
        # Delivered into the live session (hook answer, typed) the agent goes on; otherwise a new process.
        live = data.get("delivery") in ("hook", "typed")
        state.update(last_pushback=data, status="pushed_back", nudges=[], phase="agent" if live else "launching",
                     recent_refusals=[])
        if live:
            state["turn"] = data.get("turn", state["turn"])
        else:
            state["launch_turn"] = data.get("turn", state["turn"] + 1)
        if data.get("mode") == "session":
            state["pushbacks_in_shift"] += 1
    elif kind == "shift.ended":
        row = _shift_row(state, shift)
        row.update(ended=ts, end_reason=data.get("reason"))
        state["phase"] = "decided"
    elif kind == "run.paused":
        state.update(paused=True, pause_reason=data.get("reason"), pause_kind=data.get("kind"), status="paused")
        if data.get("kind") == "blocked":  # held once per blocked stop: a person's resume sends the agent on
            state["blocked_at"] = [state["shift"], state["turn"]]
    elif kind == "workspace.recorded":
        state["branch"] = data.get("branch")
    elif kind == "supervisor.crashed":
        state["crash"] = {"reason": data.get("reason"), "ts": ts}
    elif kind == "supervisor.started":
        state["crash"] = None
    elif kind == "run.resumed":
        state.update(paused=False, pause_reason=None, pause_kind=None,
                     status="working" if state["phase"] == "agent" else "pushed_back")
        if data.get("reset_breaker"):
            state["stale_stops"] = 0
    elif kind == "command.accepted" and data.get("verb") == "nudge":
        state["nudges"].append(data.get("args", {}).get("message", ""))
    elif kind == "slurm.job_changed":
        _fold_slurm(state, data, ts)
        target = state.get("target") or {}
        if data.get("replaces") and target.get("job_id") == data["replaces"]:  # a failed job was resubmitted
            state["target"] = {**target, "job_id": data["job_id"], "attempt": int(data.get("retry", 1)) + 1}
    elif kind == "run.finished":
        state.update(outcome=data.get("outcome"), finish_reason=data.get("reason"), phase="finished",
                     status=data.get("outcome") if data.get("outcome") in FINAL_STATUSES else "failed",
                     finished_ts=ts)
        for row in state["shifts"]:  # a shift the run's end closed (no shift.ended of its own) ends with the run
            if row.get("started") and not row.get("ended"):
                row.update(ended=ts, end_reason=f"run {data.get('outcome') or 'ended'}")


def _fold_heldout(state: dict[str, Any], released: dict[str, Any] | None) -> None:
    """The held-out exam's account (verify/oracle/exam.py): evaluations and bits released, the Ladder's best band
    per comparison, claims answered with nothing. Folded from the log, so a kill -9 loses none of it."""
    if not released:
        return
    held = state.setdefault("heldout", {"evaluations": 0, "bits": 0.0, "best": {}, "withheld": 0})
    held["evaluations"] = int(held.get("evaluations") or 0) + int(released.get("evaluations") or 0)
    held["bits"] = float(held.get("bits") or 0.0) + float(released.get("bits") or 0.0)
    held["best"] = {**(held.get("best") or {}), **(released.get("best") or {})}
    held["withheld"] = int(held.get("withheld") or 0) + bool(released.get("withheld"))


def _fold_slurm(state: dict[str, Any], data: dict[str, Any], ts: str | None) -> None:
    """The current job (its fields kept across changes), how the last job ended, and what the jobs spent."""
    prev = state.get("slurm") or {}
    if data.get("job_id") != prev.get("job_id"):
        state["slurm_jobs"] = int(state.get("slurm_jobs") or 0) + 1
        prev = {}
    merged = {**prev, **{k: v for k, v in data.items() if v is not None}}
    if data.get("state") == "GONE" and prev.get("state"):
        merged.update(state=prev["state"], gone=True)  # left the queue: its last known state still says most
    state["slurm"] = merged
    if merged.get("start") and not state.get("slurm_first_start"):
        state["slurm_first_start"] = merged["start"]
    if merged.get("state") in SLURM_ENDS or data.get("replaces"):
        end = {k: merged.get(k) for k in ("job_id", "state", "reason", "exit_code", "node")}
        if data.get("replaces"):  # a failed job resubmitted: what ended is the replaced job
            end = {**(state.get("slurm_end") or {}), "job_id": data["replaces"], "action": data.get("message")}
        state["slurm_end"] = {**end, "ts": ts}
    if "core_hours" in data:
        state["core_hours"] = float(state.get("core_hours") or 0.0) + float(data["core_hours"] or 0.0)
        state["gpu_hours"] = float(state.get("gpu_hours") or 0.0) + float(data.get("gpu_hours") or 0.0)
        if data.get("accounting") and data["accounting"] not in state["accounting"]:
            state["accounting"] = [*state["accounting"], data["accounting"]]


def write_snapshot(path: Path, state: dict[str, Any], offset: int) -> None:
    """Write ``{"seq", "offset", "state"}`` by rename, so a reader never sees half a snapshot.

    The snapshot only saves time: when it cannot be written (a full disk) the old one stays, still consistent
    with the log up to its own offset, and readers fold the rest from the log."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"seq": state["seq"], "offset": offset, "state": state}, fh, separators=(",", ":"))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def load_state(run_root: Path) -> tuple[dict[str, Any], int, list[str]]:
    """Current state of a run: the snapshot, then the events after it. Returns (state, offset, warnings)."""
    run_root = Path(run_root)
    warnings: list[str] = []
    state, offset = empty_state(), 0
    try:
        snap = json.loads((run_root / "snapshot.json").read_text(encoding="utf-8"))
        state, offset = {**empty_state(), **snap["state"]}, int(snap["offset"])
    except FileNotFoundError:
        pass
    except (ValueError, KeyError, TypeError):
        warnings.append("snapshot.json unreadable; replaying the whole log")
    events_path = run_root / "events.jsonl"
    if not events_path.exists():
        return state, 0, warnings + ["events.jsonl is missing"]
    disagreement = _disagrees(events_path, offset, state["seq"]) if offset else None
    if disagreement:
        warnings.append(f"snapshot.json disagrees with events.jsonl ({disagreement}); rebuilt from the log")
        state, offset = empty_state(), 0
    result = read_events(events_path, offset)
    for event in result.events:
        seq = event.get("seq")
        if not _well_formed(event) or seq <= state["seq"]:
            # One writer numbers events 1, 2, 3...: a line that is not a whole event, or goes back, is garbage.
            warnings.append(f"events.jsonl: line with seq {seq!r} after seq {state['seq']} skipped (not an event)")
            continue
        if seq != state["seq"] + 1:
            warnings.append(f"events.jsonl: seq jumps from {state['seq']} to {seq} (an unreadable line between)")
        apply(state, event)
    return state, result.offset, warnings + result.warnings


def _well_formed(event: dict[str, Any]) -> bool:
    return (isinstance(event.get("seq"), int) and isinstance(event.get("type"), str)
            and isinstance(event.get("ts"), str) and isinstance(event.get("data"), dict) and event.get("v") == 1)


def _disagrees(events_path: Path, offset: int, seq: int) -> str | None:
    """Why a snapshot claiming to have folded up to event ``seq`` ending at byte ``offset`` does not match the
    log (None when it does): the line just before ``offset`` must be whole and be that very event."""
    try:
        with open(events_path, "rb") as fh:
            if offset > os.fstat(fh.fileno()).st_size:
                return f"it is ahead of the log: offset {offset} is past its end"
            back = min(offset, 1 << 20)
            fh.seek(offset - back)
            blob = fh.read(back)
    except OSError as exc:
        return f"log unreadable: {exc.strerror}"
    if not blob.endswith(b"\n"):
        return f"byte {offset} is not the end of an event"
    last = blob[:-1].rsplit(b"\n", 1)[-1]
    try:
        event_seq = int(json.loads(last).get("seq"))
    except (ValueError, TypeError, AttributeError):
        return f"no whole event ends at byte {offset}"
    if event_seq != seq:
        return f"it folded seq {seq} but the event ending at byte {offset} is seq {event_seq}"
    return None