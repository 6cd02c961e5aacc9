"""The Slurm backend of the shift loop: each agent turn is a batch job running the same wrapper as tmux does.

A turn's files sit beside the wrapper in ``shifts/<n>/``: ``t<turn>.sbatch`` (exactly what was submitted),
``t<turn>.log`` (the job's output, appended across requeues: the run directory is on the shared filesystem, so
the log streams there for the TUI and ``nightshift log -f``), ``t<turn>.job.json`` (the batch script's own exit
record) and ``t<turn>.walltime`` (written when the USR1 warning arrives). Job states come from one batched
poller; each change is queued for the loop as a ``slurm.job_changed`` event (``take_changes``). A job that
ends by itself without the agent's exit status is either a clean end (TIMEOUT, PREEMPTED: the shift ends and
the next continues from the notes) or a failure of the job (node failure, the script failing before the agent
started), which is resubmitted up to ``[slurm] max_job_retries`` times.
"""
from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any

from nightshift.hpc.accounting import job_usage
from nightshift.hpc.client import make_client
from nightshift.hpc.interface import SlurmClient, SubmitOptions
from nightshift.hpc.errors import ControllerUnavailable
from nightshift.hpc import array
from nightshift.hpc.jobs import CLEAN_ENDS, JOB_FAILURES, JobInfo, job_key
from nightshift.hpc.poller import JobPoller
from nightshift.hpc.script import BatchJob, read_status, write_script
from nightshift.supervisor.backends.base import LaunchSpec, write_wrapper

SUBMIT_PATIENCE = 600.0  # seconds a launch keeps retrying a controller that does not answer
VANISH_GRACE = 30.0  # seconds a job may be gone from the queue before its missing exit record counts


def job_name(run_id: str, spec_name: str) -> str:
    """Deterministic, so a restarted supervisor finds the job instead of submitting it twice."""
    return f"ns-{run_id}-{spec_name}"


def job_event(job_id: int, info: JobInfo | None, **extra: Any) -> dict[str, Any]:
    """The data of one ``slurm.job_changed`` event: all the TUI and ``status`` show of a job (they never ask
    Slurm themselves). ``info`` None: the controller forgot the job."""
    data: dict[str, Any] = {"job_id": job_id}
    if info is not None:
        data.update(state=info.state, reason=info.reason, node=info.node, exit_code=info.exit_code,
                    time_left=info.time_left, restarts=info.restarts, summary=info.summary(), start=info.start,
                    time_limit=info.time_limit, run_time=info.run_time, cpus=info.cpus, gpus=info.gpus)
    elif "core_hours" in extra or not extra:
        data.update(state="GONE", summary=f"job {job_id} is no longer known to the controller")
    data.update(extra)
    return data


