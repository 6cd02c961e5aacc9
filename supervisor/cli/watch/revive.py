"""`nightshift resume --dead`: every run of this user whose supervisor died on this host (killed, out of memory, the
login node rebooted) and that no person paused or stopped gets a new supervisor, which adopts the live agent or
goes on from the log. The watchdog (cron_watchdog.py) runs it every few minutes.

A run whose supervisor keeps dying would be revived for ever: the third death within an hour holds the run for a
person instead (``run.paused`` kind "crashloop", with the last crash's reason). A held or paused run is left alone:
its supervisor would only wait, and unpausing is a person's decision (`nightshift resume RUN`).
"""
from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.events import EventLog, read_events
from nightshift.supervisor.run.liveness import supervisor_status
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.registry import entries
from nightshift.supervisor.run.state import load_state, write_snapshot

DEATHS_TO_HOLD = 3     # deaths within WINDOW after which the run is held instead of revived
WINDOW = 3600.0


def resume_dead(say=print) -> int:
    """Revive each dead run of this host; 0 unless a revival failed (each run's outcome is one printed line)."""
    failed = 0
    for run, state in dead_runs():
        try:
            line = revive(run, state)
        except UserError as exc:
            failed += 1
            line = f"run {run.run_id}: could not be revived: {exc}"
        say(line)
    return 1 if failed else 0


def dead_runs() -> list[tuple[RunPaths, dict[str, Any]]]:
    """Runs to revive: registered, still there, not finished, not paused, supervised last on this host, now dead
    without ending on purpose (a supervisor that lets go, e.g. at a Slurm chain's hand-off, records "stopped")."""
    found = []
    here = os.uname().nodename
    for entry in entries():
        if not entry.get("exists"):
            continue
        run = RunPaths(Path(entry["run_dir"]))
        status = supervisor_status(run.supervisor)
        if status["alive"] or status.get("host") != here:  # never started, or supervised on another node
            continue
        if (run.root / "slurm" / "chain.jsonl").exists():  # a `submit` chain restarts itself in its next job
            continue
        state = load_state(run.root)[0]
        if state["phase"] == "finished" or state["paused"]:
            continue
        if status.get("stopped") and not state.get("crash"):  # it let go on purpose; a crash is revived
            continue
        found.append((run, state))
    return found


def revive(run: RunPaths, state: dict[str, Any]) -> str:
    """Start a new supervisor for ``run``, or hold it when its supervisor died too often; returns what was done."""
    from nightshift.supervisor.shift.launcher import start_detached

    recent = recent_revivals(run)
    why = crash_reason(run, state) or "no reason recorded (killed, out of memory, or the host went down)"
    if len(recent) + 1 >= DEATHS_TO_HOLD:
        reason = (f"the supervisor died {len(recent) + 1} times within {WINDOW / 3600:g}h (last: {why}); held "
                  f"instead of restarted again: see {run.supervisor_log}, fix the cause, then "
                  f"`nightshift resume {run.run_id}`")
        _append(run, state, "run.paused", reason=reason, kind="crashloop")
        error = _notify(run, reason)
        if error:  # recorded as the supervisor records it, and said: nobody else will hear of the hold
            _append(run, load_state(run.root)[0], "notify.failed", error=error)
            return f"run {run.run_id}: held ({reason}); the notification failed: {error}"
        return f"run {run.run_id}: held ({reason})"
    _append(run, state, "supervisor.revived", by="watchdog", reason=why, deaths=len(recent) + 1)
    where = start_detached(run)
    return f"run {run.run_id}: supervisor restarted in {where} (it had died: {why})"


def crash_reason(run: RunPaths, state: dict[str, Any]) -> str | None:
    """Why the supervisor ended, from its event or (a full disk refused the event) its last word."""
    from nightshift.supervisor.shift.crash import read_last_word

    if state.get("crash"):
        return state["crash"].get("reason")
    word = read_last_word(run.last_word)
    return word.get("reason") if word else None


def recent_revivals(run: RunPaths, now: float | None = None) -> list[float]:
    """When the watchdog revived this run within WINDOW (each revival followed a death)."""
    now = time.time() if now is None else now
    out = []
    for event in read_events(run.events).events:
        if event.get("type") != "supervisor.revived":
            continue
        try:
            when = datetime.fromisoformat(str(event["ts"]).replace("Z", "+00:00")).timestamp()
        except (KeyError, ValueError):
            continue
        if now - when < WINDOW:
            out.append(when)
    return out


def _append(run: RunPaths, state: dict[str, Any], type_: str, **data: Any) -> None:
    # No supervisor holds the log (it is dead): the reviver writes, as `nightshift resume` does for a paused run.
    log = EventLog(run.events, last_seq=state["seq"])
    try:
        log.append(type_, state["shift"] or None, **data)
    finally:
        log.close()
    fresh, offset, _ = load_state(run.root)
    write_snapshot(run.snapshot, fresh, offset)


def _notify(run: RunPaths, reason: str) -> str | None:
    """Tell the person of the hold as [notify] says; a one-line error when the command failed."""
    from nightshift.supervisor.run.notify import tell
    from nightshift.supervisor.shift.launcher import frozen_config

    try:
        cfg = frozen_config(run).notify
    except UserError as exc:
        return f"[notify] not read ({exc})"
    return tell(cfg, "paused", run, reason)
