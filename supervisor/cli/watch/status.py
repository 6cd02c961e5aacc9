"""`nightshift status RUN [--json]`: where a run stands, from what the supervisor recorded (never a live query of
Slurm): the verdict, cost, what waits for a person, the Slurm job and allocation, lanes, refusals, held-out figures
in full (the user's own view) and the trust line."""
from __future__ import annotations

import json

from nightshift.supervisor.cli.watch.revive import crash_reason
from nightshift.supervisor.run.registry import find_run
from nightshift.supervisor.run.shown import plain


def cmd_status(args) -> int:
    from nightshift.supervisor.run.liveness import supervisor_status
    from nightshift.supervisor.run.state import load_state

    run = find_run(args.run)
    state, _, warnings = load_state(run.root)
    sup = supervisor_status(run.supervisor)
    crash = crash_reason(run, state) if not sup["alive"] and state["phase"] != "finished" else None
    if args.json:
        from nightshift.supervisor.fleet.state import lane_rows
        lanes = lane_rows(run.root)
        out = {"run_dir": str(run.root), "supervisor": sup, "state": state, "warnings": warnings, "crashed": crash,
               "lanes": lanes}
        if lanes is not None:  # a fleet: what its lanes spent together, as its one budget counts it
            out["lanes_allocation"] = dict(zip(("core_hours", "gpu_hours"), lanes_spent(run)))
        print(json.dumps(out, default=str))
        return 0
    one = lambda text: plain(text, one_line=True)  # noqa: E731 - what the agent wrote cannot pose as a line of ours
    verdict = one((state["last_verdict"] or {}).get("summary", "-"))
    print(f"run {run.run_id}  [{state['status']}]  shift {state['shift']} turn {state['turn']}\n"
          f"workspace  {state['workspace']}\ngoal       {one(state['goal'])}\n"
          f"supervisor {'alive' if sup['alive'] else 'not running'} (pid {sup.get('pid')} on {sup.get('host')})\n"
          f"verdict    {verdict}\ncost       ${state['cost_usd']:.4f}   last event {_age(state['last_event_ts'])} ago")
    if state.get("waiting_for"):
        print(f"WAITING    for {one(state['waiting_for'])}: `nightshift approve {run.run_id}` or "
              f"`nightshift deny {run.run_id}`")
    if state.get("slurm") or (run.root / "slurm" / "chain.jsonl").exists():
        print(slurm_status_lines(run, state))
    from nightshift.supervisor.fleet.state import lane_rows
    lanes = lane_rows(run.root) or []
    if lanes:
        print(f"lanes      {len(lanes)}, cost ${sum(lane['cost_usd'] or 0.0 for lane in lanes):.4f}"
              f"{lanes_allocation_text(run)} together")
    for lane in lanes:
        metric = "-" if lane["metric"] is None else f"{lane['metric']:.3g}"
        print(f"lane {lane['lane']:<5} {lane['status']:10} err/tol {metric:>8}  ${lane['cost_usd']:.2f}  "
              f"{lane['approach'] or '(own choice)'}{'  WINNER' if lane['winner'] else ''}")
    if state["paused"]:
        print(f"paused     {one(state['pause_reason'])}")
    if state.get("refusals"):
        last = (state.get("recent_refusals") or [{}])[-1]
        print(f"refused    {state['refusals']} tool call(s) by the run's policy"
              + (f"; last: {one(last.get('tool'))} {one(last.get('input'))} ({last.get('rule')})"
                 if last else ""))
    if state["outcome"]:
        print(f"finished   {state['outcome']}: {one(state['finish_reason'])}")
    if crash:
        print(f"crashed    {one(crash)}")
    for warning in warnings:
        print(f"warning    {one(warning)}")
    from nightshift.supervisor.cli.watch.heldout import holds_out, status_lines
    from nightshift.supervisor.cli.watch.outcome import trust_line
    for line in status_lines(run.root, state):
        print(line)
    print(trust_line(state, holds_out(run)))
    return 0


def lanes_spent(run) -> tuple[float, float]:
    """(core-hours, GPU-hours) of a fleet's lanes together: the figures its one budget counts (fleet/budget.py)."""
    from nightshift.supervisor.fleet.budget import lanes_allocation
    from nightshift.supervisor.fleet.state import load_fleet

    fleet = load_fleet(run.root)
    return lanes_allocation(fleet["lanes"].values()) if fleet else (0.0, 0.0)


def lanes_allocation_text(run) -> str:
    """', 12.00 core-h of 10' beside the lanes' cost, when they spent an allocation or [limits] caps one."""
    from nightshift.supervisor.errors import UserError
    from nightshift.supervisor.run.allocation import Allocation, describe
    from nightshift.supervisor.shift.launcher import frozen_config

    try:
        limits = frozen_config(run).limits
        caps = (limits.max_core_hours, limits.max_gpu_hours)
    except (OSError, UserError):  # a fleet without a readable frozen config still shows what its lanes spent
        caps = (0.0, 0.0)
    core, gpu = lanes_spent(run)
    if not (core or gpu or any(caps)):
        return ""
    return ", " + describe(Allocation(core, gpu, 0, 0, None, ""), *caps)


def slurm_status_lines(run, state) -> str:
    """The job and the allocation spent, beside the model cost, from what the supervisor recorded."""
    import time

    from nightshift.supervisor.errors import UserError
    from nightshift.supervisor.run.allocation import allocation, describe
    from nightshift.supervisor.shift.launcher import frozen_config

    job = state.get("slurm") or {}
    try:
        limits = frozen_config(run).limits
        caps = (limits.max_core_hours, limits.max_gpu_hours)
    except (OSError, UserError):  # a run without a readable frozen config still shows what it spent
        caps = (0.0, 0.0)
    lines = []
    if job:
        line = f"slurm job  {job.get('job_id')} {job.get('summary') or job.get('state') or 'submitted'}"
        end = state.get("slurm_end") or {}
        if end and end.get("job_id") != job.get("job_id"):
            line += f"   last ended: job {end.get('job_id')} {end.get('state')}"
        lines.append(line)
    lines.append(f"allocation {describe(allocation(state, time.time(), run.root), *caps)}")
    return "\n".join(lines)


def _age(ts: str | None) -> str:
    if not ts:
        return "-"
    from datetime import datetime, timezone
    seconds = (datetime.now(timezone.utc) - datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=timezone.utc)).total_seconds()
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.0f}m" if seconds < 7200 else f"{seconds / 3600:.1f}h"
