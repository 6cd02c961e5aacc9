"""The report's "what needed a human" list (its rows' words are report_person's) and its budget lines (cost, hours,
core-hours, burn rate, projection)."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.cli.report.person import needed_person, person_line
from nightshift.supervisor.cli.report.scan import Scan, ts_seconds
from nightshift.supervisor.run.allocation import allocation, describe


def human_events(scan: Scan, run_id: str = "RUN") -> list[dict[str, Any]]:
    """Everything that needed or got a person, in log order: {ts, shift, kind, text, needed}, the text in words with
    what to do (report_person); ``needed`` is False for a row nightshift handled by itself (kept for the record)."""
    out = []
    for event in scan.human:
        kind = str(event.get("type"))
        data = event.get("data") or {}
        text = person_line(kind, data, run_id)
        if text:
            out.append({"ts": event.get("ts"), "shift": event.get("shift"), "kind": kind, "text": text,
                        "needed": needed_person(kind, data)})
    return out


def needed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that needed a person (human_events' ``needed``)."""
    return [r for r in rows if r.get("needed", True)]


def _hours(scan: Scan, state: dict[str, Any]) -> float | None:
    start = ts_seconds(state.get("created")) or ts_seconds(scan.first_ts)
    end = ts_seconds(scan.last_ts) or ts_seconds(state.get("last_event_ts"))
    return (end - start) / 3600.0 if start is not None and end is not None and end >= start else None


def budget_lines(state: dict[str, Any], scan: Scan, config: Any, run_dir: Path | None = None) -> list[str]:
    """Cost, hours and core-hours used, against the limits, with the burn rate and a projection."""
    limits = getattr(config, "limits", None)
    cost = float(state.get("cost_usd") or 0.0)
    judge = float(state.get("judge_cost_usd") or 0.0)
    hours = _hours(scan, state)
    shifts = int(state.get("shift") or 0)
    lines = [f"cost ${cost:.4f} (judge ${judge:.4f})"
             + (f" of ${limits.max_cost_usd:g}" if limits and limits.max_cost_usd else " (no cost limit)")]
    if hours is not None:
        lines.append(f"hours {hours:.2f}" + (f" of {limits.max_hours:g}" if limits else ""))
    lines.append(f"shifts {shifts}" + (f" of {limits.max_shifts}" if limits else ""))
    # The allocation as the budget, `status` and the TUI count it (chain jobs of `nightshift submit` included).
    now = ts_seconds(state.get("last_event_ts")) if state.get("phase") == "finished" else None
    spent = allocation(state, now or time.time(), run_dir)
    if spent.used:
        lines.append("Slurm " + describe(spent, getattr(limits, "max_core_hours", 0) if limits else 0,
                                         getattr(limits, "max_gpu_hours", 0) if limits else 0))
    if hours and hours > 0:
        rate = cost / hours
        lines.append(f"burn rate ${rate:.4f}/hour, {shifts / hours:.2f} shifts/hour")
        if state.get("phase") != "finished" and limits:
            left = []
            if limits.max_cost_usd and rate > 0:
                left.append((max(limits.max_cost_usd - cost, 0) / rate, "cost limit"))
            left.append((max(limits.max_hours - hours, 0), "hour limit"))
            if shifts:
                left.append((max(limits.max_shifts - shifts, 0) / (shifts / hours), "shift limit"))
            eta, which = min(left)
            lines.append(f"projection: the {which} is reached in about {eta:.1f} hours at this rate")
    return lines
