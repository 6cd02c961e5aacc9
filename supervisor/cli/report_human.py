"""The report's "what needed a human" list and its budget lines (cost, hours, core-hours, burn rate, projection).

Event types come from several parts of nightshift, some newer than this file: each is described when known,
and any other human-facing type (``policy.*``, ``slurm.*``, ``approval.*``) is shown with its data, so a new
kind of refusal is never hidden.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from supervisor.cli.report_scan import Scan, ts_seconds
from supervisor.run.allocation import allocation, describe

def _line(kind: str, d: dict[str, Any]) -> str | None:
    if kind == "run.paused":
        from supervisor.cli.outcome import pause_kind  # older runs recorded only the reason's text
        what = pause_kind({"paused": True, "pause_kind": d.get("kind"), "pause_reason": d.get("reason")})
        label = {"blocked": "agent claimed blocked", "breaker": "breaker pause", "budget": "budget pause",
                 "dialog": "waiting for a person at the agent's screen", "user": "paused by a person",
                 "judge": "held for a person: the judge was down",
                 "crashloop": "held for a person: the supervisor kept dying"}.get(what, "paused")
        return f"{label}: {d.get('reason', '')}"
    if kind == "breaker.tripped":
        return f"breaker tripped: {d.get('reason', '')}"
    if kind == "budget.exceeded":
        return f"budget spent: {d.get('what')} = {d.get('value')} (limit {d.get('limit')})"
    if kind == "agent.waiting" and d.get("kind") == "human":
        return f"waited for a person: {d.get('what')} (policy: {d.get('on_wait')})"
    if kind == "agent.waiting":
        return f"API limit, waited until {d.get('until')}: {d.get('reason', '')}"
    if kind == "agent.wait_answered":
        return f"the wait was answered: {d.get('answer')} (by {d.get('by')})"
    if kind == "command.accepted":
        verb = d.get("verb")
        if verb == "nudge":
            return f"nudge: {(d.get('args') or {}).get('message', '')}"
        # a release is told by its own test.released event (below)
        return f"{verb} by a person" if verb in ("pause", "resume", "stop", "approve", "deny") else None
    if kind == "judge.unavailable":
        return f"judge unavailable: {d.get('error')}"
    if kind == "agent.stalled":
        return f"the agent was silent for {d.get('silent')}: " + ("nudged" if d.get("action") == "nudged" else
                                                                   "its shift was ended, a fresh one started")
    if kind == "supervisor.revived":
        return f"the supervisor had died ({d.get('reason')}); restarted by the {d.get('by')}"
    if kind == "judge.waiting":
        return f"judge unavailable, asked again (try {d.get('tries')}): {d.get('error')}"
    if kind.startswith("policy."):
        what = d.get("rule") or d.get("tool") or d.get("command") or d.get("what") or ""
        why = d.get("reason") or d.get("message") or ""
        return f"policy refused{(' ' + str(what)) if what else ''}{(': ' + str(why)) if why else ''}" \
            if kind.endswith("denied") else f"{kind}: {_short(d)}"
    if kind == "preflight.finished":
        problems = d.get("problems") or []
        return (f"preflight {'passed' if d.get('passed') else 'failed'}"
                + (f", {len(problems)} problem(s)" if problems else "")
                + (f"; starting gap: worst {d['metric']:.3g}x the tolerance" if isinstance(d.get("metric"), (int, float))
                   else ""))
    if kind == "tests.baseline":  # the test ratchet's start, for a person when it left flaky tests out or counts totals
        flaky = d.get("flaky") or []
        if not flaky and d.get("per_test"):
            return None
        counted = f"{len(d.get('passing') or [])} passing tests" if d.get("per_test") else \
            f"{d.get('passed_total')} passing tests (totals only)"
        shown = ", ".join(flaky[:10]) + (" ..." if len(flaky) > 10 else "")
        started = f"test ratchet started ({d.get('source')}) from {counted}"
        return started + (f"; flaky, left out: {shown}" if flaky else "")
    if kind == "test.released":
        tests = d.get("tests") or []
        return (f"released from the test ratchet by {d.get('by') or 'a person'}: {', '.join(tests[:10])}"
                + (f" and {len(tests) - 10} more" if len(tests) > 10 else "") + f" ({d.get('why')})")
    if kind == "preflight.skipped":
        return f"preflight skipped: {d.get('reason', '')}"
    if kind.startswith(("preflight", "budget.", "approval.", "slurm.", "core_hours")):
        return f"{kind}: {_short(d)}"
    return None


def _short(d: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in list(d.items())[:5])[:240]


def human_events(scan: Scan) -> list[dict[str, Any]]:
    """Everything that needed or got a person, in log order: {ts, shift, kind, text}."""
    out = []
    for event in scan.human:
        kind = str(event.get("type"))
        text = _line(kind, event.get("data") or {})
        if text:
            out.append({"ts": event.get("ts"), "shift": event.get("shift"), "kind": kind, "text": text})
    return out


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