class SlurmBackend:
    kind = "slurm"

    def __init__(self, config, run, client: SlurmClient | None = None):
        self.config, self.slurm, self.run = config, config.slurm, run
        self.client = client or make_client(self.slurm.client)
        self.poller = JobPoller(self.client, interval=self.slurm.poll_interval)
        self._changes: list[dict[str, Any]] = []
        self._ended: dict[int, dict[str, Any]] = {}  # job id -> how it ended (for describe_end)
        self._seen: dict[int, float | None] = {}  # jobs the controller showed us -> when they vanished
        self._accounted: set[int] = set()  # jobs whose spending is recorded (in their last slurm.job_changed)

    # ----- files of a turn --------------------------------------------------------------------------
    @staticmethod
    def _files(wrapper: Path) -> dict[str, Path]:
        stem = wrapper.with_suffix("")  # shifts/<n>/t<turn>
        return {"script": stem.with_suffix(".sbatch"), "status": stem.with_suffix(".job.json"),
                "signal": stem.with_suffix(".walltime")}

    def _batch_job(self, spec: LaunchSpec) -> BatchJob:
        files = self._files(spec.wrapper)
        return BatchJob(job_name=job_name(spec.run_id, spec.name), work=f"bash {shlex.quote(str(spec.wrapper))}",
                        workdir=spec.cwd, log_file=spec.log_file, status_file=files["status"],
                        signal_file=files["signal"],
                        description=f"shift {spec.shift} turn {spec.turn} of run {spec.run_id}")

    # ----- the Backend protocol --------------------------------------------------------------------
    def launch(self, spec: LaunchSpec) -> dict[str, Any]:
        write_wrapper(spec)
        job = self._batch_job(spec)
        script = write_script(self.slurm, job, self._files(spec.wrapper)["script"])  # also a retry's, for a task
        task = array.claim(self.run.root, spec.shift, spec.turn, spec.wrapper, spec.log_file)
        if task is not None:  # a lane's first turn: its task of the fleet's array runs it; nothing is submitted
            return self._task_target(task, spec)
        job_id = self._submit(script, job.job_name)
        self.poller.watch(job_id)
        return self._target(job_id, spec, attempt=1)

    def _task_target(self, task: dict[str, Any], spec: LaunchSpec) -> dict[str, Any]:
        """The turn's target when a task of the fleet's array runs it: the task's own exit record and walltime
        mark (the turn's log is the lane's, as for any job)."""
        key = job_key(task["job_id"])
        self.poller.watch(key)
        return {**self._target(key, spec, attempt=1), "array_id": task["array_id"], "task": task["task"],
                "status_file": task["status_file"], "signal_file": task["signal_file"]}

    def _submit(self, script: Path, name: str) -> int:
        """Submit, waiting out a controller that does not answer (the run waits; it does not die)."""
        deadline = time.monotonic() + SUBMIT_PATIENCE
        while True:
            try:
                return self.client.submit(script, SubmitOptions(job_name=name))
            except ControllerUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(self.slurm.poll_interval)

    def _target(self, job_id: int, spec: LaunchSpec, attempt: int) -> dict[str, Any]:
        files = self._files(spec.wrapper)
        return {"backend": "slurm", "job_id": job_id, "job_name": job_name(spec.run_id, spec.name), "attempt": attempt,
                "script": str(files["script"]), "log": str(spec.log_file), "status_file": str(files["status"]),
                "signal_file": str(files["signal"]), "wrapper": str(spec.wrapper),
                # a batch turn has no terminal to attach to: follow its log
                "attach": ["tail", "-n", "+1", "-f", str(spec.log_file)]}

    def find(self, spec: LaunchSpec) -> dict[str, Any] | None:
        task = array.claimed(self.run.root, spec.shift, spec.turn)
        if task is not None:  # taken before a crash: the task runs (or ran) this turn
            return self._task_target(task, spec)
        name = job_name(spec.run_id, spec.name)
        try:
            live = [j for j in self.client.query(prefix=name).values() if j.name == name and not j.terminal]
        except ControllerUnavailable:
            return None
        if not live:
            return None
        job_id = max(j.job_id for j in live)
        self.poller.watch(job_id)
        return self._target(job_id, spec, attempt=1)

    def is_alive(self, target: dict[str, Any]) -> bool:
        job_id = job_key(target["job_id"])
        self.poller.watch(job_id)  # a no-op when watched already; adopts a target after a restart
        for change in self.poller.poll():
            self._record_change(change.job_id, change.new, target, change.old)
        info = self.poller.get(job_id)
        if info is not None:
            self._seen[job_id] = None
            if not info.terminal:
                return True
        elif job_id in self._ended:
            return False
        elif read_status(Path(target["status_file"])) is None:
            if self.poller.unavailable or job_id not in self._seen:
                return True  # not seen yet, or the controller is away: no news is not an ending
            gone = self._seen[job_id] or time.monotonic()
            self._seen[job_id] = gone
            if time.monotonic() - gone < VANISH_GRACE:
                return True  # the exit record may lag on a shared filesystem
            info = self.client.history([job_id]).get(job_id)  # accounting, where it exists
        return not self._job_over(target, info)

    def _job_over(self, target: dict[str, Any], info: JobInfo | None) -> bool:
        """The job ended: retry a failure of the job itself (bounded), else report the turn over."""
        job_id = job_key(target["job_id"])
        status = read_status(Path(target["status_file"])) or {}
        state = info.state if info else ("COMPLETED" if status.get("exit") == 0 else "UNKNOWN")
        wrapper = Path(target["wrapper"])
        agent_exited = wrapper.with_suffix(".exit").exists()
        agent_started = wrapper.with_suffix(".started").exists()
        failed = not agent_exited and (state in JOB_FAILURES - {"FAILED"} or (state == "FAILED" and not agent_started))
        attempt = int(target.get("attempt", 1))
        if failed and attempt <= self.slurm.max_job_retries:
            self.poller.unwatch(job_id)
            new_id = self._submit(Path(target["script"]), target["job_name"])
            self.poller.watch(new_id)
            if "task" in target:  # an array task failed: its retry is the lane's own job, with the turn's own files
                files = self._files(Path(target["wrapper"]))
                target.update(status_file=str(files["status"]), signal_file=str(files["signal"]))
            self._queue(new_id, None, target, retry=attempt, replaces=job_id,
                        message=f"job {job_id} ended {state} before the agent finished; resubmitted as {new_id} "
                                f"(retry {attempt} of {self.slurm.max_job_retries})")
            target.update(job_id=new_id, attempt=attempt + 1)
            return False
        self._ended[job_id] = {"state": state, "reason": info.reason if info else "", "exit": status.get("exit"),
                               "clean": state in CLEAN_ENDS, "agent_exited": agent_exited,
                               "job_failed": failed, "vanished": info is None and not status}
        return True

    def describe_end(self, target: dict[str, Any]) -> dict[str, Any] | None:
        """How the turn's job ended when the agent left no exit status: {"reason": "walltime" | "preempted" |
        "job_failed" | "vanished" | "cancelled", "error": one line}, or None when unknown."""
        end = self._ended.get(job_key(target["job_id"]))
        if end is None:
            return None
        state, job_id, log = end["state"], target["job_id"], target["log"]
        if end["vanished"]:
            return {"reason": "vanished", "error": f"job {job_id} left the queue without an exit record; see {log}"}
        if state in ("TIMEOUT", "DEADLINE"):
            return {"reason": "walltime", "error": f"job {job_id} reached its walltime ([slurm] time)"}
        if state == "PREEMPTED":
            return {"reason": "preempted", "error": f"job {job_id} was preempted"}
        if state == "CANCELLED":
            return {"reason": "cancelled", "error": f"job {job_id} was cancelled"}
        if end["job_failed"]:
            return {"reason": "job_failed", "error": f"job {job_id} ended {state} (exit {end['exit']}) before the "
                                                     f"agent finished, after {self.slurm.max_job_retries} "
                                                     f"resubmission(s); see {log}"}
        return {"reason": "job_ended", "error": f"job {job_id} ended {state}; see {log}"}

    def terminate(self, target: dict[str, Any]) -> None:
        self.client.cancel(job_key(target["job_id"]))

    def send_text(self, target: dict[str, Any], text: str) -> bool:
        return False  # a batch job has no terminal to type into; push-backs go by the next turn or the Stop hook

    def capture(self, target: dict[str, Any], lines: int = 60) -> str:
        try:
            return "\n".join(Path(target["log"]).read_text(errors="replace").splitlines()[-lines:])
        except (FileNotFoundError, KeyError):
            return ""

    def attach_command(self, target: dict[str, Any]) -> list[str] | None:
        return list(target["attach"]) if target.get("attach") else None

    # ----- job state changes, for slurm.job_changed events -------------------------------------------
    def _record_change(self, job_id: int, info: JobInfo | None, target: dict[str, Any],
                       old: JobInfo | None = None) -> None:
        usage = None
        if (info is None or info.terminal) and job_id not in self._accounted:
            # The job's end: what it spent of the allocation ([limits] max_core_hours), once per job.
            self._accounted.add(job_id)
            ended = (read_status(Path(target["status_file"])) or {}).get("ended") if target.get("status_file") else None
            acct = self.client.history([job_id]).get(job_id)
            usage = job_usage(info or old, acct, ended)
            if info is None:
                # It left the queue between two polls: its end as Slurm's accounting recorded it, else as the job's
                # own exit record says, never the live state last seen (a job seen PENDING that then ran and
                # completed must not read PENDING).
                info = acct if acct is not None and acct.terminal else self._ended_from_status(job_id, target, old)
        self._queue(job_id, info, target, **(usage or {}))

    @staticmethod
    def _ended_from_status(job_id: int, target: dict[str, Any], old: JobInfo | None) -> JobInfo | None:
        """Without accounting: the end the batch script recorded (its exit status), or None when it left none."""
        status = read_status(Path(target["status_file"])) if target.get("status_file") else None
        if not status or status.get("exit") is None:
            return None
        code = int(status["exit"])
        return JobInfo(job_id=job_id, name=old.name if old else "", state="COMPLETED" if code == 0 else "FAILED",
                       node=old.node if old else "",
                       exit_code=code, cpus=old.cpus if old else None, gpus=old.gpus if old else 0)

    def _queue(self, job_id: int, info: JobInfo | None, target: dict[str, Any], **extra: Any) -> None:
        data = job_event(job_id, info, **extra)
        if Path(target.get("signal_file", "/nonexistent")).exists():
            data["walltime_signal"] = True
        self._changes.append(data)

    def take_changes(self) -> list[dict[str, Any]]:
        """Job changes since the last call, each the data of one ``slurm.job_changed`` event."""
        changes, self._changes = self._changes, []
        return changes

    def settle(self, timeout: float = 10.0) -> None:
        """Before the run ends: poll until the run's jobs show their end (or ``timeout``), for the last events."""
        deadline = time.monotonic() + timeout
        while True:
            for change in self.poller.poll(force=True):
                self._record_change(change.job_id, change.new, {}, change.old)
            live = [j for j in self.poller.watched if (info := self.poller.get(j)) and not info.terminal]
            if not live or self.poller.unavailable or time.monotonic() >= deadline:
                return
            time.sleep(1.0)

    def job_state(self, target: dict[str, Any]) -> JobInfo | None:
        """The last known state of the turn's job (for status lines), without asking the controller."""
        return self.poller.get(job_key(target["job_id"]))
