"""Benchmark of the supervisor loop (issue 2): what a detached supervisor costs while its agent works, and how
fast a stop is answered with a push-back. Prints figures beside their goals; never fails on a figure.

Real parts only: git workspaces made by `nightshift init`, the `command` agent, and the supervisor started by
`start_detached` in its per-run tmux server (`tmux -L ns-<run id>`), exactly as `nightshift run` starts it.

1. Cost while the agent works (goal: under 0.5% of one core, peak RSS under 80 MB). Three runs side by side,
   each agent working for longer than the window: a quiet one (`sleep`), a chatty one (ten lines a second into
   its pane, which tmux pipes into the turn log under the watched shifts/ folder), and a quiet one with
   NIGHTSHIFT_POLL=1 (the polling fallback for NFS/Lustre; no goal, shown for the cluster case). CPU = the
   supervisor's utime+stime plus its reaped children (the tmux and git clients it runs) over the window / wall
   time; peak RSS = VmHWM of the supervisor process. Then the per-wake cost of the wait loop's pieces.
2. Stop -> push-back delivered (goal: p95 under 300 ms, verification excluded). A `command` agent that works
   0.3 s, appends a line and exits, with no verification configured and no limit on push-backs: every exit is
   a stop answered in the same shift by the next turn. Per stop: from the turn's exit file (its mtime: the
   stop) to the next turn's `agent.started` event (delivered), minus verify.started -> verify.finished.

3. A wake-up of the wait loop on a polling (NFS-like) workspace: a quiet agent with NIGHTSHIFT_POLL=1 (4 wake-ups
   a second) in a run directory holding what a long interactive run leaves (1,000 answered Stop-hook requests,
   300 seen refusals, 100 seen waits): the supervisor's CPU per wake-up, then the per-call cost of one wake-up's
   listings (inbox, refusals, waits, the Stop-hook channel) and of the tmux server's identity. On NFS/Lustre each
   listing is a READDIR round trip besides this CPU: a listing skipped is also a round trip saved.

Usage: python bench/bench_supervisor.py [--seconds 60] [--stops 60] [--wakeups-only]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace


sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import against_goal, info, percentile  # noqa: E402

from nightshift.supervisor.run import inbox  # noqa: E402
from nightshift.supervisor.backends.base import LaunchSpec, read_exit  # noqa: E402
from nightshift.supervisor.backends.tmux import TmuxBackend  # noqa: E402
from nightshift.supervisor.run.liveness import pid_alive  # noqa: E402
from nightshift.supervisor.run.paths import RunPaths  # noqa: E402
from nightshift.supervisor.shift.ledger import RunLedger  # noqa: E402

CPU_GOAL_PCT, RSS_GOAL_MB, P95_GOAL_MS = 0.5, 80.0, 300.0


from _supervisor_runs import (  # noqa: E402
    Run, make_workspace, start, wait_until, stop, clean_up, cpu_seconds, on_cpu_seconds, status_kb, tmux_server_pid, tmux_query, call_cost_ms)


# ----- 1. cost while the agent works ------------------------------------------------------------------
def bench_cost(root: Path, seconds: float, started: list[Run]) -> None:
    work = seconds + 40  # outlasts the settle time, the window and the diagnostics
    lines = int(work * 10)
    agents = [("quiet agent (sleep), inotify wake-ups", f"sleep {work:.0f}", None),
              ("chatty agent (10 lines/s), inotify wake-ups",
               f'for i in $(seq 1 {lines}); do echo "step $i of {lines}: residual 1.0e-3"; sleep 0.1; done', None),
              ("quiet agent, polling fallback (NIGHTSHIFT_POLL=1)", f"sleep {work:.0f}", {"NIGHTSHIFT_POLL": "1"})]
    runs = [start(label, make_workspace(root / f"cost{i}", command, 3), started, env)
            for i, (label, command, env) in enumerate(agents)]
    for run in runs:
        wait_until(f"the agent of {run.name!r} to start", lambda r=run: r.count("agent.started") >= 1, 30)
    time.sleep(2)  # let the launch settle: the window is the agent working, nothing else
    servers = {run.name: tmux_server_pid(run.socket) for run in runs}
    before = {run.name: (cpu_seconds(run.pid), cpu_seconds(servers[run.name]) if servers[run.name] else (0, 0))
              for run in runs}
    t0 = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - t0
    print(f"\n1. supervisor cost while the agent works ({wall:.1f} s window, tmux backend, three runs side by side)")
    for run in runs:
        (own0, kids0), (srv0, _) = before[run.name]
        own1, kids1 = cpu_seconds(run.pid)
        srv1 = cpu_seconds(servers[run.name])[0] if servers[run.name] else 0.0
        total_pct = 100 * ((own1 - own0) + (kids1 - kids0)) / wall
        hwm_mb, rss_mb = status_kb(run.pid, "VmHWM") / 1024, status_kb(run.pid, "VmRSS") / 1024
        print(f" {run.name}")
        label = "CPU, % of one core (supervisor + its children)"
        if "POLL" in run.name:  # the goal is for a local filesystem; this is the NFS/Lustre case
            print(info(label, total_pct, "%  (no goal: the NFS/Lustre fallback)"))
        else:
            print(against_goal(label, total_pct, CPU_GOAL_PCT, "%"))
        print(info("  of which the supervisor process itself", 100 * (own1 - own0) / wall, "%"))
        print(info("  of which its tmux/git client children", 100 * (kids1 - kids0) / wall, "%"))
        print(info("tmux server of the run (agent pane + queries)", 100 * (srv1 - srv0) / wall, "%  (info)"))
        print(against_goal("peak RSS (VmHWM)", hwm_mb, RSS_GOAL_MB, "MB") + f"   (RSS now {rss_mb:.1f} MB)")
    diagnose(runs[0])
    for run in runs:
        stop(run)


def diagnose(run: Run) -> None:
    """Per-call cost of what wait_for_stop does at every wake-up, measured here against the live agent."""
    state = {e["type"]: e for e in run.events()}
    target = state["agent.started"]["data"]["target"]
    backend = TmuxBackend(run.socket, run.run.run_id)
    spec = LaunchSpec(run.run.run_id, 1, 1, "", run.run.workspace, exit_file=Path(target["exit_file"]))
    # a stand-in with what hours_used reads: the state and the ledger's cache of the parsed creation time
    runtime = SimpleNamespace(state={"created": state["run.created"]["ts"]}, _created="", _start=0.0)
    pane = target["pane"]
    pane_pid = int(tmux_query(run.socket, pane, "#{pane_pid}") or 0)
    pieces = [("backend.is_alive(target)", lambda: backend.is_alive(target)),
              ("inbox.take_commands (inbox glob)", lambda: inbox.take_commands(run.run)),
              ("read_exit (exit file absent)", lambda: read_exit(spec)),
              ("hours_used (strptime of run.created)", lambda: RunLedger.hours_used(runtime)),
              ("  for comparison: tmux display-message '#{pane_dead}'", lambda: tmux_query(run.socket, pane, "#{pane_dead}")),
              ("  for comparison: pid_alive(pane_pid), no tmux", lambda: pid_alive(pane_pid))]
    print(" where a wake-up of the wait loop spends its CPU (per call, this process + its children)")
    for label, call in pieces:
        print(info(f"  {label}", call_cost_ms(call), "ms CPU"))


# ----- 3. a wake-up on a polling workspace -------------------------------------------------------------
def fill_like_a_long_run(run: RunPaths) -> None:
    """What weeks of an interactive run leave in the folders the wait loop lists at every wake-up."""
    stops, refusals, waits = run.stops, run.root / "refusals", run.root / "waits"
    for folder in (stops, refusals, waits):
        folder.mkdir(parents=True, exist_ok=True)
    for i in range(1000):
        (stops / f"{i:06d}-req.req.json").write_text(json.dumps({"id": f"{i:06d}-req", "token": "old"}))
        (stops / f"{i:06d}-req.ans.json").write_text(json.dumps({"decision": "allow", "reason": ""}))
    for i in range(300):
        (refusals / f"{i:06d}.seen").write_text("{}")
    for i in range(100):
        (waits / f"{i:06d}.seen").write_text("{}")


def bench_wakeups(root: Path, seconds: float, started: list[Run]) -> None:
    from nightshift.supervisor.shift import stop_channel
    from nightshift.supervisor.shift.policy import take_refusals
    from nightshift.supervisor.shift.waits import take_waits

    run = start("polling wake-ups", make_workspace(root / "wakeups", f"sleep {seconds + 40:.0f}", 3), started,
                {"NIGHTSHIFT_POLL": "1"})
    wait_until("the polling agent to start", lambda: run.count("agent.started") >= 1, 30)
    fill_like_a_long_run(run.run)
    time.sleep(3)  # past the listings' settle time: what a run in its second week sees
    own0, kids0 = cpu_seconds(run.pid)
    ran0 = on_cpu_seconds(run.pid)
    t0 = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - t0
    own1, kids1 = cpu_seconds(run.pid)
    ran1 = on_cpu_seconds(run.pid)
    wakeups = wall / 0.25  # the polling Waker's interval
    print(f"\n3. a wake-up of the wait loop on a polling workspace ({wall:.1f} s window, NIGHTSHIFT_POLL=1, "
          f"a long run's folders)")
    print(info("supervisor CPU per wake-up (process + children)", 1000 * ((own1 - own0) + (kids1 - kids0)) / wakeups,
               "ms"))
    print(info("  of which the supervisor process itself", 1000 * (own1 - own0) / wakeups, "ms"))
    print(against_goal("the supervisor on a CPU per wake-up (scheduler's clock)", 1000 * (ran1 - ran0) / wakeups, 0.5,
                       "ms"))
    print(info("supervisor CPU, % of one core", 100 * ((own1 - own0) + (kids1 - kids0)) / wall, "%"))

    def listings() -> None:
        inbox.take_commands(run.run)
        take_refusals(run.run)
        take_waits(run.run.waits)
        stop_channel.released(run.run.stops)
        stop_channel.pending(run.run.stops)

    backend = TmuxBackend(run.socket, run.run.run_id)
    print(info("one wake-up's listings (inbox, refusals, waits, stops)", call_cost_ms(listings, 200), "ms CPU"))
    print(info("tmux server identity (owns(), before every pane call)", call_cost_ms(backend.server_identity, 40),
               "ms CPU"))
    stop(run)


# ----- 2. stop -> push-back latency -------------------------------------------------------------------
def epoch(ts: str) -> float:
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime_ns / 1e9
    except FileNotFoundError:
        return None


def bench_latency(root: Path, stops: int, started: list[Run]) -> None:
    command = "sleep 0.3; date +%s.%N >> work.log"  # works a little, changes the tree, exits: a stop
    run = start("latency", make_workspace(root / "latency", command, 1_000_000), started)
    wait_until("the first agent turn", lambda: run.count("agent.started") >= 1, 30)
    own0, kids0 = cpu_seconds(run.pid)
    wait_until(f"{stops} push-backs", lambda: run.count("agent.started") > stops, stops * 5 + 30)
    own1, kids1 = cpu_seconds(run.pid)
    hwm_mb = status_kb(run.pid, "VmHWM") / 1024
    # Every turn of a shift leaves its (dead, remain-on-exit) window; each is_alive lists all of them.
    windows = len(subprocess.run(["tmux", "-L", run.socket, "list-windows", "-t", "agent", "-F", "#{window_id}"],
                                 capture_output=True, text=True).stdout.split())
    live = [e for e in run.events() if e["type"] == "agent.started"][-1]["data"]["target"]
    backend = TmuxBackend(run.socket, run.run.run_id)
    alive_ms = call_cost_ms(lambda: backend.is_alive(live), 10)
    stop(run)
    at: dict[tuple[str, int], float] = {}
    for event in run.events():
        if event["shift"] == 1 and "turn" in event["data"]:
            at.setdefault((event["type"], int(event["data"]["turn"])), epoch(event["ts"]))
    rows, early = [], 0
    for k in range(1, stops + 1):
        stop_at = mtime(run.run.turn_file(1, k, "exit"))
        keys = [("agent.started", k), ("agent.stopped", k), ("verify.started", k), ("verify.finished", k),
                ("pushback.sent", k + 1), ("agent.started", k + 1)]
        commit = at.get(("commit.created", k), at.get(("commit.skipped", k)))
        if stop_at is None or commit is None or any(key not in at for key in keys):
            continue
        early += stop_at < at[("agent.started", k)]
        verify = at[("verify.finished", k)] - at[("verify.started", k)]
        pane = mtime(run.run.turn_file(1, k + 1, "started"))
        rows.append({"total": at[("agent.started", k + 1)] - stop_at - verify,
                     "exit file -> agent.stopped (detection)": at[("agent.stopped", k)] - stop_at,
                     "agent.stopped -> verify.started": at[("verify.started", k)] - at[("agent.stopped", k)],
                     "verify.finished -> commit event (git add/commit)": commit - at[("verify.finished", k)],
                     "commit -> pushback.sent (decide, prompt)": at[("pushback.sent", k + 1)] - commit,
                     "pushback.sent -> agent.started (tmux launch)": at[("agent.started", k + 1)]
                     - at[("pushback.sent", k + 1)],
                     "verification (excluded)": verify,
                     "agent.started -> wrapper running (info)": (pane - at[("agent.started", k + 1)]) if pane else 0.0})
    print(f"\n2. stop -> push-back delivered, verification excluded ({len(rows)} stops in one shift, tmux backend)")
    if not rows:
        print("  no complete stop was recorded; see", run.run.root)
        return
    totals = [1000 * r["total"] for r in rows]
    print(info("p50", percentile(totals, 50), "ms"))
    print(against_goal("p95", percentile(totals, 95), P95_GOAL_MS, "ms"))
    print(info("max", max(totals), "ms"))
    print(" median of each part (ms); the parts before the exclusion add up to the total")
    for key in rows[0]:
        if key != "total":
            print(info(f"  {key}", 1000 * percentile([r[key] for r in rows], 50), "ms"))
    cycle_cpu = ((own1 - own0) + (kids1 - kids0)) / stops
    print(info("supervisor CPU per stop cycle (incl. verification, git)", 1000 * cycle_cpu, "ms"))
    print(info("supervisor peak RSS (VmHWM)", hwm_mb, "MB"))
    print(info("snapshot.json size (rewritten at every event)", run.run.snapshot.stat().st_size / 1024, "KB"))
    print(info(f"agent windows in the run's tmux server after {stops} turns", windows, ""))
    print(info("  backend.is_alive(target) with that many windows", alive_ms, "ms CPU per call"))
    print(info("p50 of the first 10 stops", percentile(totals[:10], 50), "ms"))
    print(info("p50 of the last 10 stops", percentile(totals[-10:], 50), "ms"))
    if early:
        print(f"  note: {early} turn(s) exited before their agent.started was recorded (launch overlap)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="the window the agent works (default 60)")
    parser.add_argument("--stops", type=int, default=60, help="stops to measure (default 60, at least 50)")
    parser.add_argument("--wakeups-only", action="store_true", help="only 3., the polling wake-up")
    args = parser.parse_args()
    started: list[Run] = []
    print(f"bench_supervisor: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
          f"python {sys.version.split()[0]}; {subprocess.run(['tmux', '-V'], capture_output=True, text=True).stdout.strip()}")
    with tempfile.TemporaryDirectory(prefix="nightshift-bench-") as tmp:
        root = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(root / "state")  # keep these runs out of the user's `nightshift ls`
        try:
            if not args.wakeups_only:
                bench_cost(root, args.seconds, started)
                bench_latency(root, args.stops, started)
            bench_wakeups(root, args.seconds, started)
        finally:
            for run in started:
                clean_up(run)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end (other work on this machine skews the figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
