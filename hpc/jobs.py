"""What nightshift knows about one Slurm job (JobInfo) and the vocabulary of job states."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

# States after which the job will not run again (unless requeued by hand).
TERMINAL = frozenset({"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "PREEMPTED", "NODE_FAIL", "OUT_OF_MEMORY",
                      "BOOT_FAIL", "DEADLINE", "REVOKED"})
RUNNING = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SIGNALING", "STAGE_OUT", "RESIZING"})
# Ends of a job that say nothing about the agent: the shift simply ends there and the next one continues.
CLEAN_ENDS = frozenset({"TIMEOUT", "PREEMPTED", "DEADLINE"})
# Ends caused by the job or its node rather than by the agent: worth a bounded number of resubmissions.
JOB_FAILURES = frozenset({"NODE_FAIL", "BOOT_FAIL", "OUT_OF_MEMORY", "FAILED"})


JobId = "int | str"  # a job's id; an array task's is Slurm's own "<array id>_<task>" (e.g. "1234_0")


def job_key(value: "int | str") -> "int | str":
    """A job id as the controller and the poller know it: a plain job's int, an array task's "<array>_<task>"
    (a task keeps that name from submission on; its own numeric id exists only once it has started)."""
    text = str(value).strip()
    return int(text) if text.isdigit() else text


def parse_duration(text: str | None) -> int | None:
    """Seconds from Slurm's "D-HH:MM:SS", "HH:MM:SS", "MM:SS" or minutes; None for UNLIMITED/INVALID/empty."""
    if not text:
        return None
    text = text.strip()
    match = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+)(?::(\d+))?", text)
    if not match:
        return None
    days, first, second, third = match.groups()
    if third is not None:  # [D-]HH:MM:SS or MM:SS with a day part
        hours, minutes, seconds = int(first or 0), int(second), int(third)
    elif first is not None:  # MM:SS, or D-HH:MM
        hours, minutes, seconds = (int(first), int(second), 0) if days else (0, int(first), int(second))
    else:  # a bare number: minutes (or D-HH)
        hours, minutes, seconds = (int(second), 0, 0) if days else (0, int(second), 0)
    return int(days or 0) * 86400 + hours * 3600 + minutes * 60 + seconds


@dataclass(frozen=True)
class JobInfo:
    job_id: int | str  # see job_key
    name: str
    state: str  # base state word, e.g. PENDING, RUNNING, TIMEOUT (flags like "+" dropped)
    reason: str = ""  # why PENDING, or how it ended (None becomes "")
    node: str = ""
    exit_code: int | None = None  # the batch script's exit status when known
    signal: int | None = None  # the signal that ended it, when one did
    time_left: int | None = None  # seconds, None when unlimited or unknown
    time_limit: int | None = None  # seconds
    restarts: int = 0
    start: float | None = None  # epoch seconds the job started running (None while it waits)
    run_time: int | None = None  # seconds it has run (or ran), as the controller counts it
    cpus: int | None = None  # CPUs allocated (or asked for, while PENDING)
    gpus: int = 0  # GPUs in its allocation (gres/gpu)

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    @property
    def running(self) -> bool:
        return self.state in RUNNING

    @property
    def pending(self) -> bool:
        return self.state in ("PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED")

    def summary(self) -> str:
        """One line for a user: "RUNNING on node12, 0:42:10 left" or "PENDING (Priority)"."""
        parts = [self.state]
        if self.reason and (self.pending or self.terminal):
            parts.append(f"({self.reason})")
        if self.node and not self.pending:
            parts.append(f"on {self.node}")
        if self.running and self.time_left is not None:
            h, rest = divmod(self.time_left, 3600)
            parts.append(f"{h}:{rest // 60:02d}:{rest % 60:02d} left")
        if self.terminal and self.exit_code is not None:
            parts.append(f"exit {self.exit_code}" + (f" signal {self.signal}" if self.signal else ""))
        return " ".join(parts)

    def to_event(self) -> dict:
        return asdict(self)

    def changed_from(self, other: "JobInfo | None") -> bool:
        """A change worth an event: state, reason or node (not the ticking time left)."""
        return other is None or (self.state, self.reason, self.node, self.restarts) != (
            other.state, other.reason, other.node, other.restarts)


def gpus_in(tres: str) -> int:
    """GPUs in a TRES/gres string: "cpu=4,mem=8G,gres/gpu=2", "gres:gpu:2" or "gpu:a100:2" -> 2 (0 when none).

    A TRES string may list the same GPUs twice (``gres/gpu=2,gres/gpu:a100=2``): the untyped count wins."""
    untyped, typed = 0, 0
    for part in re.split(r"[,\s]+", tres or ""):
        match = re.fullmatch(r"(?:gres[/:])?gpu((?::[\w.-]+)*)[=:](\d+)", part.strip())
        if match and match.group(1):
            typed += int(match.group(2))
        elif match:
            untyped += int(match.group(2))
    return untyped or typed


def base_state(text: str) -> str:
    """"CANCELLED by 0" -> CANCELLED, "COMPLETED+" -> COMPLETED."""
    word = text.strip().split()[0] if text.strip() else "UNKNOWN"
    return word.rstrip("+").upper()
