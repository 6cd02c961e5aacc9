"""Part 3 of bench_fleet.py: how hard a fleet's lanes load slurmctld, their first turns as ONE job array against
one job per lane, on the private localhost cluster (hpc/localcluster.py; root and Debian's slurm-wlm).

For each arm the lanes' first turns are submitted (one `sbatch --array=0-(N-1)`, or N `sbatch`), then each lane's
own supervisor watches its job with its own JobPoller over the user's shared queue snapshot, as in a real fleet,
for one lane-hour of compressed time (the default intervals divided by SCALE); then the jobs are cancelled. The
RPCs slurmctld counts (`sdiag`, reset before each arm, read once every job's end is reported) cover the
submissions, the polling, the cancellations and the nodes' end-of-job messages; the client's calls are counted too.
"""
from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

from bench_slurm import poll_for, sdiag_rpcs
from nightshift.hpc.client import make_client
from nightshift.hpc.localcluster import LocalCluster
from nightshift.hpc.poller import JobPoller

from nightshift.hpc.script import BatchJob, write_script
from nightshift.supervisor.config.slurm import SlurmConfig

SCALE = 30.0  # 30 s base poll interval -> 1 s here
WINDOW = 120.0  # seconds of compressed time = one lane-hour at SCALE 30


def _script(base: Path, name: str, array: int | None) -> Path:
    job = BatchJob(name, "sleep 3600", base, base / f"{name}-%a.log", base / f"{name}.status",
                   base / f"{name}.usr1")
    config = SlurmConfig(time="30:00", grace=60, extra=[f"--array=0-{array - 1}"] if array else [])
    return write_script(config, job, base / f"{name}.sbatch")


def one_arm(base: Path, lanes: int, as_array: bool) -> tuple[float, int, dict[str, int]]:
    """(slurmctld RPCs per lane-hour, client calls, the RPC counts by type) for one way of starting the lanes."""
    client = make_client("cli")
    subprocess.run(["sdiag", "-r"], capture_output=True, check=True)
    tag = "array" if as_array else "jobs"
    if as_array:
        first = client.submit(_script(base, f"ns-bench-fleet-{tag}", lanes))
        keys: list[int | str] = [f"{first}_{k}" for k in range(lanes)]
    else:
        keys = [client.submit(_script(base, f"ns-bench-fleet-{tag}-{k}", None)) for k in range(lanes)]
    pollers = [JobPoller(client, interval=30 / SCALE, max_interval=120 / SCALE, first_interval=2 / SCALE,
                         cache_file=base / f"queue-{tag}.json") for _ in keys]
    for poller, key in zip(pollers, keys):
        poller.watch(key)
    poll_for(pollers, WINDOW)
    seen = sum(1 for p, key in zip(pollers, keys) if p.get(key) is not None)
    for key in keys:  # the end of the lanes' jobs is part of each arm: cancelled, and each node's epilog message
        client.cancel(key)
    counts = _settled(lanes)
    if seen < lanes:
        raise SystemExit(f"only {seen} of {lanes} lanes' jobs were seen by their pollers ({tag})")
    return sum(counts.values()) / lanes * 3600 / (WINDOW * SCALE), client.calls, counts


def _settled(jobs: int, limit: float = 60.0) -> dict[str, int]:
    """The arm's RPC counts once slurmd has reported every job's end (so none spills into the next arm)."""
    deadline = time.monotonic() + limit
    while True:
        counts = sdiag_rpcs()
        counts.pop("REQUEST_STATS_INFO", None)  # our own sdiag
        if counts.get("MESSAGE_EPILOG_COMPLETE", 0) >= jobs or time.monotonic() > deadline:
            return counts
        time.sleep(1.0)


def rpcs_per_lane_hour(lanes: int, say=print) -> None:
    """Print both arms and their ratio (goal: the array below one job per lane), or why not measured."""
    from _common import against_goal, info

    reason = LocalCluster.why_not()
    if reason:
        say(f"  not measured: the localhost Slurm cluster cannot run here: {reason}")
        return
    base = Path(tempfile.mkdtemp(prefix="nightshift-bench-fleet-slurm-"))
    cluster = LocalCluster(cpus=max(8, lanes * 2))
    try:
        cluster.start()
    except Exception as exc:  # noqa: BLE001 - e.g. another session holds the cluster: said, not raised
        cluster.stop()
        say(f"  not measured: the localhost Slurm cluster did not come up: {exc}")
        return
    try:
        array, array_calls, array_counts = one_arm(base, lanes, as_array=True)
        jobs, jobs_calls, jobs_counts = one_arm(base, lanes, as_array=False)
    finally:
        cluster.stop()
    top = lambda c: ", ".join(f"{k}={v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1])[:3])  # noqa: E731
    say(info(f"{lanes} lanes, one job per lane: RPCs per lane-hour", jobs, "") + f"   ({top(jobs_counts)})")
    say(info(f"{lanes} lanes, one job per lane: client calls", jobs_calls, ""))
    say(info(f"{lanes} lanes, one job array: client calls", array_calls, ""))
    say(against_goal(f"{lanes} lanes, one job array: RPCs per lane-hour (goal: < per lane)", array, jobs, "")
        + f"   ({top(array_counts)})")
    say(against_goal("ratio array / one job per lane (goal < 1)", array / jobs if jobs else 0.0, 1.0, ""))
