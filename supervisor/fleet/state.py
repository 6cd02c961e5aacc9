"""The fleet's own fold: what its events say about each lane and the fleet's decision. The fleet's run log holds
the ordinary run events (run.created, run.paused, run.finished...) and these:

fleet.planned   lanes select approaches base branch         lane.planned  lane branch worktree run_id approach start
lane.created    lane                                        lane.started  lane where (its supervisor, each start)
lane.verified   lane sha passed metric shown heldout metrics cost_usd summary cheats
lane.ended      lane outcome reason metric shown cheats cost_usd
fleet.array_submitting  name lanes (before sbatch)          fleet.array_submitted  job_id name lanes (or refused)
fleet.decided   winner reason                               fleet.merged  lane branch sha
attest.written / attest.failed   the winner's verdict attested (or why not), once

``metric`` is the worst error over tolerance of every comparison, held-out ones too: the fleet ranks by it and it
stays in the fleet's log. ``shown`` leaves the held-out comparisons out (they are told as pass or fail only): it
is the number written where lanes, the run's branch or a person read it (the failed-approaches page, CHANGELOG.md,
status, the report).
"""
from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.paths import RunPaths


def empty_fleet() -> dict[str, Any]:
    return {"planned": None, "lanes": {}, "winner": None, "decided": None, "merged": None, "finished": None,
            "attested": None}


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
            lane["verified"].append({k: data.get(k) for k in ("sha", "passed", "metric", "shown", "heldout",
                                                               "metrics", "cost_usd", "summary", "cheats")})
        else:
            lane.update(status="ended", outcome=data.get("outcome"), reason=data.get("reason"),
                        ended_seq=event.get("seq"),
                        metric=data.get("metric"), shown=data.get("shown"), cost_usd=data.get("cost_usd"),
                        cheats=data.get("cheats") or [])
    elif kind == "fleet.array_submitting":  # the lanes' first turns as one job array (supervisor/fleet/array.py)
        fleet["array_intent"] = data
    elif kind == "fleet.array_submitted":
        fleet["array"] = data
    elif kind == "fleet.decided":
        fleet["winner"], fleet["decided"] = data.get("winner"), data
    elif kind == "fleet.merged":
        fleet["merged"] = data
    elif kind in ("attest.written", "attest.failed"):
        fleet["attested"] = data
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


def heldout_names(config: Any) -> set[str]:
    return {c.name for c in config.oracle.compare if c.heldout} if config.oracle is not None else set()


def held_of(run_root: Path) -> set[str] | None:
    """The held-out comparisons of a run's frozen config (None when it cannot be read: then no number is shown)."""
    try:
        from nightshift.supervisor.config.schema import parse_config
        return heldout_names(parse_config((Path(run_root) / "config.toml").read_text()))
    except Exception:  # noqa: BLE001 - an unreadable config: which comparisons are held out is unknown
        return None


def shown(values: dict[str, Any] | None, held: set[str] | None) -> float | None:
    """The worst error over tolerance of the visible comparisons only (None when which are held out is unknown)."""
    if held is None:
        return None
    numbers = [float(v) for k, v in (values or {}).items()
               if k not in held and isinstance(v, (int, float)) and math.isfinite(v)]
    return max(numbers) if numbers else None


def best_shown(state: dict[str, Any] | None, held: set[str] | None) -> float | None:
    """The lowest ``shown`` over a lane's own verdicts so far."""
    found = [x for x in (shown(m.get("values"), held) for m in (state or {}).get("metrics") or []) if x is not None]
    return min(found) if found else None


def lane_run(lane: dict[str, Any]) -> RunPaths:
    return RunPaths.for_run(Path(lane["worktree"]), lane["run_id"])


def lane_rows(run_root: Path) -> list[dict[str, Any]] | None:
    """Each lane as `status --json` and `ls` show it: its run's state beside the fleet's record (None: no fleet)."""
    from nightshift.supervisor.run.state import load_state

    fleet = load_fleet(run_root)
    if fleet is None:
        return None
    held = held_of(run_root)
    rows = []
    for key, lane in sorted(fleet["lanes"].items(), key=lambda kv: int(kv[0])):
        run = lane_run(lane)
        state = load_state(run.root)[0] if run.events.exists() else {}
        best = best_verified(lane)
        rows.append({"lane": int(key), "branch": lane["branch"], "run_id": lane["run_id"], "approach": lane["approach"],
                     "status": lane["outcome"] or state.get("status") or lane["status"],
                     "shift": state.get("shift", 0), "cost_usd": state.get("cost_usd", 0.0),
                     "metric": lane.get("shown") if lane["status"] == "ended" else
                     (best["shown"] if best else best_shown(state, held)),
                     "heldout": best.get("heldout") if best else None,
                     "verified": bool(best and best["passed"]), "winner": fleet["winner"] == int(key),
                     "cheats": lane.get("cheats") or [], "fork": bool(lane.get("fork")),
                     "forked_from": lane.get("forked_from")})
    return rows


def best_verified(lane: dict[str, Any]) -> dict[str, Any] | None:
    """The lane's latest verification by the fleet, if any."""
    return lane["verified"][-1] if lane["verified"] else None
