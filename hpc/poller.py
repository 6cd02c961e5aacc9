"""A batched poller: one controller query per interval for all of a user's nightshift jobs, with backoff.

Several supervisors of the same user (one per run) share one snapshot of the queue through a small cache file
in the user's state folder: whoever finds it older than the interval queries (under a file lock) and
rewrites it, the others read it. So the load on slurmctld is one query per interval for the user, flat in
the number of runs. When nothing changes the interval grows (x1.5 up to ``max_interval``); a change resets it.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from nightshift.hpc.interface import JOB_PREFIX, SlurmClient
from nightshift.hpc.errors import ControllerUnavailable, SlurmCommandFailed
from nightshift.hpc.jobs import JobInfo, job_key
from nightshift.supervisor.run.paths import user_state_dir


@dataclass(frozen=True)
class JobChange:
    job_id: int
    old: JobInfo | None
    new: JobInfo | None  # None: the controller no longer knows the job


def default_cache_file(client: SlurmClient) -> Path:
    return user_state_dir() / f"slurm-queue-{getattr(client, 'user', 'me')}.json"


class JobPoller:
    def __init__(self, client: SlurmClient, interval: float = 30.0, max_interval: float | None = None,
                 prefix: str = JOB_PREFIX, cache_file: Path | None = None, first_interval: float = 2.0):
        self.client, self.prefix = client, prefix
        self.interval = interval
        # A job just submitted is polled sooner (2 s, 3 s, 4.5 s, ... growing as usual) so its start is seen fast.
        self.first_interval = min(first_interval, interval)
        self.max_interval = max_interval if max_interval is not None else 4 * interval
        self.current = interval
        self.cache_file = cache_file if cache_file is not None else default_cache_file(client)
        self.watched: dict[int, float] = {}  # job id -> when we started watching (wall clock)
        self.jobs: dict[int, JobInfo] = {}
        self.next_due = 0.0
        self.unavailable: str | None = None  # the last controller error, while it lasts
        self.queries = 0  # controller queries this poller made itself (benchmarks)

    def watch(self, job_id: int) -> None:
        self.watched.setdefault(job_id, time.time())
        self.current = self.first_interval
        self.next_due = min(self.next_due, time.monotonic() + self.current)

    def unwatch(self, job_id: int) -> None:
        self.watched.pop(job_id, None)
        self.jobs.pop(job_id, None)

    def get(self, job_id: int) -> JobInfo | None:
        return self.jobs.get(job_id)

    def due(self) -> bool:
        return time.monotonic() >= self.next_due

    def poll(self, force: bool = False) -> list[JobChange]:
        """Changes of the watched jobs since the last poll; [] when not due or the controller is away."""
        if not (force or self.due()):
            return []
        try:
            taken, jobs = self._snapshot(max_age=0.0 if force else self.current / 2)
        except (ControllerUnavailable, SlurmCommandFailed) as exc:
            self.unavailable = str(exc)
            self.next_due = time.monotonic() + self.current
            return []
        self.unavailable = None
        changes = []
        for job_id, since in list(self.watched.items()):
            old, new = self.jobs.get(job_id), jobs.get(job_id)
            if new is None and taken < since:
                continue  # a snapshot from before we submitted it says nothing about this job
            if new is None and old is not None:
                changes.append(JobChange(job_id, old, None))
                del self.jobs[job_id]
            elif new is not None and new.changed_from(old):
                changes.append(JobChange(job_id, old, new))
            if new is not None:
                self.jobs[job_id] = new
        if changes:  # back to the base interval, or stay quick while a watched job has not started yet
            quick = any(j.pending for j in self.jobs.values() if j.job_id in self.watched)
            self.current = self.first_interval if quick else self.interval
        else:
            self.current = min(self.current * 1.5, self.max_interval)
        self.next_due = time.monotonic() + self.current
        return changes

    # ----- the shared snapshot --------------------------------------------------------------------
    def _snapshot(self, max_age: float) -> tuple[float, dict[int, JobInfo]]:
        cached = self._read_cache(max_age)
        if cached is not None:
            return cached
        self.cache_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.cache_file.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another supervisor querying right now: use its answer
            cached = self._read_cache(max_age)
            if cached is not None:
                return cached
            taken = time.time()
            jobs = self.client.query(self.watched, prefix=self.prefix)
            self.queries += 1
            self._write_cache(taken, jobs)
            return taken, jobs

    def _read_cache(self, max_age: float) -> tuple[float, dict[int, JobInfo]] | None:
        if max_age <= 0 or not self.prefix:
            return None  # without a prefix the shared snapshot may not hold our jobs
        try:
            body = json.loads(self.cache_file.read_text())
        except (FileNotFoundError, ValueError):
            return None
        taken = float(body.get("taken", 0))
        if time.time() - taken > max_age or body.get("prefix") != self.prefix:
            return None
        return taken, {job_key(j["job_id"]): JobInfo(**j) for j in body.get("jobs", [])}

    def _write_cache(self, taken: float, jobs: dict[int, JobInfo]) -> None:
        body = {"taken": taken, "prefix": self.prefix, "jobs": [j.to_event() for j in jobs.values()]}
        tmp = self.cache_file.with_name(f".{self.cache_file.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(body, fh)
        os.replace(tmp, self.cache_file)
