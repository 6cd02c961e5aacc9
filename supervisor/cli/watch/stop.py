"""Stopping a run: the one code path behind `nightshift stop RUN` and the TUI's stop key (handed to the TUI as its
``stop`` seam). For a run submitted as a chain of batch jobs (`nightshift submit`) the chain is marked stopping and
its queued jobs are cancelled first (hpc.chain.stop_chain), so no continuation starts; when no job is running to
carry the stop, the run's end is recorded here. Otherwise, and after that, the stop goes to the run's inbox and
the supervisor's answer is awaited.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import RunPaths


@dataclass
class Stopped:
    """What a stop did: ``accepted`` True (the supervisor took it, or the end was recorded here), False (refused),
    None (queued in the inbox, no answer yet); ``lines`` say it in words, ``cancelled`` the Slurm jobs cancelled."""

    accepted: bool | None
    lines: list[str] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    reason: str = ""


def stop_run(run: RunPaths, wait: float = 10.0) -> Stopped:
    from nightshift.hpc.chain import has_chain
    from nightshift.supervisor.run.state import load_state

    if load_state(run.root)[0]["phase"] == "finished":
        raise UserError(f"run {run.run_id} has already finished")
    out = Stopped(None)
    if has_chain(run):
        from nightshift.hpc.chain import stop_chain
        from nightshift.hpc.client import make_client
        from nightshift.supervisor.shift.launcher import finish_unsupervised, frozen_config

        out.cancelled, running = stop_chain(run, make_client(frozen_config(run).slurm.client))
        listed = ", ".join(map(str, out.cancelled)) or "none"
        if running is None:  # nothing runs the supervisor: record the end here, nothing is left to pick it up
            finish_unsupervised(run, "stopped", f"stopped by the user while queued (cancelled jobs: {listed})")
            out.accepted = True
            out.lines.append(f"stop: run {run.run_id} stopped; its queued jobs were cancelled ({listed})")
            return out
        out.lines.append(f"stop: queued continuation jobs cancelled ({listed}); job {running} stops the run")
    return _through_inbox(run, out, wait)


def _through_inbox(run: RunPaths, out: Stopped, wait: float) -> Stopped:
    from nightshift.supervisor.run.inbox import send_command, wait_ack
    from nightshift.supervisor.run.liveness import supervisor_status

    try:
        cmd_id, offset = send_command(run, "stop")
    except OSError as exc:
        raise UserError(f"could not write the stop command to {run.inbox} ({exc.strerror}); is the run directory "
                        "complete and yours?") from None
    alive = supervisor_status(run.supervisor)["alive"]
    event = wait_ack(run, cmd_id, offset, timeout=wait) if alive else None  # nobody there to answer: no waiting
    if event is None:
        alive = alive and supervisor_status(run.supervisor)["alive"]
        hint = "the supervisor is busy; it will act on it at its next step" if alive else \
            _no_supervisor(run)
        out.lines.append(f"stop queued for run {run.run_id} but not yet acknowledged ({hint})")
    elif event["type"] == "command.rejected":
        out.accepted, out.reason = False, str((event.get("data") or {}).get("reason") or "")
        out.lines.append(f"stop rejected by run {run.run_id}: {out.reason}")
    else:
        out.accepted = True
        out.lines.append(f"stop: accepted by run {run.run_id}")
    return out


def _no_supervisor(run: RunPaths) -> str:
    """Why no supervisor answered, and the one command that acts on the queued stop."""
    from nightshift.supervisor.run.state import load_state

    state = load_state(run.root)[0]
    if state.get("paused"):  # held (its budget, its breaker): README, "stop RUN"
        why = {"budget": "its budget is spent", "breaker": "its breaker tripped"}.get(state.get("pause_kind"), "paused")
        return (f"the run is held ({why}) and has no supervisor; `nightshift resume {run.run_id}` starts one, "
                "which ends the run before anything else")
    return f"its supervisor is not running; `nightshift resume {run.run_id}` starts it"
