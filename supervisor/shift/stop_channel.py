"""The Stop-hook channel between a hook-driven agent and its supervisor, through files in ``stops/``.

The hook (``nightshift hook stop``) writes ``<id>.req.json`` by rename and waits for ``<id>.ans.json``; the
supervisor reads requests, verifies, and answers ``{"decision": "block", "reason": ...}`` or
``{"decision": "allow"}``. If the supervisor is gone or too slow, the hook lets the agent stop and leaves
``<id>.released.json`` for the supervisor to record. Only the supervisor writes events. Imports stay light:
the hook runs at every stop of the agent.
"""
from __future__ import annotations

import json
import time
import secrets
from pathlib import Path
from typing import Any

from nightshift.supervisor.run.listing import derived, matching
from nightshift.supervisor.run.private import write_private_json


def post_request(stops_dir: Path, payload: dict[str, Any]) -> str:
    """Hook side: record a stop; returns the request id."""
    req_id = f"{time.time():.6f}-{secrets.token_hex(4)}"
    write_private_json(stops_dir / f"{req_id}.req.json", {**payload, "id": req_id, "ts": time.time()})
    return req_id


def wait_answer(stops_dir: Path, req_id: str, timeout: float, alive=lambda: True,
                interval: float = 0.01) -> dict[str, Any] | None:
    """Hook side: the supervisor's answer, or None when it is gone (``alive()`` false) or the time is up."""
    answer = stops_dir / f"{req_id}.ans.json"
    deadline = time.monotonic() + timeout
    checked = time.monotonic()
    while time.monotonic() < deadline:
        try:
            return json.loads(answer.read_text())
        except (FileNotFoundError, ValueError):
            pass
        if time.monotonic() - checked > 1.0:  # liveness is dearer than a stat: once a second
            checked = time.monotonic()
            if not alive():
                return None
        time.sleep(interval)  # a stat every 10 ms: next to nothing, and the answer is seen at once
    return None


def release(stops_dir: Path, req_id: str, why: str) -> None:
    """Hook side: say that the agent was let go without an answer."""
    write_private_json(stops_dir / f"{req_id}.released.json", {"id": req_id, "why": why, "ts": time.time()})


def pending(stops_dir: Path) -> list[dict[str, Any]]:
    """Supervisor side: unanswered requests, oldest first."""
    out = []
    # Which requests are unanswered follows from which files are there: worked out again only when stops/ changed
    # (a long run's stops/ holds thousands of answered requests; no stat, no listing per wake-up on NFS).
    for name in derived(stops_dir, _unanswered):
        try:
            out.append(json.loads((stops_dir / name).read_text()))
        except (ValueError, FileNotFoundError):
            continue
    return out


def _unanswered(listed: tuple[str, ...]) -> list[str]:
    there = set(listed)
    return [name for name in listed if name.endswith(".req.json") and not name.startswith(".")
            and f"{name[: -len('.req.json')]}.ans.json" not in there
            and f"{name[: -len('.req.json')]}.released.json" not in there]


def released(stops_dir: Path) -> list[dict[str, Any]]:
    out = []
    for path in matching(stops_dir, ".released.json"):
        try:
            out.append(json.loads(path.read_text()))
        except ValueError:
            continue
        path.rename(path.with_name(path.name.replace(".released.json", ".released-seen.json")))
    return out


def answer(stops_dir: Path, req_id: str, decision: str, reason: str = "") -> None:
    """Supervisor side: ``decision`` is "block" (with the push-back as reason) or "allow"."""
    write_private_json(stops_dir / f"{req_id}.ans.json", {"decision": decision, "reason": reason})


def was_released(stops_dir: Path, req_id: str) -> bool:
    return any((stops_dir / f"{req_id}.{kind}.json").exists() for kind in ("released", "released-seen"))
