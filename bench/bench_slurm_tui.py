"""Benchmark: what the TUI open on 20 Slurm runs costs slurmctld (it should cost nothing: it reads what the
supervisors recorded).

Brings up the private localhost cluster, submits 20 jobs, and gives each a run directory and a "supervisor": a
JobPoller (shared queue snapshot, default intervals divided by SCALE, as in bench_slurm.py) that records each
change as a ``slurm.job_changed`` event with the Slurm backend's own ``job_event``. Then it counts slurmctld's
RPCs (`sdiag`) over two windows of the same length: the supervisors alone, and the supervisors with the TUI
open (headless, live, on the dashboard and then on a run screen). Prints RPCs per job-hour for both and the
difference, by message type.
Run: .venv/bin/python bench/bench_slurm_tui.py   (about two minutes; prints figures; not a test)
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_slurm import SCALE, sdiag_rpcs, submit  # noqa: E402
from nightshift.hpc.backend import job_event  # noqa: E402
from nightshift.hpc.client import make_client  # noqa: E402
from nightshift.hpc.localcluster import LocalCluster  # noqa: E402
from nightshift.hpc.poller import JobPoller  # noqa: E402
from nightshift.supervisor.run.events import EventLog  # noqa: E402
from nightshift.supervisor.run.paths import RunPaths  # noqa: E402
from nightshift.supervisor.run.registry import register  # noqa: E402

RUNS = 20
WINDOW = 40.0  # seconds per measurement (= 20 min of real time at SCALE 30)


def make_runs(base: Path, client) -> list[tuple[RunPaths, int, EventLog]]:
    runs = []
    for i in range(RUNS):
        workspace = base / f"ws{i:02d}"
        workspace.mkdir()
        run = RunPaths.for_run(workspace, f"20261123-000000-{i:04x}").create()
        job_id = submit(client, base, f"ns-benchtui-{i}", "sleep 3600")
        log = EventLog(run.events)
        log.append("run.created", run_id=run.run_id, workspace=str(workspace), goal=f"bench run {i}",
                   agent="claude", backend="slurm", host="bench")
        log.append("shift.started", 1, token="t", base="b")
        log.append("agent.started", 1, turn=1, target={"backend": "slurm", "job_id": job_id})
        run.supervisor.write_text(f'{{"host": "bench", "pid": {os.getpid()}, "started": {time.time()}}}')
        register(run, host="bench", created=time.time())
        runs.append((run, job_id, log))
    return runs


def supervise(runs, base: Path, client, stop: threading.Event) -> None:
    """One poller per run, as one supervisor per run does; each change becomes an event in its run's log."""
    pollers = []
    for run, job_id, _ in runs:
        poller = JobPoller(client, interval=30 / SCALE, max_interval=120 / SCALE, first_interval=2 / SCALE,
                           cache_file=base / "queue.json")
        poller.watch(job_id)
        pollers.append(poller)
    while not stop.is_set():
        for poller, (_, _, log) in zip(pollers, runs):
            for change in poller.poll():
                log.append("slurm.job_changed", 1, **job_event(change.job_id, change.new))
        time.sleep(0.05)


def window(with_tui: bool) -> dict[str, int]:
    subprocess.run(["sdiag", "-r"], capture_output=True, check=True)
    if with_tui:
        asyncio.run(tui_open(WINDOW))
    else:
        time.sleep(WINDOW)
    counts = sdiag_rpcs()
    counts.pop("REQUEST_STATS_INFO", None)  # our own sdiag
    return counts


async def tui_open(seconds: float) -> None:
    from nightshift.tui.app import make_app

    app = make_app(live=True)
    async with app.run_test(size=(160, 50)) as pilot:
        while not app.loaded:
            await pilot.pause(0.1)
        await asyncio.sleep(seconds / 2)
        await pilot.press("enter")  # a run screen, with its Slurm lines
        await asyncio.sleep(seconds / 2)
        rows = len(app.book.followers)
    print(f"  (the TUI showed {rows} runs)")


def main() -> int:
    reason = LocalCluster.why_not()
    if reason:
        print(f"bench_slurm_tui: skipped: {reason}")
        return 0
    base = Path(tempfile.mkdtemp(prefix="nightshift-bench-slurm-tui-"))
    os.environ["XDG_STATE_HOME"] = str(base / "state")  # a private registry: the TUI sees these runs only
    cluster = LocalCluster(cpus=32).start()
    stop = threading.Event()
    try:
        client = make_client("cli")
        runs = make_runs(base, client)
        thread = threading.Thread(target=supervise, args=(runs, base, client, stop), daemon=True)
        thread.start()
        time.sleep(3)  # the jobs start and the first changes are recorded
        alone = window(with_tui=False)
        with_tui = window(with_tui=True)
        scale = 3600 / (WINDOW * SCALE) / RUNS
        a, b = sum(alone.values()) * scale, sum(with_tui.values()) * scale
        print(f"slurmctld RPCs per supervised job per hour, {RUNS} Slurm runs (sdiag, time scaled x{SCALE:.0f}):")
        print(f"  supervisors alone       : {a:6.1f}  {dict(sorted(alone.items()))}")
        print(f"  supervisors + TUI open  : {b:6.1f}  {dict(sorted(with_tui.items()))}")
        print(f"  difference (the windows' poll phases may differ by a query or two): {b - a:+.1f} RPCs/job/hour")
        stop.set()
        thread.join()
        tui_alone = window(with_tui=True)
        print(f"  TUI open, supervisors stopped: {sum(tui_alone.values())} RPCs in the window (goal 0) "
              f"{dict(sorted(tui_alone.items()))}")
    finally:
        stop.set()
        for _, job_id, log in locals().get("runs", []):
            client.cancel(job_id)
            log.close()
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
