"""The one interface to Slurm (``SlurmClient``) that both clients implement (hpc/cli_client.py, the CLI;
hpc/pyslurm_client.py, pyslurm), with what they share: submit options, the retry schedule, the job-name prefix.

Every method is one call to the controller. ``query`` returns all of the user's jobs whose name starts with
a prefix (nightshift names its jobs ``ns-...``) in ONE call, whatever the number of jobs.
"""
from __future__ import annotations

import getpass
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Protocol, TypeVar

from nightshift.hpc.errors import ControllerUnavailable
from nightshift.hpc.jobs import JobInfo

JOB_PREFIX = "ns-"
T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """Retry schedule when the controller does not answer: delays between attempts, in seconds."""

    delays: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0)

    def run(self, attempt: Callable[[], T], is_transient: Callable[[Exception], bool],
            on_retry: Callable[[Exception], None] | None = None) -> T:
        for delay in (*self.delays, None):
            try:
                return attempt()
            except Exception as exc:  # noqa: BLE001 - classified just below
                if not is_transient(exc):
                    raise
                if delay is None:
                    raise ControllerUnavailable(
                        f"slurmctld did not answer after {len(self.delays) + 1} tries: {exc}; "
                        "check `scontrol ping` (nightshift waits and retries)") from None
                if on_retry:
                    on_retry(exc)
                time.sleep(delay)
        raise AssertionError("unreachable")


@dataclass(frozen=True)
class SubmitOptions:
    """What is passed beside the script (the script itself holds the resources)."""

    dependency: str = ""  # e.g. "afterany:1234"
    job_name: str = ""  # overrides the script's --job-name; also used to avoid duplicate submissions
    extra_args: tuple[str, ...] = field(default_factory=tuple)


class SlurmClient(Protocol):
    kind: str  # "cli" or "pyslurm"

    def submit(self, script: Path, options: SubmitOptions = SubmitOptions()) -> int:
        """Submit a batch script; the job id. Raises SubmitRejected with Slurm's message verbatim."""

    def query(self, job_ids: Iterable[int] | None = None, prefix: str = JOB_PREFIX) -> dict[int, JobInfo]:
        """The user's jobs named ``prefix*`` (and/or with these ids) still known to the controller, in one call."""

    def cancel(self, job_id: int) -> None: ...

    def signal(self, job_id: int, signal: str = "USR1", batch_only: bool = True) -> None: ...

    def requeue(self, job_id: int) -> None: ...

    def start_now(self, job_id: int) -> None:
        """Make a requeued job eligible at once (Slurm otherwise holds it back ~120 s)."""

    def history(self, job_ids: Iterable[int]) -> dict[int, JobInfo]:
        """How jobs the controller forgot ended, from accounting when it exists (else {})."""


def current_user() -> str:
    return getpass.getuser()
