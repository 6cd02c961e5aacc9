"""A fleet seen as one run on the dashboard: its lanes' runs drawn as rows nested under the fleet's row, the
fleet's row carrying what the lanes spent together (model cost, core-hours).

Which runs are a fleet's lanes comes from the fleet's own log, read as `nightshift status --json` and `nightshift
ls` read it (supervisor/fleet/state.py: ``load_fleet``, ``lane_run``); never guessed from folder names. That read
happens in the live worker (``discover``), only when the fleet's log changed; the rows are then made on the UI thread
from the lanes' own followers, so a lane row says exactly what that lane's run says.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from nightshift.supervisor.fleet.state import best_shown, held_of, is_fleet_dir, lane_run, load_fleet
from nightshift.supervisor.run.allocation import Allocation, allocation, describe
from nightshift.supervisor.run.paths import RunPaths
from nightshift.tui import fmt


@dataclass(frozen=True)
class LaneLink:
    lane: int
    run: RunPaths
    outcome: str | None  # the fleet's word on an ended lane (verified, cheated, retired, ...); None while it runs
    shown: float | None  # the fleet's figure for an ended lane (visible comparisons only)
    winner: bool


@dataclass
class FleetLinks:
    fleet_id: str
    lanes: list[LaneLink]
    held: set[str] | None = field(default=None)  # the fleet's held-out comparisons: never in a number on screen


def discover(run: RunPaths, known: dict[str, bool]) -> FleetLinks | None:
    """The lanes of ``run`` if it is a fleet (in a worker thread: this reads files). ``known`` caches which runs are
    fleets: a run's frozen config never changes, so each is asked once."""
    if run.run_id not in known:
        is_fleet = is_fleet_dir(run.root)
        if not is_fleet and not run.config.exists():
            return None  # a run still being created: asked again once its config is written
        known[run.run_id] = is_fleet
    if not known[run.run_id]:
        return None
    fleet = load_fleet(run.root)
    if fleet is None:  # a fleet not yet planned: no lanes to show
        return None
    lanes = []
    for key, lane in sorted(fleet["lanes"].items(), key=lambda kv: int(kv[0])):
        lanes.append(LaneLink(int(key), lane_run(lane), lane.get("outcome"),
                              lane.get("shown") if lane.get("status") == "ended" else None,
                              fleet.get("winner") == int(key)))
    return FleetLinks(run.run_id, lanes, held_of(run.root))


def lane_row(row, link: LaneLink, state: dict[str, Any], held: set[str] | None):
    """The lane's own run row, drawn under its fleet: indented name, and where the fleet has ended the lane its
    word on it (a lane's run only says "stopped" where the fleet found it cheated)."""
    if row.problem:
        return replace(row, name=f"└ lane-{link.lane}", lane=link.lane)
    metric = link.shown if link.outcome else best_shown(state, held)
    label = ("WINNER" if link.winner else link.outcome) if link.outcome else row.state
    return replace(row, name=f"└ lane-{link.lane}", lane=link.lane, state=label, best=fmt.metric(metric))


def fleet_spent(own: dict[str, Any], lanes: list[tuple[dict[str, Any], RunPaths]], now: float
                ) -> tuple[float, Allocation]:
    """(model cost, allocation) of a fleet as its one budget counts them: every lane's, the fleet's own cost too (its
    checks); each lane's figure is the one its own row shows (``allocation`` of its fold, as in tui/runs.py)."""
    usd = float(own.get("cost_usd") or 0.0)
    core = gpu = 0.0
    cores_now = gpus_now = 0
    for state, run in lanes:
        spent = allocation(state, now, run.root)
        usd += float(state.get("cost_usd") or 0.0)
        core, gpu = core + spent.core_hours, gpu + spent.gpu_hours
        cores_now, gpus_now = cores_now + spent.cores_now, gpus_now + spent.gpus_now
    return usd, Allocation(core, gpu, cores_now, gpus_now, None, "")


def fleet_cost(usd: float, alloc: Allocation) -> str:
    """The fleet's cost cell on the dashboard, as a single run's (tui/runs.py ``cost_label``)."""
    return fmt.cost(usd) + (f" {alloc.core_hours:.2f}ch" if alloc.used else "")


def fleet_line(usd: float, alloc: Allocation, caps: tuple[float, float]) -> str:
    """The fleet's screen: what the lanes spent together against [limits], as `nightshift status` says it."""
    spent = f"{describe(alloc, *caps)} · " if alloc.used or any(caps) else ""
    return f"lanes together: {spent}model ${usd:.2f}"
