"""What a finished job spent of the allocation: core-hours and GPU-hours, from the job's own records.

Slurm's accounting (sacct) is the record where it exists. Without it (no slurmdbd), the controller's last view of
the job stands in: its run time times its allocated CPUs (and GPUs), and the result says so, because that
figure is ours and not the site's. A job that left the queue before we saw it end is counted from its start to
the end its batch script wrote into its status file.
"""
from __future__ import annotations

from typing import Any

from nightshift.hpc.jobs import JobInfo

FROM_SACCT = "sacct"
FROM_ELAPSED = "elapsed x allocated CPUs (no accounting)"


def job_usage(last: JobInfo | None, acct: JobInfo | None, ended: float | None = None) -> dict[str, Any] | None:
    """{"core_hours", "gpu_hours", "elapsed", "cpus", "gpus", "accounting"} for one ended job, or None when
    nothing is known of it (it never ran as far as any record says)."""
    if acct is not None and acct.run_time is not None and acct.cpus is not None:
        elapsed, cpus, gpus, source = acct.run_time, acct.cpus, acct.gpus, FROM_SACCT
    elif last is not None and last.cpus is not None:
        elapsed = last.run_time or 0
        if not last.terminal and last.start is not None and ended is not None:
            elapsed = max(elapsed, int(ended - last.start))  # vanished while running: until the script's end
        cpus, gpus, source = last.cpus, last.gpus, FROM_ELAPSED
    else:
        return None
    return {"core_hours": round(elapsed * cpus / 3600, 6), "gpu_hours": round(elapsed * gpus / 3600, 6),
            "elapsed": elapsed, "cpus": cpus, "gpus": gpus, "accounting": source}
