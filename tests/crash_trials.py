"""One randomized crash trial, shared by tests/test_crash_random.py (a handful) and bench/bench_crash.py (hundreds).

A real run (scripted command agent in a per-run tmux server, a supervisor process) is killed with kill -9 at
random moments, one to three times, and in some trials its tmux server is killed too; then a supervisor is run
to the end. The trial checks what must hold after any crash: no lost or doubled shift, no turn launched twice,
seq without gaps, at most one live agent at any kill, exactly one run.finished, and a verified done.
"""
from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.run.events import read_events
from tests.fixtures_core import AGENT, Workspace, kill_supervisor

WRONG = [["sleep", "0.6"], ["write", "check.txt", "no"], ["claim", "done", "premature"]]
FIX = [["sleep", "0.6"], ["write", "check.txt", "ok"], ["claim", "done", "fixed"]]
SCRIPT = {"s1t1": WRONG, "s1t2": WRONG, "default": FIX}  # a push-back in session, then a fresh shift


@dataclass
class TrialResult:
    seed: int
    kills: int
    server_killed: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def live_agents(socket: str) -> int:
    out = subprocess.run(["tmux", "-L", socket, "list-panes", "-s", "-t", "agent", "-F", "#{pane_dead}"],
                         capture_output=True, text=True).stdout.split()
    return out.count("0")


def _supervisor(run) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)],
                            cwd=run.workspace, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_trial(seed: int, workdir: Path, kill_server: bool) -> TrialResult:
    rng = random.Random(seed)
    path = workdir / f"ws-{seed}"
    path.mkdir(parents=True)
    init_workspace(path, InitOptions(goal="make check.txt say ok", agent="command"))
    (path / "agent.py").write_text(AGENT)
    ws = Workspace(path).configure(SCRIPT, pushbacks=1, max_shifts=6)
    run = ws.create_run()
    socket = f"ns-{run.run_id}"
    result = TrialResult(seed, rng.randint(1, 3), kill_server)
    try:
        for n in range(result.kills):
            proc = _supervisor(run)
            deadline = time.monotonic() + rng.uniform(0.2, 3.0)
            while time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            if live_agents(socket) > 1:
                result.problems.append(f"{live_agents(socket)} live agents at kill {n + 1}")
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            if kill_server and n == 0:
                subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        final = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)],
                               cwd=path, capture_output=True, text=True, timeout=180)
        if "run.finished" not in [e["type"] for e in read_events(run.events).events] and final.returncode != 0:
            result.problems.append(f"final supervisor exited {final.returncode}: {final.stderr.strip()[-300:]}")
        result.problems += check_log(run)
    except subprocess.TimeoutExpired:
        result.problems.append("the final supervisor did not finish within 180 s")
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        kill_supervisor(run.root)
    return result


def check_log(run) -> list[str]:
    events = read_events(run.events).events
    problems = []
    seqs = [e["seq"] for e in events]
    if seqs != list(range(1, len(events) + 1)):
        problems.append(f"seq has gaps or repeats: {seqs}")
    types = [e["type"] for e in events]
    if types.count("run.finished") != 1:
        problems.append(f"{types.count('run.finished')} run.finished events")
    elif events[-1]["type"] != "run.finished" or events[-1]["data"].get("outcome") != "done":
        problems.append(f"the run did not end verified done: {events[-1]['type']} {events[-1]['data']}")
    shifts = [e["shift"] for e in events if e["type"] == "shift.started"]
    if shifts != list(range(1, len(shifts) + 1)):
        problems.append(f"shifts lost or doubled: {shifts}")
    launched = [(e["shift"], e["data"].get("turn")) for e in events if e["type"] == "agent.started"]
    if len(launched) != len(set(launched)):
        problems.append(f"a turn launched twice: {launched}")
    for shift, turn in set(launched):
        log = run.turn_file(shift, turn, "log")
        count = log.read_text(errors="replace").count(f"scripted agent s{shift}t{turn}") if log.exists() else 0
        if count > 1:
            problems.append(f"turn s{shift}t{turn} ran {count} times")
    return problems
