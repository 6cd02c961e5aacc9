"""The fleet's own fold: what its events say about each lane and the fleet's decision. The fleet's run log holds
the ordinary run events (run.created, run.paused, run.finished...) and these:

fleet.planned   lanes select approaches base branch         lane.planned  lane branch worktree run_id approach start
lane.created    lane                                        lane.started  lane where (its supervisor, each start)
lane.verified   lane sha passed metric metrics cost_usd summary cheats     lane.ended lane outcome reason
fleet.decided   winner reason                               fleet.merged  lane branch sha
"""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from supervisor.run.events import read_events
from supervisor.run.paths import RunPaths


def empty_fleet() -> dict[str, Any]:
    return {"planned": None, "lanes": {}, "winner": None, "decided": None, "merged": None, "finished": None}


def apply_fleet(fleet: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    kind, data = event.get("type"), event.get("data") or {}
    lanes = fleet["lanes"]
    if kind == "fleet.planned":
        fleet["planned"] = data
    elif kind == "lane.planned":
        lanes[str(data["lane"])] = {**data, "status": "planned", "starts": 0, "verified": [], "outcome": None,
                                     "reason": None, "ts": event.get("ts")}
    elif kind in ("lane.created", "lane.started", "lane.verified", "lane.ended"):
        lane = lanes.get(str(data.get("lane")))
        if lane is None:
            return fleet
        if kind == "lane.created":
            lane["status"] = "created"
        elif kind == "lane.started":
            lane["status"], lane["starts"] = "running", lane["starts"] + 1
        elif kind == "lane.verified":
            lane["verified"].append({k: data.get(k) for k in ("sha", "passed", "metric", "metrics", "cost_usd",
                                                               "summary", "cheats")})
        else:
            lane.update(status="ended", outcome=data.get("outcome"), reason=data.get("reason"), ended_seq=event.get("seq"),
                        metric=data.get("metric"), cost_usd=data.get("cost_usd"), cheats=data.get("cheats") or [])
    elif kind == "fleet.decided":
        fleet["winner"], fleet["decided"] = data.get("winner"), data
    elif kind == "fleet.merged":
        fleet["merged"] = data
    elif kind == "run.finished":
        fleet["finished"] = data
    return fleet


def is_fleet_dir(run_root: Path) -> bool:
    """Is this run a fleet? From its frozen config alone (cheap: `nightshift ls` asks it of every run)."""
    try:
        with open(Path(run_root) / "config.toml", "rb") as fh:
            lanes = tomllib.load(fh).get("fleet", {}).get("lanes", 1)
    except (OSError, ValueError):
        return False
    return isinstance(lanes, int) and lanes > 1


def load_fleet(run_root: Path) -> dict[str, Any] | None:
    """The fleet of a run directory, or None when the run is not a fleet."""
    if not is_fleet_dir(run_root):
        return None
    fleet = empty_fleet()
    for event in read_events(Path(run_root) / "events.jsonl").events:
        apply_fleet(fleet, event)
    return fleet if fleet["planned"] else None


def lane_run(lane: dict[str, Any]) -> RunPaths:
    return RunPaths.for_run(Path(lane["worktree"]), lane["run_id"])


def lane_rows(run_root: Path) -> list[dict[str, Any]] | None:
    """Each lane as `status --json` and `ls` show it: its run's state beside the fleet's record (None: no fleet)."""
    from supervisor.run.state import load_state

    fleet = load_fleet(run_root)
    if fleet is None:
        return None
    rows = []
    for key, lane in sorted(fleet["lanes"].items(), key=lambda kv: int(kv[0])):
        run = lane_run(lane)
        state = load_state(run.root)[0] if run.events.exists() else {}
        best = best_verified(lane)
        rows.append({"lane": int(key), "branch": lane["branch"], "run_id": lane["run_id"], "approach": lane["approach"],
                     "status": lane["outcome"] or state.get("status") or lane["status"],
                     "shift": state.get("shift", 0), "cost_usd": state.get("cost_usd", 0.0),
                     "metric": best["metric"] if best else (state.get("best_metric")),
                     "verified": bool(best and best["passed"]), "winner": fleet["winner"] == int(key),
                     "cheats": lane.get("cheats") or [], "fork": bool(lane.get("fork")),
                     "forked_from": lane.get("forked_from")})
    return rows


def best_verified(lane: dict[str, Any]) -> dict[str, Any] | None:
    """The lane's latest verification by the fleet, if any."""
    return lane["verified"][-1] if lane["verified"] else None
