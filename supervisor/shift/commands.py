"""Commands from the inbox (the CLI and the TUI write them; the supervisor acts and answers with an event):
pause, resume, stop, nudge, and approve / deny for an agent that waits for a human. Each is accepted or rejected with its reason, and acknowledged on disk."""
from __future__ import annotations

from typing import Any

from nightshift.supervisor.run import inbox


def handle_command(sup, command: dict[str, Any]) -> None:
    """``sup`` is the shift loop (shift.loop.Supervisor)."""
    try:
        _handle(sup, command)
    finally:
        inbox.done_with(command)


def _handle(sup, command: dict[str, Any]) -> None:
    verb, args, cid = command.get("verb"), command.get("args") or {}, command.get("id")
    shift = sup.state["shift"] or None
    if sup.state["phase"] == "finished":
        sup.emit("command.rejected", shift, id=cid, verb=verb, reason="the run has finished")
    elif verb == "pause":
        if sup.state["paused"]:
            sup.emit("command.rejected", shift, id=cid, verb=verb, reason="already paused")
            return
        sup.emit("command.accepted", shift, id=cid, verb=verb)
        sup.pause("user", "paused by the user; the agent finishes its current turn", notify_kind=None)
    elif verb == "resume":
        if not sup.state["paused"]:
            sup.emit("command.rejected", shift, id=cid, verb=verb, reason="the run is not paused")
            return
        sup.emit("command.accepted", shift, id=cid, verb=verb)
        sup.emit("run.resumed", shift, by="user", reset_breaker=True)
    elif verb == "stop":
        sup.emit("command.accepted", shift, id=cid, verb=verb)
        sup.stop_requested = True
    elif verb == "nudge" and str(args.get("message", "")).strip():
        message = long_message(sup, str(args["message"]), cid)
        sup.emit("command.accepted", shift, id=cid, verb=verb, args={"message": message})
        if sup.session.deliver_nudge_now(message):
            sup.emit("nudge.delivered", sup.state["shift"], how="typed")
    elif verb in ("approve", "deny"):
        if not sup.state.get("waiting_for"):
            sup.emit("command.rejected", shift, id=cid, verb=verb, reason="the agent is not waiting for anything")
            return
        if not sup.session.answer_wait(verb == "approve", by="user"):
            sup.emit("command.rejected", shift, id=cid, verb=verb,
                     reason="the agent's terminal cannot be reached; `nightshift attach` and answer there")
            return
        sup.emit("command.accepted", shift, id=cid, verb=verb)
    elif verb == "release":
        from nightshift.supervisor.shift.ratchet import release
        release(sup, command)
    else:
        sup.emit("command.rejected", shift, id=cid, verb=verb, reason=f"unknown or empty command {verb!r}")


NUDGE_INLINE_CHARS = 4000


def long_message(sup, message: str, cid: str | None) -> str:
    """A nudge longer than NUDGE_INLINE_CHARS is kept whole in a file the agent is pointed to: the event log and
    the prompt carry its beginning and the file's path, nothing is silently cut."""
    if len(message) <= NUDGE_INLINE_CHARS:
        return message
    from nightshift.supervisor.shift.turns import write_private
    path = write_private(sup.run_paths.root / "nudges" / f"{cid or 'nudge'}.md", message)
    return (f"{message[:NUDGE_INLINE_CHARS - 400]}\n[... the whole message ({len(message)} characters) is in "
            f"{path}: read it]")
