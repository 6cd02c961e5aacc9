"""The dashboard's supervisor column and Where cell say what a user does next: a paused run (on its budget, for a
person) reads as paused with `resume`, never "dead"; "dead" only for a supervisor that died while its run went on;
a run that has ended never shows a Slurm job in a live state it no longer has."""
from __future__ import annotations

from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.registry import register
from tests.fixtures_tui import FIXED_NOW, HOST, clock_from, fixed_clock, heartbeat, make_run, tui_home  # noqa: F401
from tests.test_tui_actions import open_dashboard
from tests.test_tui_live import dashboard_cells
from nightshift.tui.app import make_app

SUP, WHERE, DETAIL = 7, 9, "detail"


def write(home, name: str, run_id: str, *events: tuple, beat_age: float = 400, stopped: bool = False):
    run = make_run(home, name, run_id)
    with clock_from(3600, step=30):
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=str(run.workspace), goal=name, agent="claude",
                   backend="slurm", host=HOST)
        log.append("shift.started", 1, token="t", base="b")
        for kind, data in events:
            log.append(kind, 1, **data)
        log.close()
    heartbeat(run, age=beat_age, stopped=stopped)
    register(run, host=HOST, created=FIXED_NOW)
    return run


async def test_paused_reads_paused_dead_only_for_a_death_and_ended_jobs_show_their_recorded_end(tui_home):
    home, runs = tui_home
    person = write(home, "for-a-person", "20261122-010000-aaaa",
                   ("run.paused", {"reason": "the judge holds for a person", "kind": "judge"}))
    died = write(home, "died", "20261122-020000-bbbb",
                 ("agent.stopped", {"turn": 1, "reason": "exit"}))
    # Job 18 was last seen PENDING; the run was stopped and no later event came: not "PENDING" any more.
    stale = write(home, "stopped-lane", "20261122-030000-cccc",
                  ("slurm.job_changed", {"job_id": 18, "state": "PENDING", "reason": "Priority"}),
                  ("run.finished", {"outcome": "stopped", "reason": "stopped by its fleet"}), stopped=True)
    # Job 21 ran, then its end was recorded (COMPLETED): the ended run shows that end.
    ended = write(home, "ended", "20261122-040000-dddd",
                  ("slurm.job_changed", {"job_id": 21, "state": "RUNNING", "node": "c1", "start": FIXED_NOW - 90}),
                  ("slurm.job_changed", {"job_id": 21, "state": "COMPLETED", "exit_code": 0}),
                  ("run.finished", {"outcome": "done", "reason": "verified"}), stopped=True)
    live = write(home, "live", "20261122-050000-eeee",
                 ("slurm.job_changed", {"job_id": 30, "state": "PENDING", "reason": "Resources"}), beat_age=5)
    app = make_app(clock=fixed_clock, live=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await open_dashboard(app, pilot)
        assert dashboard_cells(app, runs["paused"].run_id)[SUP] == f"{HOST} 6m paused · resume"
        assert dashboard_cells(app, person.run_id)[SUP].endswith("paused · resume")
        assert dashboard_cells(app, died.run_id)[SUP].endswith(" dead")
        assert dashboard_cells(app, stale.run_id)[SUP].endswith(" ended")
        assert dashboard_cells(app, stale.run_id)[WHERE] == "slurm 18 PENDING when last seen"
        assert dashboard_cells(app, ended.run_id)[WHERE] == "slurm 21 COMPLETED"
        assert dashboard_cells(app, live.run_id)[WHERE] == "slurm 30 PENDING (Resources)"  # live: as recorded
        rows = {r.run_id: r for r in app.book.rows()}
        assert "paused (budget: max cost $3 reached): `nightshift resume" in rows[runs["paused"].run_id].detail
        assert "no supervisor" in rows[died.run_id].detail and "no supervisor" not in rows[person.run_id].detail
