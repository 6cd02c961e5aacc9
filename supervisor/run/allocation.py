"""What a Slurm run has spent of its allocation, from the fold alone: core-hours and GPU-hours of the ended jobs
(recorded once per job in its last ``slurm.job_changed``), plus the job running now (its start times its CPUs),
and the burn rate. Shared by the budget (shift/decide.py), ``nightshift status`` and the TUI, so all three
say the same figure; none of them asks Slurm.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supervisor.run.state import SLURM_ENDS


@dataclass(frozen=True)
class Allocation:
    core_hours: float
    gpu_hours: float
    cores_now: int  # CPUs of the job running now (0 when none runs)
    gpus_now: int
    rate: float | None  # core-hours per hour of wall clock since the first job started; None too early to say
    accounting: str  # where the ended jobs' figures come from ("sacct", "elapsed x allocated CPUs ...")

    @property
    def used(self) -> bool:
        return self.core_hours > 0 or self.cores_now > 0


def allocation(state: dict[str, Any], now: float) -> Allocation:
    job = state.get("slurm") or {}
    core, gpu = float(state.get("core_hours") or 0.0), float(state.get("gpu_hours") or 0.0)
    cores_now = gpus_now = 0
    if job.get("start") and "core_hours" not in job and job.get("state") not in SLURM_ENDS and not job.get("gone"):
        hours = max(0.0, now - float(job["start"])) / 3600  # the job running now, not yet accounted
        cores_now, gpus_now = int(job.get("cpus") or 0), int(job.get("gpus") or 0)
        core, gpu = core + hours * cores_now, gpu + hours * gpus_now
    since = state.get("slurm_first_start")
    wall = (now - float(since)) / 3600 if since else 0.0
    rate = core / wall if wall > 1 / 60 else None
    return Allocation(core, gpu, cores_now, gpus_now, rate, " + ".join(state.get("accounting") or []))


def describe(alloc: Allocation, max_core_hours: float = 0.0, max_gpu_hours: float = 0.0) -> str:
    """'1.25 core-h of 10 · 0.8 core-h/h · 8 cores now (sacct)' for status lines and the TUI."""
    text = f"{alloc.core_hours:.2f} core-h" + (f" of {max_core_hours:g}" if max_core_hours else "")
    if alloc.gpu_hours or max_gpu_hours:
        text += f", {alloc.gpu_hours:.2f} GPU-h" + (f" of {max_gpu_hours:g}" if max_gpu_hours else "")
    if alloc.rate is not None:
        text += f" · {alloc.rate:.2f} core-h/h"
    if alloc.cores_now:
        text += f" · {alloc.cores_now} core{'s' if alloc.cores_now != 1 else ''} now"
    if alloc.accounting:
        text += f" ({alloc.accounting})"
    return text
