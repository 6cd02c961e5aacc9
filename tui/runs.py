"""The dashboard's view of the user's runs: one row per registry entry, computed from a RunFollower; a fleet's
lanes are rows nested under the fleet's row (tui/fleet_rows.py), not runs of their own at the top.

A registry line whose run directory is gone, a run directory without a readable log, a supervisor that
stopped beating: each becomes a row state with a line saying what is wrong, never an exception.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from nightshift.supervisor.run.liveness import STALE_AFTER, supervisor_status
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.allocation import Allocation, allocation
from nightshift.tui import fmt
from nightshift.tui.fleet_rows import FleetLinks, fleet_cost, fleet_spent, lane_row
from nightshift.tui.follow import RunFollower
from nightshift.tui.slurm_view import where_cell

Clock = Callable[[], float]


@dataclass
class Supervisor:
    alive: bool
    host: str | None
    heartbeat_age: float | None
    local: bool


@dataclass
class RunRow:
    run_id: str
    run: RunPaths
    name: str
    workspace: str
    where: str
    state: str  # a status label, or a problem state (missing, half-written, ...)
    problem: bool
    detail: str
    shift: int
    verdict: str
    best: str
    spark: str
    cost: str
    last_event: str
    supervisor: str
    warnings: list[str] = field(default_factory=list)
    lane: int | None = None  # a fleet's lane: drawn under its fleet's row


def read_supervisor(run: RunPaths, now: float) -> Supervisor:
    """Liveness with ages from our clock: the pid on this host, the heartbeat from any other."""
    info = supervisor_status(run.supervisor)
    try:
        hb_age = now - run.supervisor.stat().st_mtime
    except OSError:
        hb_age = None
    alive = bool(info.get("alive"))
    if not info.get("local") and not info.get("stopped") and hb_age is not None:
        alive = hb_age < STALE_AFTER
    return Supervisor(alive, info.get("host"), hb_age, bool(info.get("local", True)))


def where_it_runs(state: dict[str, Any], now: float) -> str:
    """The backend, or for a Slurm run its job as the supervisor last recorded it (never a query of our own)."""
    return where_cell(state, now) or state.get("backend") or "-"


def run_limits(run: RunPaths) -> tuple[float, float]:
    """(max_core_hours, max_gpu_hours) of the run's frozen config; (0, 0) when it cannot be read."""
    from nightshift.supervisor.config.schema import parse_config
    from nightshift.supervisor.errors import UserError

    try:
        limits = parse_config(run.config.read_text(), str(run.config)).limits
        return float(limits.max_core_hours), float(limits.max_gpu_hours)
    except (OSError, UserError):  # an unreadable or half-written config: the spending shows without its cap
        return 0.0, 0.0


def cost_label(state: dict[str, Any], now: float, run: RunPaths) -> str:
    """The model cost, and beside it the allocation a Slurm run has spent."""
    alloc = allocation(state, now, run.root)
    return fmt.cost(state.get("cost_usd")) + (f" {alloc.core_hours:.2f}ch" if alloc.used else "")


def status_label(state: dict[str, Any], sup: Supervisor) -> str:
    status = state.get("status") or "created"
    if status == "created" and not sup.host:
        return "not started"
    if state.get("waiting_for") and status not in ("done", "failed", "stopped"):
        return "WAITING (human)"
    if state.get("paused") and status not in ("done", "failed", "stopped"):
        return "paused"  # a pause holds after the turn ends, while the fold's status moves on to verifying
    return fmt.STATUS_LABELS.get(status, status)


ENDED = ("done", "failed", "stopped")


def held(state: dict[str, Any]) -> bool:
    """Paused (on its budget, its breaker, a crash loop, for a person) and not ended: its supervisor may be gone by
    design, and `nightshift resume` is the next step, not a repair."""
    return bool(state.get("paused")) and state.get("status") not in ENDED


def orphaned(state: dict[str, Any], sup: Supervisor) -> bool:
    """The log says the run goes on but nobody supervises it: `nightshift resume` is the fix."""
    return (state.get("status") not in ENDED and bool(state.get("run_id")) and not sup.alive
            and not held(state))


def verdict_label(state: dict[str, Any]) -> str:
    verdict = state.get("last_verdict")
    if not verdict:
        return "-"
    word = "PASS" if verdict.get("passed") else "FAIL"
    return word + sandbox_tag(verdict)


def sandbox_tag(verdict: dict[str, Any]) -> str:
    """' sandbox:landlock' where the verdict's boundary was weaker than bubblewrap's full sandbox (sandbox/tier.py),
    so a pass there never reads as a full one; nothing for full (or a run that did not record it)."""
    tier = verdict.get("sandbox")
    return f" sandbox:{tier}" if isinstance(tier, str) and tier not in ("full", "") else ""


