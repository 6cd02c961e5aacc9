"""Commands to a running supervisor through its inbox, acknowledged by an event.

The CLI and the TUI write ``inbox/<uuid>.json`` by rename (0600); the supervisor takes the files it owns,
answers each with ``command.accepted`` or ``command.rejected`` (data.id = the command id) and deletes it.
Verbs: pause, resume, stop, nudge (args.message), approve, deny, release (args.test, args.why, args.by).
"""
from __future__ import annotations

import json
import os
import time
import uuid
from typing import Any

from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.listing import matching

VERBS = ("pause", "resume", "stop", "nudge", "approve", "deny", "release")


def send_command(run: RunPaths, verb: str, **args: Any) -> tuple[str, int]:
    """Queue a command; returns (command id, events.jsonl offset to look for the ack from)."""
    if verb not in VERBS:
        raise ValueError(f"unknown command {verb!r}; use one of {', '.join(VERBS)}")
    cmd_id = uuid.uuid4().hex
    try:
        offset = run.events.stat().st_size
    except FileNotFoundError:
        offset = 0
    body = {"id": cmd_id, "verb": verb, "args": args, "ts": time.time(), "uid": os.getuid()}
    tmp = run.inbox / f".{cmd_id}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(body, fh)
    os.replace(tmp, run.inbox / f"{cmd_id}.json")
    return cmd_id, offset


def wait_ack(run: RunPaths, cmd_id: str, offset: int, timeout: float = 5.0) -> dict[str, Any] | None:
    """The accepted/rejected event for ``cmd_id``, or None if none came within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = read_events(run.events, offset)
        offset = result.offset
        for event in result.events:
            if event["type"] in ("command.accepted", "command.rejected") and event["data"].get("id") == cmd_id:
                return event
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def take_commands(run: RunPaths) -> list[dict[str, Any]]:
    """Supervisor side: the queued commands this user wrote, oldest first. Foreign files are ignored."""
    out = []
    uid = os.getuid()
    for path in matching(run.inbox, ".json"):  # listed again only when the inbox changed
        try:
            st = path.stat()
            if st.st_uid != uid:
                continue  # never act on a file another user managed to put here
            body = json.loads(path.read_text())
            body["_path"] = str(path)
            body["_mtime"] = st.st_mtime
            out.append(body)
        except (ValueError, OSError):
            try:
                path.unlink()
            except OSError:
                pass
    return sorted(out, key=lambda b: (b.get("ts", 0), b["_mtime"]))


def done_with(command: dict[str, Any]) -> None:
    try:
        os.unlink(command["_path"])
    except OSError:
        pass
