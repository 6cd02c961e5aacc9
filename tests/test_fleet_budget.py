"""One allocation budget for a fleet: [limits] max_core_hours and max_gpu_hours hold for every lane together, as
max_cost_usd does. Real run directories: a fleet made as `nightshift run --lanes 2` makes it, its lanes real git
worktrees with their own runs, each lane's Slurm jobs recorded in its log as the Slurm backend records a job's end
(slurm.job_changed with the job's core-hours). No lane is started: the budget is read from the logs alone."""
from __future__ import annotations

import pytest

from nightshift.supervisor.fleet.budget import lanes_allocation, spent_over
from nightshift.supervisor.fleet.state import lane_run
from nightshift.supervisor.run.allocation import allocation
from nightshift.supervisor.run.state import load_state
from nightshift.supervisor.shift.launcher import resolve_config
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet, planned_fleet, record_job  # noqa: F401


@pytest.mark.parametrize("limit,what,spent", [
    ("max_core_hours = 10", "max_core_hours", (6.0, 0.0)),
    ("max_gpu_hours = 3", "max_gpu_hours", (0.5, 2.0)),
])
def test_lanes_each_under_the_limit_together_over_it_pause_the_fleet(fleet: Fleet, limit, what, spent):
    sup = planned_fleet(fleet, limit)
    try:
        lanes = list(sup.fleet["lanes"].values())
        for lane in lanes:
            record_job(lane_run(lane), "1001", *spent)
        limits = sup.config.limits
        for lane in lanes:  # each lane alone is under the limit: its own supervisor would not pause it
            state = load_state(lane_run(lane).root)[0]
            alone = allocation(state, 0.0, lane_run(lane).root)
            assert alone.core_hours < (limits.max_core_hours or 1e9) and alone.gpu_hours < (limits.max_gpu_hours or 1e9)
        assert lanes_allocation(lanes) == (2 * spent[0], 2 * spent[1])
        assert spent_over(limits, sup.rows(), 0.0, lanes)[:2] == (what, getattr(limits, what))

        sup.keep_budget()  # the fleet loop's own pass over its budget
        exceeded = [e["data"] for e in fleet.events() if e["type"] == "budget.exceeded"]
        assert exceeded == [{"what": what, "limit": getattr(limits, what), "value": 2 * max(spent)}], exceeded
        paused = [e["data"] for e in fleet.events() if e["type"] == "run.paused"]
        assert paused[0]["kind"] == "budget" and f"raise limits.{what}" in paused[0]["reason"], paused
        assert sup.state["paused"]
    finally:
        sup.ledger.close()


def test_under_the_limit_together_the_fleet_goes_on(fleet: Fleet):
    sup = planned_fleet(fleet, "max_core_hours = 10")
    try:
        lanes = list(sup.fleet["lanes"].values())
        record_job(lane_run(lanes[0]), "1001", 4.0)
        record_job(lane_run(lanes[1]), "1002", 5.0)
        sup.keep_budget()
        assert not any(e["type"] == "budget.exceeded" for e in fleet.events())
        assert not sup.state["paused"]
    finally:
        sup.ledger.close()


def test_no_allocation_limit_reads_no_lane(workspace):  # noqa: F811
    """From `nightshift init` defaults there is no core-hour or GPU-hour limit: no lane's log is read for one."""
    limits = resolve_config(workspace.path).limits
    assert not limits.max_core_hours and not limits.max_gpu_hours
    unreadable = [{"worktree": str(workspace.path / "nowhere"), "run_id": "r-l1"}]
    assert spent_over(limits, [{"cost_usd": 1.0}], 0.0, unreadable) is None
