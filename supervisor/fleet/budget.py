"""One budget for the whole fleet: [limits] max_cost_usd, max_hours, max_core_hours and max_gpu_hours count every
lane together (each lane's own supervisor still caps its shifts with max_shifts). The first limit spent, or None.

A lane's core-hours and GPU-hours are the very figure an ordinary Slurm run counts against its own limits
(``allocation`` of its fold, shift/decide.py), so the fleet, `nightshift status` and the TUI add up the same numbers.
"""
from __future__ import annotations

import time
from typing import Any, Iterable

from nightshift.supervisor.fleet.state import lane_run
from nightshift.supervisor.run.allocation import allocation


def lanes_allocation(lanes: Iterable[dict[str, Any]], now: float | None = None) -> tuple[float, float]:
    """(core-hours, GPU-hours) spent by these lanes (the fleet's ``lanes`` records) together, ended lanes too:
    what a lane spent before it ended was spent all the same. A lane whose run does not exist yet spent nothing."""
    from nightshift.supervisor.fleet.lanes_watch import lane_state

    now = time.time() if now is None else now
    core = gpu = 0.0
    for lane in lanes:
        run = lane_run(lane)
        state = lane_state(run)
        if state is None:
            continue
        spent = allocation(state, now, run.root)
        core, gpu = core + spent.core_hours, gpu + spent.gpu_hours
    return core, gpu


def spent_over(limits, rows: list[dict[str, Any]], hours: float,
               lanes: Iterable[dict[str, Any]] = ()) -> tuple[str, float, float] | None:
    cost = round(sum(float(r.get("cost_usd") or 0.0) for r in rows), 4)
    if limits.max_cost_usd and cost >= limits.max_cost_usd:
        return "max_cost_usd", limits.max_cost_usd, cost
    if hours > limits.max_hours:
        return "max_hours", limits.max_hours, round(hours, 2)
    if not (limits.max_core_hours or limits.max_gpu_hours):
        return None  # no allocation limit: the lanes' logs need not be read again on every pass
    core, gpu = lanes_allocation(lanes)
    if limits.max_core_hours and core >= limits.max_core_hours:
        return "max_core_hours", limits.max_core_hours, round(core, 4)
    if limits.max_gpu_hours and gpu >= limits.max_gpu_hours:
        return "max_gpu_hours", limits.max_gpu_hours, round(gpu, 4)
    return None