def supervisor_label(sup: Supervisor, state: dict[str, Any]) -> str:
    """Who supervises the run: 'host 3s'; 'paused · resume' for a held run without one (by design, not a death);
    'ended' for a run that ended; 'dead' only for a supervisor that died while the run went on."""
    if not sup.host:
        return "paused · resume" if held(state) else "-"
    beat = fmt.age(sup.heartbeat_age)
    if sup.alive:
        return f"{sup.host} {beat}"
    if state.get("status") in ENDED:
        return f"{sup.host} {beat} ended"
    return f"{sup.host} {beat} paused · resume" if held(state) else f"{sup.host} {beat} dead"


def make_row(run_id: str, follower: RunFollower, now: float) -> RunRow:
    run, state = follower.run, follower.state
    workspace = fmt.home_path(state.get("workspace") or run.workspace)
    name = Path(str(state.get("workspace") or run.workspace)).name or run_id
    if follower.problem:
        return RunRow(run_id, run, name, workspace, "-", follower.problem, True, follower.detail, 0, "-", "-",
                      "", "-", "-", "-", [])
    sup = read_supervisor(run, now)
    values = [m.get("metric") for m in state.get("metrics") or []]
    detail = state.get("goal") or ""
    if orphaned(state, sup):
        where = f"on {sup.host}, last beat {fmt.age(sup.heartbeat_age)} ago" if sup.host else "never started"
        detail = f"no supervisor ({where}): `nightshift resume {run_id}` restarts it. {detail}"
    elif held(state) and not sup.alive:
        why = state.get("pause_reason") or "paused"
        detail = f"paused ({why}): `nightshift resume {run_id}` when ready. {detail}"
    return RunRow(
        run_id=run_id, run=run, name=name, workspace=workspace, where=where_it_runs(state, now),
        state=status_label(state, sup), problem=False, detail=detail,
        shift=int(state.get("shift") or 0), verdict=verdict_label(state), best=fmt.metric(state.get("best_metric")),
        spark=fmt.sparkline(values), cost=cost_label(state, now, run),
        last_event=fmt.ts_age(state.get("last_event_ts"), now),
        supervisor=supervisor_label(sup, state),
        warnings=list(follower.warnings))


class RunBook:
    """Every run of the user, each with its follower; refreshed from the registry and the logs."""

    def __init__(self, clock: Clock = time.time):
        self.clock = clock
        self.followers: dict[str, RunFollower] = {}
        self.order: list[str] = []
        self.fleets: dict[str, FleetLinks] = {}  # fleet run id -> its lanes, as the live worker last read them

    def add(self, run_id: str, follower: RunFollower) -> RunFollower:
        if run_id not in self.followers:
            self.followers[run_id] = follower
            self.order.append(run_id)
        return self.followers[run_id]

    def remove(self, run_id: str) -> None:
        self.followers.pop(run_id, None)
        self.fleets.pop(run_id, None)  # its lanes, if still registered, come back to the top level
        if run_id in self.order:
            self.order.remove(run_id)

    def link(self, links: FleetLinks) -> None:
        self.fleets[links.fleet_id] = links

    def rows(self) -> list[RunRow]:
        now = self.clock()
        nested = {link.run.run_id for fleet_id, links in self.fleets.items() if fleet_id in self.followers
                  for link in links.lanes}
        out: list[RunRow] = []
        # Newest first: the run a user started last is the one they look for. A lane sits under its fleet.
        for run_id in reversed(self.order):
            if run_id in nested:
                continue
            row = make_row(run_id, self.followers[run_id], now)
            links = self.fleets.get(run_id)
            if links is None:
                out.append(row)
                continue
            lanes = [(link, self.followers[link.run.run_id]) for link in links.lanes
                     if link.run.run_id in self.followers]
            if not row.problem:
                row.cost = fleet_cost(*self.fleet_spent(run_id, now))
            out.append(row)
            out += [lane_row(make_row(f.run.run_id, f, now), link, f.state, links.held) for link, f in lanes]
        return out

    def fleet_spent(self, run_id: str, now: float) -> tuple[float, Allocation] | None:
        """A fleet's (model cost, allocation) as its one budget counts them, its lanes together (None: no fleet)."""
        links = self.fleets.get(run_id)
        if links is None or run_id not in self.followers:
            return None
        lanes = [self.followers[link.run.run_id] for link in links.lanes if link.run.run_id in self.followers]
        return fleet_spent(self.followers[run_id].state, [(f.state, f.run) for f in lanes if not f.problem], now)
