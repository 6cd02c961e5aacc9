"""Reading the lanes from their own run directories (the fleet never keeps them in memory): a lane's state, its
best commit as its own supervisor verified it, the cheats its verdicts named, and reaching its supervisor.
"""
from __future__ import annotations

from typing import Any

from nightshift.supervisor.run import inbox
from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.liveness import supervisor_status
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import load_state
from nightshift.supervisor.fleet.reverify import cheats_in


def lane_state(run: RunPaths) -> dict[str, Any] | None:
    return load_state(run.root)[0] if run.events.exists() else None


def supervised(run: RunPaths) -> bool:
    return supervisor_status(run.supervisor)["alive"]


def best_commit(run: RunPaths) -> tuple[float, str] | None:
    """(metric, commit) of the lane's best honest verdict that left a commit, as its supervisor recorded them."""
    best, metric = None, None
    for event in read_events(run.events).events:
        if event["type"] == "verify.finished":  # a verdict that found a cheat is no place to start from
            cheated = cheats_in(event["data"].get("checks") or [])
            metric = None if cheated else event["data"].get("metric")
        elif event["type"] in ("commit.created", "commit.skipped") and metric is not None:
            head = event["data"].get("head")
            if head and (best is None or metric < best[0]):
                best = (float(metric), head)
            metric = None
    return best


def lane_cheats(run: RunPaths) -> list[str]:
    found: list[str] = []
    for event in read_events(run.events).events:
        if event["type"] == "verify.finished":
            found += [c for c in cheats_in(event["data"].get("checks") or []) if c not in found]
    return found


def tell(run: RunPaths, verb: str) -> None:
    """A command to the lane's supervisor (acknowledged in the lane's own log); ends an unsupervised lane."""
    state = lane_state(run)
    if state is None or state["phase"] == "finished":
        return
    if supervised(run):
        inbox.send_command(run, verb)
    elif verb == "stop":
        from nightshift.supervisor.shift.launcher import finish_unsupervised
        finish_unsupervised(run, "stopped", "stopped by the fleet")
