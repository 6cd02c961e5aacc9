"""What the TUI shows of a Slurm run, from what the supervisor recorded and nothing else: the fold of its
``slurm.job_changed`` events (job id, state with Slurm's reason, node, start, time limit, CPUs, what each ended
job spent) and, for a run submitted as a chain (`nightshift submit`), the chain's own record
(``slurm/chain.jsonl``, read incrementally through supervisor/run/chain_record.py, the one parser of it). The TUI
never asks slurmctld: a dashboard of twenty runs costs the controller nothing.

Pure functions of the state and a clock, so the snapshot tests are deterministic.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from nightshift.supervisor.run.allocation import allocation, describe
from nightshift.supervisor.run.chain_record import read_chain

RUNNING = ("RUNNING", "COMPLETING", "CONFIGURING", "SIGNALING", "STAGE_OUT", "RESIZING")
# What the loop does after a batch turn's job ended by itself (supervisor/shift/decide.py SESSION_ENDERS).
STOP_ACTIONS = {
    "walltime": "nightshift started a fresh shift that continues from the notes",
    "preempted": "nightshift started a fresh shift that continues from the notes",
    "cancelled": "the turn ended; nightshift decided on the next shift",
    "job_failed": "resubmissions spent ([slurm] max_job_retries); a fresh shift continues",
    "vanished": "no exit record; a fresh shift continues (see the turn's log)",
    "job_ended": "a fresh shift continues from the notes",
}


def hms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(max(0, seconds))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}"


def state_text(job: dict[str, Any]) -> str:
    """PENDING (Priority), RUNNING on node12, COMPLETING on node12, TIMEOUT (TimeLimit), submitted."""
    state, reason, node = job.get("state") or "", job.get("reason") or "", job.get("node") or ""
    if not state:
        return "submitted"
    if state == "PENDING":
        return f"PENDING ({reason})" if reason else "PENDING"
    if state in RUNNING:
        return f"{state} on {node}" if node else state
    text = f"{state} ({reason})" if reason and reason != state else state
    return text + (" · left the queue" if job.get("gone") else "")


def times(job: dict[str, Any], now: float) -> tuple[float | None, float | None]:
    """(elapsed, time left before the walltime) in seconds; the left part only while the job runs."""
    start, limit = job.get("start"), job.get("time_limit")
    if job.get("state") in RUNNING and start:
        elapsed = max(0.0, now - float(start))
        return elapsed, (max(0.0, float(limit) - elapsed) if limit else None)
    return (job.get("run_time") if job.get("start") else None), None  # a job that never ran has no elapsed


ENDED_RUN = ("done", "failed", "stopped")


def recorded_job(state: dict[str, Any]) -> dict[str, Any]:
    """The run's last job as the dashboard may show it. While the run goes on, its last recorded state. Once the
    run has ended, never a live state it no longer has: the end Slurm recorded for that job where there is one,
    else the live state marked as the last one seen (a job cancelled with its run may leave no event)."""
    job = dict(state.get("slurm") or {})
    if state.get("status") not in ENDED_RUN or not job.get("job_id"):
        return job
    end = state.get("slurm_end") or {}
    if job.get("state") in RUNNING + ("PENDING", "REQUEUED", "SUSPENDED", "") or not job.get("state"):
        if end.get("job_id") == job["job_id"] and end.get("state"):
            job.update(state=end["state"], reason=end.get("reason"))
        else:
            job.update(state=f"{job.get('state') or 'submitted'} when last seen", reason=None, gone=False)
    return job


def where_cell(state: dict[str, Any], now: float) -> str:
    """The dashboard's Where cell: 'slurm 123 PENDING (Priority)', 'slurm 123 RUNNING localhost 0:41 left'."""
    job = recorded_job(state)
    if not job.get("job_id"):
        return ""
    text = f"slurm {job['job_id']} {state_text(job).replace(' on ', ' ')}"
    _, left = times(job, now)
    return text + (f" {hms(left)[:-3]} left" if left is not None else "")  # h:mm: the cell stays short


