"""A batch turn's job that waits in the queue is silent because it has not started, not because its agent stalled:
against the localhost cluster, a job held in the queue (``--begin``) far longer than ``[limits] stall_after`` is
neither nudged nor ended; once it runs, the turn goes on and the run ends done."""
from __future__ import annotations

import pytest

from nightshift.supervisor.run.state import load_state
from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import workspace  # noqa: F401
from tests.fixtures_slurm import slurm_cluster  # noqa: F401

pytestmark = pytest.mark.slurm

QUEUED = ('[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\nmax_job_retries = 0\n'
          'extra = ["--begin=now+20"]\n')


@pytest.mark.timeout(240)
def test_a_job_waiting_in_the_queue_past_stall_after_is_not_a_stall(slurm_cluster, workspace):
    fix = [["write", "check.txt", "ok"], ["claim", "done", "fixed check.txt"]]
    ws = workspace.configure({"s1t1": fix}, backend="slurm", extra=QUEUED)
    toml = ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[limits]\n", '[limits]\nstall_after = "2s"\n'))
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    events = ws.events(run)
    states = [e["data"].get("state") for e in events if e["type"] == "slurm.job_changed"]
    assert "PENDING" in states and "RUNNING" in states or "COMPLETED" in states, states
    pending_for = _seconds_pending(events)
    assert pending_for > 4 * 2, pending_for  # it waited longer than two stall periods (nudge, then end)
    assert "agent.stalled" not in [e["type"] for e in events], [e["type"] for e in events]
    assert load_state(run.root)[0]["outcome"] == "done"


def _seconds_pending(events: list[dict]) -> float:
    from datetime import datetime

    def at(e):
        return datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
    pending = next(e for e in events if e["type"] == "slurm.job_changed" and e["data"].get("state") == "PENDING")
    after = next(e for e in events if e["type"] == "slurm.job_changed" and e["seq"] > pending["seq"]
                 and e["data"].get("state") != "PENDING")
    return at(after) - at(pending)
