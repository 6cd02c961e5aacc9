"""A run as a chain of batch jobs (`nightshift submit`): the files of the chain and the operations on it.

Every job of a run's chain has the same name, ``ns-<run id>-sup``, and is submitted with
``--dependency=singleton``: Slurm runs at most one job of that name at a time, so the chain can never fork into
two live supervisors. Each job queues its successor as soon as it starts; the successor waits until the current
job ends, however it ends (finished, killed at the limit with or without the USR1 warning handled, node
failure), and resumes from the event log. A job whose run has finished cancels its successor.

`nightshift stop` and a job queuing its continuation are serialized by a lock in the chain's folder: stop marks
the chain ("stopping") and cancels the queued jobs under it, and a job queues a continuation only under it and only
while the chain is not marked. So a job that hears its walltime warning, or is requeued, after a stop queues
nothing (it did once, under load: a third job after the stop had cancelled the second).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Any, Iterator

from nightshift.hpc.interface import SlurmClient, SubmitOptions
from nightshift.supervisor.config.slurm import SlurmConfig
from nightshift.hpc.jobs import JobInfo
from nightshift.hpc.script import BatchJob, write_script
from nightshift.supervisor.run.chain_record import append_record, read_chain, record_path
from nightshift.supervisor.run.own_python import python_line
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import load_state

STOPPING = "stopping"  # the record's mark of `nightshift stop`: no continuation is queued after it


def chain_name(run: RunPaths) -> str:
    return f"ns-{run.run_id}-sup"


def chain_dir(run: RunPaths) -> Path:
    path = run.root / "slurm"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def chain_files(run: RunPaths) -> dict[str, Path]:
    d = chain_dir(run)
    return {"script": d / "supervisor.sbatch", "log": d / "chain.log", "record": d / "chain.jsonl",
            "status": d / "job.json", "signal": d / "walltime"}


def chain_job(run: RunPaths) -> BatchJob:
    """What each job of the chain runs; nothing is created (a preview renders it before the run exists)."""
    d = run.root / "slurm"
    work = python_line("nightshift.hpc.chain_job", str(run.root))  # -E -P: the workspace (the job's folder) is not imported
    return BatchJob(job_name=chain_name(run), work=work, workdir=run.workspace, log_file=d / "chain.log",
                    status_file=d / "job.json", signal_file=d / "walltime", forward_usr1=True,
                    description=f"the supervisor of run {run.run_id} (one job of a self-continuing chain)")


def write_chain_script(run: RunPaths, slurm: SlurmConfig) -> Path:
    return write_script(slurm, chain_job(run), chain_files(run)["script"])


def record(run: RunPaths, what: str, **data: Any) -> None:
    """One line in slurm/chain.jsonl: the chain's own history (submitted, started, continued, cancelled)."""
    append_record(run.root, what, **data)


def read_record(run: RunPaths) -> list[dict[str, Any]]:
    return read_chain(run.root)


@contextlib.contextmanager
def chain_lock(run: RunPaths) -> Iterator[None]:
    """Held while the chain changes shape: a job queuing its continuation, `nightshift stop` cancelling them.
    flock reaches across hosts on NFS; where the file system has no locks, ensure_successor's check after its
    submit still cancels what a concurrent stop could not see."""
    fd = os.open(chain_dir(run) / "chain.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):  # ENOLCK / EOPNOTSUPP: go on unlocked (see above)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def withheld(run: RunPaths) -> str | None:
    """Why the chain must not be continued now (None when it may): a stop marked it, or the run has ended."""
    if any(r.get("what") == STOPPING for r in read_record(run)):
        return "nightshift stop"
    state = load_state(run.root)[0]
    return f"the run finished ({state.get('outcome')})" if state["phase"] == "finished" else None


def chain_jobs(run: RunPaths, client: SlurmClient) -> list[JobInfo]:
    """The chain's jobs the controller still knows, oldest first (one query)."""
    name = chain_name(run)
    return sorted((j for j in client.query(prefix=name).values() if j.name == name), key=lambda j: j.job_id)


def submit_link(run: RunPaths, client: SlurmClient, by: str) -> int:
    """Queue one more job of the chain (it starts once no other job of the chain is alive)."""
    job_id = client.submit(chain_files(run)["script"], SubmitOptions(dependency="singleton"))
    record(run, "submitted", job_id=job_id, by=by)
    return job_id


def ensure_successor(run: RunPaths, client: SlurmClient, me: int) -> int | None:
    """The queued successor of job ``me``, submitted when there is none yet; None when the chain must not go on
    (see withheld): then nothing is queued, and the record says why."""
    with chain_lock(run):
        why = withheld(run)
        if why:
            record(run, "not_continued", job_id=me, why=why)
            return None
        waiting = [j for j in chain_jobs(run, client) if j.job_id != me and not j.terminal]
        if waiting:
            return waiting[-1].job_id
        successor = submit_link(run, client, by=f"job {me}")
    if withheld(run):  # a stop the lock could not hold off (no locks on this file system): undo our submit
        cancel_chain(run, client, keep=me, why="nightshift stop (after a concurrent continuation)")
        return None
    return successor


def cancel_chain(run: RunPaths, client: SlurmClient, keep: int | None = None, why: str = "stopped") -> list[int]:
    """Cancel every live job of the chain (but ``keep``); the ids cancelled."""
    cancelled = []
    for job in chain_jobs(run, client):
        if job.job_id != keep and not job.terminal:
            client.cancel(job.job_id)
            cancelled.append(job.job_id)
    if cancelled:
        record(run, "cancelled", job_ids=cancelled, why=why)
    return cancelled


def has_chain(run: RunPaths) -> bool:
    """Was this run submitted as a chain of batch jobs (`nightshift submit`)?"""
    return record_path(run.root).exists()


def stop_chain(run: RunPaths, client: SlurmClient) -> tuple[list[int], int | None]:
    """`nightshift stop` on a submitted run: mark the chain stopped and cancel the queued jobs, so no
    continuation starts or is queued again, and leave the running one (if any) to finish the run on the stop
    command; (cancelled ids, running job id or None)."""
    with chain_lock(run):
        record(run, STOPPING, by="nightshift stop")
        running = [j.job_id for j in chain_jobs(run, client) if j.running]
        keep = running[-1] if running else None
        return cancel_chain(run, client, keep=keep, why="nightshift stop"), keep


def attach_argv(run: RunPaths, client: SlurmClient) -> list[str] | None:
    """srun into the running job of the chain and attach to the agent's tmux server there, or None."""
    from nightshift.supervisor.backends.base import AGENT_SESSION, socket_for  # not .tmux: no libtmux under the TUI

    running = [j for j in chain_jobs(run, client) if j.running]
    if not running:
        return None
    return ["srun", f"--jobid={running[-1].job_id}", "--overlap", "--pty", "tmux", "-L", socket_for(run.run_id),
            "attach", "-t", AGENT_SESSION]