def chain_line(records: list[dict[str, Any]], now: float | None = None) -> str | None:
    """'chain: job 3 of the chain (412) on node7 · 0:20:00 left · successor 413 queued · job 411 reached its
    walltime; ...'."""
    if not records:
        return None
    started = [r for r in records if r.get("what") == "started"]
    cancelled = {i for r in records if r.get("what") == "cancelled" for i in r.get("job_ids") or []}
    submitted = [r["job_id"] for r in records if r.get("what") == "submitted" and r.get("job_id") not in cancelled]
    finished = {r.get("job_id") for r in records if r.get("what") == "finished"}
    warned = {r.get("job_id") for r in records if r.get("what") == "walltime_warning"}
    if not started:
        return f"chain: job {submitted[-1]} submitted, not started yet" if submitted else "chain: no job queued"
    current = started[-1]
    text = f"chain: job {len(started)} of the chain ({current.get('job_id')}) on {current.get('node') or '?'}"
    if now is not None and current.get("start") and current.get("job_id") not in finished:
        _, left = times({"state": "RUNNING", **current}, now)
        text += f" · elapsed {hms(now - float(current['start']))}" + (f" · {hms(left)} left" if left is not None else "")
    successors = [j for j in submitted if j > int(current.get("job_id") or 0)]
    if current.get("job_id") in finished:
        text += " · finished the run"
    elif any(r.get("what") == "stopping" for r in records):  # hpc/chain.py STOPPING: nothing is queued after it
        text += " · stopping (nightshift stop): no job continues it"
    elif successors:
        text += f" · successor {successors[-1]} queued"
    if len(started) > 1:
        prev = started[-2].get("job_id")
        how = "reached its walltime" if prev in warned else "ended without finishing the run"
        text += f" · job {prev} {how}; job {current.get('job_id')} continued from the event log"
    return text


def job_line(state: dict[str, Any], now: float) -> str:
    job = recorded_job(state)
    target = state.get("target") or {}
    elapsed, left = times(job, now)
    parts = [f"job {job.get('job_id')}", state_text(job)]
    if elapsed is not None:
        parts.append(f"elapsed {hms(elapsed)}")
    if left is not None:
        parts.append(f"{hms(left)} left of {hms(job.get('time_limit'))}")
    parts.append(f"job {state.get('slurm_jobs') or 1} of this run")
    if int(target.get("attempt") or 1) > 1:
        parts.append(f"attempt {target['attempt']}")
    return " · ".join(parts)


def end_line(state: dict[str, Any]) -> str | None:
    end = state.get("slurm_end") or {}
    if not end.get("job_id") or (end.get("state") == "COMPLETED" and not end.get("action")):
        return None  # a job that completed normally is nothing to report
    reason = f" ({end['reason']})" if end.get("reason") and end.get("reason") != end.get("state") else ""
    action = end.get("action") or STOP_ACTIONS.get(end.get("stop_reason") or "", "")
    return f"last job {end['job_id']} ended {end.get('state') or '?'}{reason}" + (f" → {action}" if action else "")


def allocation_line(state: dict[str, Any], now: float, caps: tuple[float, float] = (0.0, 0.0),
                    run_root: Path | None = None) -> str | None:
    alloc = allocation(state, now, run_root)
    if not alloc.used and not any(caps):
        return None
    return f"allocation {describe(alloc, *caps)} · model ${float(state.get('cost_usd') or 0):.2f}"


def slurm_lines(state: dict[str, Any], run_root: Path, now: float, caps: tuple[float, float] = (0.0, 0.0)) -> list[str]:
    """Every line the run screen shows about Slurm (none for a run that never touched it)."""
    lines = []
    if (state.get("slurm") or {}).get("job_id"):
        lines.append(job_line(state, now))
    chain = chain_line(read_chain(run_root), now)
    if chain:
        lines.append(chain)
    for line in (end_line(state), allocation_line(state, now, caps, run_root)):
        if line:
            lines.append(line)
    return lines
