"""Benchmark: how hard nightshift's Slurm poller loads slurmctld, and how fast it sees a job start.

Brings up the private localhost cluster (root, Debian's slurm-wlm; see notes/slurm-localhost.md) and prints:
1. RPCs slurmctld counts (`sdiag`) per supervised job per hour, for 1 and 20 concurrent supervised jobs, each
   watched by its own JobPoller (one per supervisor, as in real runs) sharing the user's queue snapshot. Time is
   compressed: intervals are the defaults (30 s, backoff to 120 s) divided by SCALE, and rates are scaled back.
   Anchor: a naive supervisor running one squeue (2 RPCs) per job every 30 s makes 240 RPCs per job-hour.
2. Latency from submit to RUNNING (Slurm's own start time) and from RUNNING to the poller noticing it.
Run: .venv/bin/python bench/bench_slurm.py   (prints figures; not a test)
"""
from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nightshift.hpc.client import make_client  # noqa: E402
from nightshift.supervisor.config.slurm import SlurmConfig  # noqa: E402
from nightshift.hpc.localcluster import LocalCluster  # noqa: E402
from nightshift.hpc.poller import JobPoller  # noqa: E402
from nightshift.hpc.script import BatchJob, write_script  # noqa: E402

SCALE = 30.0  # 30 s base interval -> 1 s here
WINDOW = 60.0  # seconds of compressed time per measurement (= 30 min of real time)
GOAL = 60


def sdiag_rpcs() -> dict[str, int]:
    """RPC counts by message type since the last reset."""
    out = subprocess.run(["sdiag"], capture_output=True, text=True, check=True).stdout
    section = out.split("Remote Procedure Call statistics by message type", 1)[-1].split("Remote Procedure Call "
                                                                                           "statistics by user")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\w+)\s*\(\s*\d+\)\s*count:(\d+)", section, re.M)}


def poll_for(pollers: list[JobPoller], seconds: float) -> None:
    """Each poller in a thread of its own, as each run's supervisor polls, for ``seconds``."""
    stop = time.monotonic() + seconds

    def supervise(poller: JobPoller) -> None:
        while time.monotonic() < stop:
            poller.poll()
            time.sleep(0.05)  # the supervisor's own tick

    threads = [threading.Thread(target=supervise, args=(p,)) for p in pollers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def submit(client, base: Path, name: str, work: str) -> int:
    job = BatchJob(name, work, base, base / f"{name}.log", base / f"{name}.status", base / f"{name}.usr1")
    return client.submit(write_script(SlurmConfig(time="30:00", grace=60), job, base / f"{name}.sbatch"))


def rpc_load(client, base: Path, jobs: int, shared: bool = True) -> tuple[float, dict[str, int], int]:
    ids = [submit(client, base, f"ns-bench-{jobs}-{i}", "sleep 3600") for i in range(jobs)]
    pollers = [JobPoller(client, interval=30 / SCALE, max_interval=120 / SCALE, first_interval=2 / SCALE,
                         cache_file=base / f"queue-{jobs}-{shared or i}.json") for i in range(len(ids))]
    for poller, job_id in zip(pollers, ids):
        poller.watch(job_id)
    time.sleep(2)  # let them start before counting
    subprocess.run(["sdiag", "-r"], capture_output=True, check=True)
    poll_for(pollers, WINDOW)
    counts = sdiag_rpcs()
    for job_id in ids:
        client.cancel(job_id)
    counts.pop("REQUEST_STATS_INFO", None)  # our own sdiag
    queries = sum(p.queries for p in pollers)
    per_job_hour = sum(counts.values()) / jobs * 3600 / (WINDOW * SCALE)
    return per_job_hour, counts, queries


def start_latency(client, base: Path, rounds: int = 5) -> tuple[list[float], list[float]]:
    to_running, to_detected = [], []
    for i in range(rounds):
        poller = JobPoller(client, interval=30, cache_file=base / f"lat-{i}.json")  # the default intervals
        t0 = time.time()
        job_id = submit(client, base, f"ns-bench-lat{i}", "sleep 60")
        poller.watch(job_id)
        while not ((j := poller.get(job_id)) and j.running):
            poller.poll()
            time.sleep(0.05)
        detected = time.time()
        line = subprocess.run(["scontrol", "-o", "show", "job", str(job_id)], capture_output=True, text=True).stdout
        started = time.mktime(time.strptime(re.search(r"StartTime=(\S+)", line).group(1), "%Y-%m-%dT%H:%M:%S"))
        to_running.append(max(0.0, started - t0))
        to_detected.append(detected - max(started, t0))
        client.cancel(job_id)
    return to_running, to_detected


def main() -> int:
    reason = LocalCluster.why_not()
    if reason:
        print(f"bench_slurm: skipped: {reason}")
        return 0
    base = Path(tempfile.mkdtemp(prefix="nightshift-bench-slurm-"))
    cluster = LocalCluster(cpus=32).start()
    try:
        client = make_client("cli")
        print(f"slurmctld RPCs per supervised job per hour (goal <= {GOAL}, flat in jobs; naive anchor 240):")
        for jobs, shared in ((1, True), (20, True), (20, False)):
            per_hour, counts, queries = rpc_load(client, base, jobs, shared)
            top = ", ".join(f"{k}={v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:3])
            how = "shared snapshot" if shared else "no shared snapshot"
            print(f"  {jobs:2d} job(s), {how:18s}: {per_hour:6.1f} RPCs/job/hour  ({queries} queries in "
                  f"{WINDOW * SCALE / 60:.0f} scaled minutes; {top}); vs anchor x{per_hour / 240:.3f}")
        to_running, to_detected = start_latency(client, base)
        print(f"submit -> RUNNING (Slurm StartTime, 1 s resolution): median {statistics.median(to_running):.1f} s, "
              f"max {max(to_running):.1f} s")
        print(f"RUNNING -> detected by the poller (default intervals): median {statistics.median(to_detected):.1f} s, "
              f"max {max(to_detected):.1f} s")
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
