"""What one job of a `nightshift submit` chain runs: ``python -m nightshift.hpc.chain_job <run dir>``.

It queues its successor first (so a job killed at the limit, warned or not, is continued), runs the supervisor
as a child, and on the walltime warning (USR1, forwarded by the batch script) asks the agent through the inbox
to write its notes and commit. When the supervisor ends with the run finished, the successor is cancelled.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from nightshift.hpc.chain import cancel_chain, ensure_successor, record
from nightshift.hpc.client import make_client
from nightshift.hpc.errors import SlurmError
from nightshift.supervisor.run import inbox
from nightshift.supervisor.backends.tmux import socket_for
from nightshift.supervisor.shift.launcher import frozen_config, supervise_argv
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import load_state

WRAPUP = ("The batch job running this session reaches its walltime in about {grace} seconds. Write what you "
          "learned and what is left to CHANGELOG.md now and commit your work; the run continues in the next job "
          "from your notes.")


def kill_agent_server(run: RunPaths) -> None:
    """The agent's tmux server daemonizes out of the job's process tree: stop it by its private socket. A fleet's
    lanes each have a server of their own (their supervisor and agent): they go with the job too, and the next job's
    fleet supervisor starts them again, as it does after any crash."""
    for run_id in [run.run_id, *(lane.run_id for lane in lane_runs(run))]:
        subprocess.run(["tmux", "-L", socket_for(run_id), "kill-server"], capture_output=True, check=False)


def lane_runs(run: RunPaths) -> list[RunPaths]:
    """A fleet's lanes (none for one run), from the fleet's own log."""
    from nightshift.supervisor.run.events import read_events

    return [RunPaths.for_run(Path(e["data"]["worktree"]), e["data"]["run_id"]) for e in read_events(run.events).events
            if e.get("type") == "lane.planned" and (e.get("data") or {}).get("run_id")]


def let_lanes_finish(run: RunPaths, limit: float = 60.0) -> None:
    """A finished fleet told its other lanes to stop: give their supervisors the time to record it before the job
    (and kill_agent_server) ends them."""
    from nightshift.supervisor.fleet.lanes_watch import supervised

    deadline = time.monotonic() + limit
    while any(supervised(lane) for lane in lane_runs(run)) and time.monotonic() < deadline:
        time.sleep(0.5)


def own_record(client, me: int) -> dict:
    """This job's start, limit and CPUs (one query, once per job), so the TUI shows its elapsed time and time left
    from the chain's record without asking Slurm itself."""
    try:
        info = client.query([me]).get(me)
    except SlurmError:
        return {}
    return {"start": info.start, "time_limit": info.time_limit, "cpus": info.cpus} if info else {}


def continue_chain(run: RunPaths, client, me: int, say: str) -> None:
    """Make sure a job continues the run after this one, unless the run is stopped or over; says which."""
    try:
        successor = ensure_successor(run, client, me)
    except SlurmError as exc:  # the run still goes on in this job; only its continuation is at risk
        print(f"nightshift: could not queue the continuation job: {exc}", flush=True)
        return
    then = f"job {successor} continues it" if successor else "no job continues it (the run is stopped or over)"
    print(f"nightshift: {say}; {then}", flush=True)


def main(argv: list[str]) -> int:
    run = RunPaths(Path(argv[0]))
    config = frozen_config(run)
    client = make_client(config.slurm.client)
    me = int(os.environ.get("SLURM_JOB_ID", "0"))
    record(run, "started", job_id=me, node=socket.gethostname(), restart=int(os.environ.get("SLURM_RESTART_COUNT", 0)),
           **own_record(client, me))
    continue_chain(run, client, me, say=f"job {me} supervises run {run.run_id}")
    warned: list[float] = []
    signal.signal(signal.SIGUSR1, lambda *_: warned.append(time.time()))
    child = subprocess.Popen(supervise_argv(run), cwd=run.root)

    def on_term(*_):  # the limit itself or scancel: the successor (already queued) resumes from the event log
        # Slurm signals every process of the step and the batch script forwards its own TERM too: the second
        # one must not re-enter this handler halfway through (it did, mid-import, and the agent survived).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child.terminate()
        kill_agent_server(run)
        sys.exit(143)

    signal.signal(signal.SIGTERM, on_term)
    told = False
    while child.poll() is None:
        if warned and not told:
            told = True
            record(run, "walltime_warning", job_id=me)
            inbox.send_command(run, "nudge", message=WRAPUP.format(grace=int(config.slurm.grace)))
            continue_chain(run, client, me, say=f"job {me} reaches its walltime")
        time.sleep(0.5)
    state, _, _ = load_state(run.root)
    if state["phase"] == "finished":
        try:
            cancel_chain(run, client, keep=me, why=f"run finished ({state.get('outcome')})")
        except SlurmError as exc:
            print(f"nightshift: could not cancel the continuation job: {exc}", flush=True)
        record(run, "finished", job_id=me, outcome=state.get("outcome"))
        let_lanes_finish(run)
    kill_agent_server(run)
    return child.returncode or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
