"""The Slurm CLI client: sbatch, squeue, scontrol, scancel (and sacct when accounting exists).

``squeue --json`` ignores its filters on 22.05 and squeue costs two RPCs a call, so jobs are read with one
``scontrol -o show job`` (one line per job) and filtered here. Slurm's own error messages are kept verbatim.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from nightshift.hpc.interface import JOB_PREFIX, Backoff, SubmitOptions, current_user
from nightshift.hpc.errors import ControllerUnavailable, SlurmCommandFailed, SlurmMissing, SubmitRejected
from nightshift.hpc.jobs import JobInfo, base_state, gpus_in, job_key, parse_duration

# Messages of a controller that is down, restarting or overloaded: worth retrying with backoff.
TRANSIENT = re.compile(r"Unable to contact slurm controller|Socket timed out|Connection refused|"
                       r"Zero Bytes were transmitted|Communication connection failure|Unexpected message received|"
                       r"Slurm backup controller in standby mode|Transport endpoint|Resource temporarily unavailable",
                       re.I)
_PAIR = re.compile(r"([A-Za-z][\w/:]*)=(.*?)(?= [A-Za-z][\w/:]*=|$)")
_USER = re.compile(r"\bUserId=([^( ]+)")


class _Failed(Exception):
    def __init__(self, argv: list[str], code: int, message: str):
        super().__init__(message)
        self.argv, self.code, self.message = argv, code, message


def _transient(exc: Exception) -> bool:
    return isinstance(exc, _Failed) and bool(TRANSIENT.search(exc.message))


class CliClient:
    kind = "cli"

    def __init__(self, backoff: Backoff = Backoff(), user: str | None = None, timeout: float = 60):
        missing = [name for name in ("sbatch", "squeue", "scontrol", "scancel") if not shutil.which(name)]
        if missing:
            raise SlurmMissing(f"Slurm commands not found ({', '.join(missing)}); run nightshift on a machine with "
                               "the Slurm client (a login node), or use --backend tmux")
        self.backoff, self.user, self.timeout = backoff, user or current_user(), timeout
        self.calls = 0  # controller calls made, for benchmarks

    # ----- plumbing -----------------------------------------------------------------------------
    def _run_once(self, argv: list[str]) -> str:
        self.calls += 1
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise _Failed(argv, -1, f"{argv[0]} timed out after {self.timeout:.0f}s (Socket timed out)") from None
        if result.returncode != 0:
            message = (result.stderr.strip() or result.stdout.strip() or f"exit {result.returncode}")
            raise _Failed(argv, result.returncode, message.splitlines()[-1] if message else message)
        return result.stdout

    def _run(self, argv: list[str]) -> str:
        try:
            return self.backoff.run(lambda: self._run_once(argv), _transient)
        except _Failed as exc:
            raise SlurmCommandFailed(f"{' '.join(argv[:2])} failed: {exc.message}") from None

    # ----- the interface ------------------------------------------------------------------------
    def submit(self, script: Path, options: SubmitOptions = SubmitOptions()) -> int:
        argv = ["sbatch", "--parsable"]
        if options.job_name:
            argv.append(f"--job-name={options.job_name}")
        if options.dependency:
            argv.append(f"--dependency={options.dependency}")
        argv += [*options.extra_args, str(script)]

        def attempt() -> str:
            if options.job_name:  # a retry after a lost answer: the first try may have been accepted
                live = [j for j in self.query(prefix=options.job_name).values()
                        if j.name == options.job_name and not j.terminal]
                if live:
                    return str(live[0].job_id)
            return self._run_once(argv)

        try:
            out = self.backoff.run(attempt, _transient)
        except _Failed as exc:
            # sbatch's own words, verbatim ("sbatch: error: Batch job submission failed: Invalid partition ...")
            raise SubmitRejected(exc.message) from None
        try:
            return int(out.strip().split(";")[0])
        except ValueError:
            raise SlurmCommandFailed(f"sbatch answered {out.strip()!r} instead of a job id") from None

    def check(self, script: Path) -> str:
        """Would Slurm take this script? ``sbatch --test-only`` queues nothing; its forecast, or SubmitRejected
        with sbatch's whole answer verbatim (e.g. both lines of an invalid partition)."""
        self.calls += 1
        try:
            result = subprocess.run(["sbatch", "--test-only", str(script)], capture_output=True, text=True,
                                    timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise SlurmCommandFailed(f"sbatch --test-only timed out after {self.timeout:.0f}s") from None
        answer = (result.stderr.strip() or result.stdout.strip())
        if result.returncode != 0:
            raise SubmitRejected(answer or f"sbatch --test-only exited {result.returncode}")
        return answer

    def query(self, job_ids: Iterable[int | str] | None = None, prefix: str = JOB_PREFIX) -> dict[int | str, JobInfo]:
        # `scontrol -o show job` is ONE RPC (REQUEST_JOB_INFO); squeue adds a REQUEST_PARTITION_INFO to each call,
        # and the controller sends every job either way (user filters are applied client-side on 22.05).
        wanted = set(job_ids or ())
        out = self._run(["scontrol", "-o", "show", "job"])
        jobs: dict[int, JobInfo] = {}
        for line in out.splitlines():
            user = _USER.search(line)
            for job in _parse_jobs(line):
                if job.job_id in wanted or (prefix and job.name.startswith(prefix) and user
                                            and user.group(1) == self.user):
                    jobs[job.job_id] = job
        return jobs

    def cancel(self, job_id: int | str) -> None:  # "<array>_<task>" cancels that task alone, never the array
        self._quiet_if_gone(["scancel", str(job_id)])

    def signal(self, job_id: int, signal: str = "USR1", batch_only: bool = True) -> None:
        argv = ["scancel", f"--signal={signal.removeprefix('SIG')}"] + (["--batch"] if batch_only else [])
        self._quiet_if_gone([*argv, str(job_id)])

    def requeue(self, job_id: int) -> None:
        self._run(["scontrol", "requeue", str(job_id)])

    def start_now(self, job_id: int) -> None:
        self._run(["scontrol", "update", f"JobId={job_id}", "StartTime=now"])

    def history(self, job_ids: Iterable[int | str]) -> dict[int | str, JobInfo]:
        ids = [str(i) for i in job_ids]
        if not ids or not shutil.which("sacct"):
            return {}
        try:
            out = self._run(["sacct", "-n", "-P", "-X", "-j", ",".join(ids),
                             "-o", "JobID,JobName,State,ExitCode,NodeList,ElapsedRaw,AllocCPUS,AllocTRES"])
        except (SlurmCommandFailed, ControllerUnavailable):
            # no accounting (slurmdbd) here, or it does not answer: the exit-status file is the record, and a
            # job's end is never held up (or the supervisor ended) by the accounting database
            return {}
        found: dict[int, JobInfo] = {}
        for line in out.splitlines():
            parts = line.split("|")
            if len(parts) < 8 or not re.fullmatch(r"\d+(_\d+)?", parts[0]):
                continue
            code, _, sig = parts[3].partition(":")
            found[job_key(parts[0])] = JobInfo(job_id=job_key(parts[0]), name=parts[1], state=base_state(parts[2]),
                                           node=parts[4], exit_code=int(code or 0), signal=int(sig or 0) or None,
                                           run_time=int(parts[5]) if parts[5].isdigit() else None,
                                           cpus=int(parts[6]) if parts[6].isdigit() else None,
                                           gpus=gpus_in(parts[7]))
        return found

    def _quiet_if_gone(self, argv: list[str]) -> None:
        """scancel of a job that already ended is not an error for us."""
        try:
            self._run(argv)
        except SlurmCommandFailed as exc:
            if "Invalid job id" not in str(exc) and "already completed" not in str(exc):
                raise


def _fields(line: str) -> dict[str, str]:
    """Key=Value pairs of one `scontrol -o` line; a value may hold spaces (up to the next " Key=")."""
    return {m.group(1): m.group(2) for m in _PAIR.finditer(line)}


def array_tasks(spec: str) -> list[int]:
    """The task ids of an ``ArrayTaskId`` field: "3", "0-2", "0,2,5", "0-7:2", "1-3%1" (a throttle)."""
    tasks: list[int] = []
    for part in spec.split("%")[0].split(","):
        first, _, rest = part.partition("-")
        last, _, step = rest.partition(":")
        if first.isdigit() and (not last or last.isdigit()) and (not step or step.isdigit()):
            tasks += range(int(first), int(last or first) + 1, int(step or 1))
    return tasks


def _parse_line(line: str) -> JobInfo | None:
    """The job of one line as the controller wrote it (an array's record as its own id)."""
    return _parse_job(_fields(line))


def _parse_jobs(line: str) -> list[JobInfo]:
    """The jobs of one line: one, or for an array's record each of its tasks as "<array>_<task>" (the tasks
    still waiting share one record; a started task has a line of its own)."""
    f = _fields(line)
    job = _parse_job(f)
    if job is None or not f.get("ArrayJobId", "").isdigit() or not f.get("ArrayTaskId"):
        return [job] if job is not None else []
    return [replace(job, job_id=f"{f['ArrayJobId']}_{t}") for t in array_tasks(f["ArrayTaskId"])]


def _parse_job(f: dict[str, str]) -> JobInfo | None:
    if not f.get("JobId", "").isdigit():
        return None
    state = base_state(f.get("JobState", ""))
    finished = state not in ("PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "COMPLETING", "CONFIGURING")
    code, _, sig = f.get("ExitCode", "").partition(":")
    limit, run_time = parse_duration(f.get("TimeLimit")), parse_duration(f.get("RunTime"))
    left = max(0, limit - run_time) if limit is not None and run_time is not None and state == "RUNNING" else None
    node = f.get("BatchHost") or f.get("NodeList") or ""
    reason = f.get("Reason", "")
    # A PENDING job's StartTime is a forecast, and a job cancelled while pending (no node) gets its end time there.
    started = state != "PENDING" and node not in ("", "(null)", "None Assigned")
    return JobInfo(job_id=int(f["JobId"]), name=f.get("JobName", ""), state=state,
                   reason="" if reason in ("None", "(null)") else reason,
                   node="" if node in ("(null)", "None Assigned") or state == "PENDING" else node,
                   exit_code=int(code) if finished and code.isdigit() else None,
                   signal=(int(sig) or None) if finished and sig.isdigit() else None,
                   time_left=left, time_limit=limit, restarts=int(f.get("Restarts", "0") or 0),
                   start=_epoch(f.get("StartTime")) if started else None, run_time=run_time,
                   cpus=int(f["NumCPUs"]) if f.get("NumCPUs", "").isdigit() else None,
                   gpus=_gpus(f))


def _gpus(f: dict[str, str]) -> int:
    """The job's GPUs: what it was given (AllocTRES since Slurm 23.02, TRES before), else what it asked for
    (ReqTRES, TresPerNode), as a waiting job's AllocTRES is "(null)" and its TRES may leave the GPUs out."""
    for key in ("AllocTRES", "TRES", "ReqTRES", "TresPerNode"):
        count = gpus_in(f.get(key, ""))
        if count:
            return count
    return 0


def _epoch(stamp: str | None) -> float | None:
    """Slurm prints times in the controller host's local time, without a zone ("2026-11-23T16:54:12")."""
    try:
        return time.mktime(time.strptime(stamp or "", "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None  # "Unknown", "None"

