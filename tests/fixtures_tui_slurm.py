"""Slurm runs for the TUI tests, made of real job records.

``capture_jobs`` takes a PENDING, a RUNNING and a TIMEOUT-ended job from the localhost cluster and turns each
observation into ``slurm.job_changed`` data through the Slurm backend's own path (``SlurmBackend._record_change``:
the fields, the end-of-job accounting without slurmdbd). ``write_slurm_runs`` writes run directories from such
data. tests/data/slurm_tui_jobs.json holds one capture (re-made with NIGHTSHIFT_RECORD_SLURM=1), its times
shifted to the fixed clock, so the snapshots are the same on every machine.
"""
from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.registry import register
from tests.fixtures_slurm import submit_job, wait_for
from tests.fixtures_tui import FIXED_NOW, HOST, clock_from, heartbeat, make_run

RECORDED = Path(__file__).parent / "data" / "slurm_tui_jobs.json"
RUN_IDS = {"pending": "20261122-080000-5e01", "running": "20261122-081000-5e02", "timeout": "20261122-082000-5e03"}


def _events(backend, job_id: int, info, target, old=None) -> list[dict[str, Any]]:
    backend._record_change(job_id, info, target, old)
    return backend.take_changes()


def capture_jobs(client, tmp: Path) -> dict[str, Any]:
    """Four real jobs: one running (1 CPU), one asking for every CPU of the node (so PENDING on Resources), one
    with a one-minute walltime that Slurm ends TIMEOUT, and the next shift's job queued behind them."""
    from nightshift.hpc.backend import SlurmBackend

    backend = SlurmBackend(SimpleNamespace(slurm=SlurmConfig()), run=None, client=client)
    sleep = "sleep 600"
    big = SlurmConfig(time="10:00", grace=30, cpus=32)
    run_id, _ = submit_job(client, tmp, "ns-tui-running", sleep, SlurmConfig(time="10:00", grace=30))
    out_id, _ = submit_job(client, tmp, "ns-tui-timeout", sleep, SlurmConfig(time="1", grace=10))
    try:
        running = wait_for(lambda: _state(client, run_id, "RUNNING"), 60, what="a running job")
        out_running = wait_for(lambda: _state(client, out_id, "RUNNING"), 60, what="the walltime job running")
        pend_id, _ = submit_job(client, tmp, "ns-tui-pending", sleep, big)
        next_id, _ = submit_job(client, tmp, "ns-tui-next", sleep, big)
        pending = wait_for(lambda: _state(client, pend_id, "PENDING", reason=True), 60, what="a pending job's reason")
        queued = wait_for(lambda: _state(client, next_id, "PENDING", reason=True), 60, what="a queued successor")
        ended = wait_for(lambda: _state(client, out_id, "TIMEOUT"), 180, what="the walltime job to time out")
        target = {"signal_file": str(tmp / "none")}
        return {"captured_at": time.time(), "node": running.node,
                "pending": _events(backend, pend_id, pending, target),
                "running": _events(backend, run_id, running, target),
                "timeout": (_events(backend, out_id, out_running, target)
                            + _events(backend, out_id, ended, target, out_running)),
                "next": _events(backend, next_id, queued, target)}
    finally:
        for job_id in client.query(prefix="ns-tui-"):
            client.cancel(job_id)


def _state(client, job_id: int, state: str, reason: bool = False):
    info = client.query([job_id]).get(job_id)
    if info is not None and info.state == state and (info.reason or not reason):
        return info
    return None


def shifted(capture: dict[str, Any], to_now: float) -> dict[str, Any]:
    """The capture as if made at ``to_now`` (start times moved by the same amount)."""
    delta = to_now - float(capture["captured_at"])
    out = json.loads(json.dumps(capture))
    for key in ("pending", "running", "timeout", "next"):
        for data in out[key]:
            if data.get("start"):
                data["start"] = float(data["start"]) + delta
    return out


def load_recorded() -> dict[str, Any]:
    return shifted(json.loads(RECORDED.read_text()), FIXED_NOW)


def write_slurm_runs(home: Path, capture: dict[str, Any], fixed_clock: bool = True) -> dict[str, RunPaths]:
    """Three runs with the Slurm backend: waiting for its job, running one, and one whose first job reached
    its walltime (the loop recorded the walltime stop, and the next shift's job waits)."""
    runs: dict[str, RunPaths] = {}
    for kind, goal in (("pending", "Tune the grid solver on a full node"),
                       ("running", "Boltzmann solver on the cluster"),
                       ("timeout", "A long fit that outgrew its walltime")):
        run = make_run(home, f"slurm-{kind}", RUN_IDS[kind])
        (run.config).write_text("[limits]\nmax_core_hours = 2.0\n[slurm]\ntime = \"10:00\"\n")
        with (clock_from(1500, step=60) if fixed_clock else contextlib.nullcontext()):
            log = EventLog(run.events)
            log.append("run.created", run_id=run.run_id, workspace=str(run.workspace), goal=goal, agent="claude",
                       backend="slurm", host=HOST)
            jobs = capture[kind]
            _turn(log, run, 1, jobs)
            if kind == "timeout":
                log.append("agent.stopped", 1, turn=1, reason="walltime", exit_code=None, cost_usd=0.42,
                           error=f"job {jobs[0]['job_id']} reached its walltime ([slurm] time)")
                log.append("shift.ended", 1, reason="walltime")
                _turn(log, run, 2, capture["next"])
            log.close()
        heartbeat(run, age=5) if fixed_clock else run.supervisor.write_text(
            json.dumps({"host": HOST, "pid": 4242, "started": time.time()}))
        register(run, host=HOST, created=FIXED_NOW)
        runs[kind] = run
    return runs


def _turn(log: EventLog, run: RunPaths, shift: int, jobs: list[dict[str, Any]]) -> None:
    log.append("shift.started", shift, token=f"t{shift}", base="b")
    wrapper = run.shift_dir(shift) / "t1.sh"
    log.append("agent.started", shift, turn=1, target={
        "backend": "slurm", "job_id": jobs[0]["job_id"], "job_name": f"ns-{run.run_id}-s{shift}t1", "attempt": 1,
        "log": str(wrapper.with_suffix(".log")), "wrapper": str(wrapper),
        "attach": ["tail", "-n", "+1", "-f", str(wrapper.with_suffix(".log"))]})
    for data in jobs:
        log.append("slurm.job_changed", shift, **data)
