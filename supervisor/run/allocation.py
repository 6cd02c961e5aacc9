"""What a Slurm run has spent of its allocation, from the fold alone: core-hours and GPU-hours of the ended jobs
(recorded once per job in its last ``slurm.job_changed``), plus the job running now (its start times its CPUs),
and the burn rate. Shared by the budget (shift/decide.py), ``nightshift status`` and the TUI, so all three
say the same figure; none of them asks Slurm.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nightshift.supervisor.run.chain_record import read_chain
from nightshift.supervisor.run.state import SLURM_ENDS


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


CHAIN_SOURCE = "elapsed x allocated CPUs of the chain's jobs"


def chain_usage(run_root: Path, now: float) -> tuple[float, int, float | None]:
    """A submitted run (`nightshift submit`): (core-hours, CPUs of the job running now, first start) from the
    chain's own record, where each job writes its start, limit and CPUs when it starts. A job of the chain ends
    before the next starts (they share a name, --dependency=singleton), so each is counted up to the next one's
    start, its "finished" line, or now."""
    records = read_chain(run_root)
    started = [r for r in records if r.get("what") == "started" and r.get("start") and r.get("cpus")]
    ends = {r.get("job_id"): float(r["ts"]) for r in records if r.get("what") == "finished" and r.get("ts")}
    core, cores_now = 0.0, 0
    for i, job in enumerate(started):
        end = float(started[i + 1]["start"]) if i + 1 < len(started) else ends.get(job.get("job_id"))
        if end is None:
            end, cores_now = now, int(job["cpus"])
        core += max(0.0, end - float(job["start"])) * int(job["cpus"]) / 3600
    return core, cores_now, (float(started[0]["start"]) if started else None)


def allocation(state: dict[str, Any], now: float, run_root: Path | None = None) -> Allocation:
    """``run_root`` given: a submitted run's chain jobs count too (its supervisor runs inside them)."""
    job = state.get("slurm") or {}
    core, gpu = float(state.get("core_hours") or 0.0), float(state.get("gpu_hours") or 0.0)
    cores_now = gpus_now = 0
    sources = list(state.get("accounting") or [])
    since = state.get("slurm_first_start")
    if run_root is not None:
        chain_core, chain_now, chain_since = chain_usage(run_root, now)
        if chain_since is not None:
            core, cores_now, since = core + chain_core, chain_now, min(filter(None, (since, chain_since)))
            sources.append(CHAIN_SOURCE)
    if job.get("start") and "core_hours" not in job and job.get("state") not in SLURM_ENDS and not job.get("gone"):
        hours = max(0.0, now - float(job["start"])) / 3600  # the job running now, not yet accounted
        cores_now, gpus_now = int(job.get("cpus") or 0), int(job.get("gpus") or 0)
        core, gpu = core + hours * cores_now, gpu + hours * gpus_now
    wall = (now - float(since)) / 3600 if since else 0.0
    rate = core / wall if wall > 1 / 60 else None
    return Allocation(core, gpu, cores_now, gpus_now, rate, " + ".join(sources))


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
