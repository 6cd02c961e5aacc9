"""Benchmark of fleets (issue 23). Prints figures and ratios; never fails on a figure.

Real parts only: workspaces made by `nightshift init`, the `command` agent, lanes as worktree runs each with its
own supervisor in its own tmux server, bubblewrap around every turn, the fleet's checks in clean checkouts.

1. Wall time to verified done: a scripted task with four approaches that converge at different speeds (two never
   converge, one slowly, one fast; each turn is WORK seconds of "work"). Four lanes, one approach each, against one
   ordinary run whose agent tries the same approaches in turn (the failing ones first, as a person would not know
   better). Ratio fleet / one lane: under 1 means the fleet is faster.
2. What supervising costs per lane at 1, 4 and 16 lanes, while every lane's agent works (a long turn): CPU of the
   fleet's supervisor and of the lanes' own supervisors (utime+stime over the window / wall), and their RSS.
3. slurmctld RPCs per lane-hour with the lanes' first turns as one job array against one job per lane, on the
   localhost Slurm cluster (bench/_fleet_slurm.py; says why not where the cluster cannot run).

Usage: python bench/bench_fleet.py [--work 1.0] [--seconds 20] [--lanes 1 4 16] [--slurm-lanes 8]
       [--skip-wall] [--skip-cost] [--skip-slurm]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import info  # noqa: E402

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace  # noqa: E402
from nightshift.supervisor.run.events import read_events  # noqa: E402
from nightshift.supervisor.run.paths import RunPaths  # noqa: E402

AGENT = r'''
import json, os, subprocess, sys, time
from pathlib import Path
plan = json.loads(Path("plan.json").read_text())[Path.cwd().name]
prog = json.loads(Path("progress.json").read_text()) if Path("progress.json").exists() else {"i": 0, "t": 0}
time.sleep(float(plan["work"]))
if prog["i"] >= len(plan["approaches"]):
    sys.exit(0)  # nothing left to try: a stall
turns, converges = plan["approaches"][prog["i"]]
prog["t"] += 1
err = 10.0 ** -(prog["t"])
if prog["t"] >= turns and converges:
    err = 1e-8
elif prog["t"] >= turns:
    with open("CHANGELOG.md", "a") as fh: fh.write(f"\n- approach {prog['i']} failed\n")
    prog["i"], prog["t"] = prog["i"] + 1, 0
Path("solver.py").write_text("import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.dat', 'w').write("
    "'# 1:x 2:y\\n' + ''.join(f'{x} {(1.0 / (x + 0.123456789)) * (1 + %r):.10f}\\n' for x in range(1, 41)))\n" % err)
Path("progress.json").write_text(json.dumps(prog))
if err == 1e-8:
    Path("check.txt").write_text("ok")
    subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "claim", "done", "--summary", "converged"], check=True)
'''
REFERENCE = "# 1:x 2:y\n" + "".join(f"{x} {1.0 / (x + 0.123456789):.12f}\n" for x in range(1, 41))
CONFIG = """goal = "make the solver agree with the reference"
[agent]
kind = "command"
command = "{python} agent.py"
[verify]
test_command = "test \\"$(cat check.txt)\\" = ok"
require_changelog = false
require_plan = false
[limits]
max_shifts = 50
breaker_stops = 3
[oracle]
command = "{python} solver.py"
[[oracle.compare]]
name = "result"
candidate = "out/result.dat"
reference = "reference/result.dat"
rtol = 1e-6
[fleet]
lanes = {lanes}
"""
# (turns, converges) per approach: two dead ends, a slow one, a fast one
APPROACHES = [[3, False], [3, False], [6, True], [2, True]]


def workspace(root: Path, lanes: int, plan: dict) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True)
    init_workspace(ws, InitOptions(goal="bench", agent="command"))
    (ws / "agent.py").write_text(AGENT)
    (ws / "reference").mkdir()
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    (ws / "plan.json").write_text(json.dumps(plan))
    (ws / "nightshift.toml").write_text(CONFIG.format(python=sys.executable, lanes=lanes))
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"], cwd=ws, check=True)
    return ws


def cleanup(ws: Path) -> None:
    for run_dir in [*ws.glob(".nightshift/runs/*"), *ws.glob(".nightshift/lanes/*/lane-*/.nightshift/runs/*")]:
        try:
            psutil.Process(json.loads((run_dir / "supervisor.json").read_text())["pid"]).kill()
        except (OSError, ValueError, KeyError, psutil.Error):
            pass
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)


def time_to_done(work: float) -> tuple[float, float]:
    """Seconds to verified done: (4 lanes, one approach each; one lane trying them in turn)."""
    out = []
    for lanes in (4, 1):
        with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
            plan = {f"lane-{k}": {"work": work, "approaches": [APPROACHES[k - 1]]} for k in range(1, 5)}
            plan["ws"] = {"work": work, "approaches": APPROACHES}
            ws = workspace(Path(tmp), lanes, plan)
            began = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", "--foreground", "--no-check"],
                                  cwd=ws, capture_output=True, text=True, timeout=1800)
            out.append(time.monotonic() - began)
            cleanup(ws)
            if proc.returncode != 0:
                raise SystemExit(f"the {lanes}-lane run did not end done: {proc.stdout[-800:]}{proc.stderr[-800:]}")
    return out[0], out[1]


def cost_per_lane(lanes: int, seconds: float) -> dict[str, float]:
    """CPU (% of one core) and RSS (MB) of the fleet's supervisor and, per lane, of the lanes' own supervisors."""
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        plan = {f"lane-{k}": {"work": 3600, "approaches": [[1, True]]} for k in range(1, lanes + 1)}
        ws = workspace(Path(tmp), max(lanes, 2), plan)
        from nightshift.supervisor.fleet.launch import create_fleet
        from nightshift.supervisor.shift.launcher import resolve_config
        config = resolve_config(ws)
        if lanes == 1:  # a one-lane fleet (the CLI runs --lanes 1 as an ordinary run)
            from nightshift.supervisor.fleet.launch import with_lanes
            config = with_lanes(config, 1)
        run = create_fleet(ws, config) if lanes > 1 else _one_lane_fleet(ws, config)
        fleet = subprocess.Popen([sys.executable, "-c", "import sys; from nightshift.supervisor.fleet.loop import FleetSupervisor;"
                                  "from nightshift.supervisor.run.paths import RunPaths; from nightshift.supervisor.shift.launcher import "
                                  "frozen_config; r = RunPaths(__import__('pathlib').Path(sys.argv[1])); "
                                  "FleetSupervisor(r, frozen_config(r), say=lambda _: None).run()", str(run.root)],
                                 cwd=ws, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60 + 10 * lanes
            lane_runs: list[RunPaths] = []
            while time.monotonic() < deadline:
                lane_runs = [RunPaths(p) for p in ws.glob(".nightshift/lanes/*/lane-*/.nightshift/runs/*")]
                working = [r for r in lane_runs
                           if any(e["type"] == "agent.started" for e in read_events(r.events).events)]
                if len(working) == lanes:
                    break
                time.sleep(0.5)
            else:
                raise SystemExit(f"only {len(lane_runs)} of {lanes} lanes started")
            pids = [json.loads(r.supervisor.read_text())["pid"] for r in lane_runs]
            procs = [psutil.Process(fleet.pid)] + [psutil.Process(p) for p in pids]
            before = [p.cpu_times() for p in procs]
            time.sleep(seconds)
            after = [p.cpu_times() for p in procs]
            cpu = [100.0 * ((a.user + a.system) - (b.user + b.system)) / seconds for a, b in zip(after, before)]
            rss = [p.memory_info().rss / 2**20 for p in procs]
        finally:
            fleet.kill()
            fleet.wait()
            cleanup(ws)
    return {"fleet_cpu": cpu[0], "fleet_rss": rss[0], "lane_cpu": sum(cpu[1:]) / lanes,
            "lane_rss": sum(rss[1:]) / lanes}


def _one_lane_fleet(ws: Path, config):
    from nightshift.supervisor.fleet.lanes import refuse_fleet
    from nightshift.supervisor.run.paths import new_run_id
    from nightshift.supervisor.shift.launcher import create_run
    run_id = new_run_id()
    refuse_fleet(ws, config, run_id, 1)
    return create_run(ws, config, run_id=run_id)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=float, default=1.0, help="seconds of 'work' per agent turn")
    ap.add_argument("--seconds", type=float, default=20.0, help="the window CPU is measured over")
    ap.add_argument("--lanes", type=int, nargs="*", default=[1, 4, 16])
    ap.add_argument("--skip-wall", action="store_true")
    ap.add_argument("--skip-cost", action="store_true")
    ap.add_argument("--skip-slurm", action="store_true")
    ap.add_argument("--slurm-lanes", type=int, default=8, help="lanes for the slurmctld RPC figures")
    args = ap.parse_args()
    if not args.skip_wall:
        print("1. wall time to verified done (two dead ends, a slow approach, a fast one)")
        fleet, single = time_to_done(args.work)
        print(info("4 lanes, one approach each", fleet, "s"))
        print(info("1 lane, the same approaches in turn", single, "s"))
        print(info("ratio fleet / one lane (under 1: the fleet is faster)", fleet / single, ""))
    if not args.skip_cost:
        print(f"2. supervising cost while every lane's agent works ({args.seconds:g} s window)")
    for lanes in [] if args.skip_cost else args.lanes:
        got = cost_per_lane(lanes, args.seconds)
        print(info(f"{lanes:>2} lanes: fleet supervisor CPU", got["fleet_cpu"], "%"))
        print(info(f"{lanes:>2} lanes: fleet supervisor CPU per lane", got["fleet_cpu"] / lanes, "%"))
        print(info(f"{lanes:>2} lanes: fleet supervisor RSS", got["fleet_rss"], "MB"))
        print(info(f"{lanes:>2} lanes: lane supervisor CPU (mean per lane)", got["lane_cpu"], "%"))
        print(info(f"{lanes:>2} lanes: lane supervisor RSS (mean per lane)", got["lane_rss"], "MB"))
    if not args.skip_slurm:
        from _fleet_slurm import rpcs_per_lane_hour
        print("3. slurmctld RPCs per lane-hour with the array (first turns as one job array vs one job per lane)")
        rpcs_per_lane_hour(args.slurm_lanes)


if __name__ == "__main__":
    main()
