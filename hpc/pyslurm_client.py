"""The pyslurm client: the same interface as the CLI client, through libslurm (pyslurm's modern API).

Written against what pyslurm 22.5 and 25.11 share: ``Jobs.load()``, ``Job.load(id)``, ``Job.cancel()``,
``.requeue()``, ``.send_signal("SIGUSR1", steps="batch")``, ``.modify(JobSubmitDescription(...))``,
``JobSubmitDescription(script=...).load_sbatch_options()`` and ``.submit()``. A pyslurm build only works against
the Slurm major release it was built for, so ``auto`` uses it only when its version matches the cluster's.
"""
from __future__ import annotations

import functools
import getpass
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable

from nightshift.hpc.interface import JOB_PREFIX, Backoff, SubmitOptions
from nightshift.hpc.errors import SlurmCommandFailed, SubmitRejected
from nightshift.hpc.jobs import JobInfo, base_state, gpus_in

OWN_OPTIONS = re.compile(r"^#SBATCH\s+--(partition|time)[= ](.+)$", re.M)
TRANSIENT = re.compile(r"Unable to contact slurm controller|Socket timed out|Connection refused|"
                       r"Zero Bytes were transmitted|Communication connection failure|Unexpected message", re.I)


def _release(text: str) -> tuple[int, int] | None:
    """(22, 5) from "22.5.3", "22.05.8" or "slurm 22.05.8"."""
    match = re.search(r"(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def cluster_release() -> tuple[int, int] | None:
    """The Slurm release of this machine's client commands (the cluster's, on a login node)."""
    for tool in ("sinfo", "sbatch"):
        if shutil.which(tool):
            result = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
            return _release(result.stdout) if result.returncode == 0 else None
    return None


@functools.lru_cache(maxsize=1)
def pyslurm_problem() -> str | None:
    """Why pyslurm cannot be used here, or None when an importable build matches the cluster's Slurm.

    The import is tried in a child process first: libslurm ends the whole process (not an exception) when
    it finds no slurm.conf.
    """
    if importlib.util.find_spec("pyslurm") is None:
        return "pyslurm is not installed (no PyPI release matches most clusters; build it against your Slurm)"
    theirs = cluster_release()
    if theirs is None:
        return "the Slurm client commands do not answer `sinfo --version` (no Slurm configured here)"
    probe = subprocess.run([sys.executable, "-c", "import pyslurm; print(pyslurm.__version__)"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
        return f"pyslurm does not import here ({last})"
    version = probe.stdout.strip()
    mine = _release(version)
    if mine != theirs:
        return f"pyslurm {version} was built for Slurm {mine[0]}.{mine[1]:02d}, the cluster runs " \
               f"{theirs[0]}.{theirs[1]:02d}" if mine else f"pyslurm's version {version!r} is not a Slurm release"
    return None


class PyslurmClient:
    kind = "pyslurm"

    def __init__(self, backoff: Backoff = Backoff(), user: str | None = None):
        import pyslurm

        self.pyslurm, self.backoff, self.user = pyslurm, backoff, user or getpass.getuser()
        self.calls = 0

    def _call(self, what: str, fn):
        def attempt():
            self.calls += 1
            return fn()

        try:
            return self.backoff.run(attempt, lambda exc: isinstance(exc, self.pyslurm.RPCError)
                                    and bool(TRANSIENT.search(str(exc))))
        except self.pyslurm.RPCError as exc:
            raise SlurmCommandFailed(f"{what} failed: {exc}") from None

    def submit(self, script: Path, options: SubmitOptions = SubmitOptions()) -> int:
        if options.extra_args:
            raise SubmitRejected("the pyslurm client takes no extra sbatch arguments; put them in [slurm] extra")
        desc = self._describe(Path(script))
        desc.load_environment()  # like sbatch: the job inherits this environment (secrets stay out of the script)
        if options.job_name:
            desc.name = options.job_name
        if options.dependency:
            desc.dependencies = options.dependency

        def attempt():
            self.calls += 1
            if options.job_name:  # a retry after a lost answer: the first try may have been accepted
                live = [j for j in self.query(prefix=options.job_name).values()
                        if j.name == options.job_name and not j.terminal]
                if live:
                    return live[0].job_id
            return desc.submit()

        try:
            return int(self.backoff.run(attempt, lambda exc: isinstance(exc, self.pyslurm.RPCError)
                                        and bool(TRANSIENT.search(str(exc)))))
        except (self.pyslurm.RPCError, ValueError, TypeError) as exc:
            raise SubmitRejected(f"Batch job submission failed: {exc}") from None

    def _describe(self, script: Path):
        """A JobSubmitDescription from the script's #SBATCH lines, through pyslurm's own parser, except two
        options it mishandles in 22.5 and 25.11: --partition (sets a missing attribute) and a bare --time=N
        (a string where it wants an int)."""
        text = script.read_text()
        own: dict[str, str] = {}

        def hide(match: re.Match) -> str:
            own[match.group(1)] = match.group(2).strip()
            return "# (set by nightshift) " + match.group(0)

        filtered = OWN_OPTIONS.sub(hide, text)
        with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=script.parent, delete=False) as tmp:
            tmp.write(filtered)
        try:
            desc = self.pyslurm.JobSubmitDescription(script=tmp.name)
            desc.load_sbatch_options()
        finally:
            os.unlink(tmp.name)
        desc.script = str(script)  # what is submitted is the script as written
        if "partition" in own:
            desc.partitions = own["partition"]
        if "time" in own:
            desc.time_limit = int(own["time"]) if own["time"].isdigit() else own["time"]
        return desc

    def query(self, job_ids: Iterable[int] | None = None, prefix: str = JOB_PREFIX) -> dict[int, JobInfo]:
        wanted = set(job_ids or ())
        loaded = self._call("loading jobs", self.pyslurm.Jobs.load)
        jobs: dict[int, JobInfo] = {}
        for job in _each_job(loaded):
            name = job.name or ""
            if job.id in wanted or (prefix and name.startswith(prefix) and job.user_name == self.user):
                jobs[job.id] = _to_info(job)
        return jobs

    def _job(self, job_id: int):
        return self.pyslurm.Job(job_id)

    def cancel(self, job_id: int) -> None:
        self._quiet_if_gone("scancel", lambda: self._job(job_id).cancel())

    def signal(self, job_id: int, signal: str = "USR1", batch_only: bool = True) -> None:
        name = signal if signal.startswith("SIG") else f"SIG{signal}"  # pyslurm wants "SIGUSR1"
        steps = "batch" if batch_only else "all"
        self._quiet_if_gone("signal", lambda: self._job(job_id).send_signal(name, steps=steps))

    def requeue(self, job_id: int) -> None:
        self._call("requeue", lambda: self._job(job_id).requeue())

    def start_now(self, job_id: int) -> None:
        changes = self.pyslurm.JobSubmitDescription(begin_time="now")
        self._call("update", lambda: self._job(job_id).modify(changes))

    def history(self, job_ids: Iterable[int]) -> dict[int, JobInfo]:
        return {}  # pyslurm.db needs slurmdbd; the exit-status file in the run directory is the record

    def _quiet_if_gone(self, what: str, fn) -> None:
        try:
            self._call(what, fn)
        except SlurmCommandFailed as exc:
            if "Invalid job id" not in str(exc) and "already completed" not in str(exc):
                raise


def _each_job(loaded):
    """Jobs.load() is keyed by cluster in newer pyslurm (a MultiClusterMap); iterating yields the jobs."""
    values = loaded.values() if hasattr(loaded, "values") else loaded
    for item in values:
        if hasattr(item, "id"):
            yield item
        else:  # {cluster: {id: job}}
            yield from item.values()


def _to_info(job) -> JobInfo:
    state = base_state(str(job.state or "UNKNOWN"))
    limit = job.time_limit  # minutes, None when unlimited
    left = None
    if limit and state == "RUNNING" and job.start_time:
        left = max(0, int(job.start_time + limit * 60 - time.time()))
    finished = state not in ("PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "COMPLETING", "CONFIGURING")
    reason = str(job.state_reason or "")
    return JobInfo(job_id=int(job.id), name=job.name or "", state=state,
                   reason="" if reason in ("None", "(null)") else reason,
                   node=job.batch_host or job.allocated_nodes or "" if state != "PENDING" else "",
                   exit_code=job.exit_code if finished else None,
                   signal=(job.exit_code_signal or None) if finished else None,
                   time_left=left, time_limit=limit * 60 if limit else None,
                   restarts=int(job.requeue_count or 0),
                   start=float(job.start_time) if job.start_time and state != "PENDING" else None,
                   run_time=_int_or_none(getattr(job, "run_time", None)),
                   cpus=_int_or_none(getattr(job, "cpus", None)),
                   gpus=gpus_in(str(getattr(job, "tres_alloc_str", None) or getattr(job, "gres_per_node", None) or "")))


def _int_or_none(value) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
