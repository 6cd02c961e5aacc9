"""The runs bench_supervisor.py measures: workspaces made by `nightshift init` with a `command` agent, supervisors
started as `nightshift run` starts them (start_detached, in the run's own tmux server), and the probes of their
processes (CPU, memory, the tmux server). Shared by the benchmark's three parts."""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import tomli_w

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.run import inbox
from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.liveness import pid_alive
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.shift.launcher import create_run, resolve_config, start_detached


@dataclass
class Run:
    name: str
    run: RunPaths
    pid: int
    socket: str
    socket_path: str = ""

    def events(self) -> list[dict]:
        return read_events(self.run.events).events

    def count(self, kind: str) -> int:
        return sum(1 for e in self.events() if e["type"] == kind)


def make_workspace(path: Path, command: str, pushbacks: int) -> Path:
    """A real workspace (`nightshift init`, git) whose config runs ``command`` each turn and verifies nothing."""
    path.mkdir(parents=True)
    init_workspace(path, InitOptions(goal="benchmark the supervisor", agent="command"))
    config = {"goal": "benchmark the supervisor",
              "agent": {"kind": "command", "command": command, "max_pushbacks_per_shift": pushbacks},
              "backend": {"kind": "tmux"}, "limits": {"max_shifts": 3, "breaker_stops": 1_000_000},
              "verify": {"test_command": "", "require_changelog": False, "require_plan": False}}
    (path / "nightshift.toml").write_text(tomli_w.dumps(config))
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "setup"],
                   cwd=path, check=True)
    return path


def start(name: str, workspace: Path, started: list[Run], env: dict[str, str] | None = None) -> Run:
    """Create a run and start its supervisor detached in the run's own tmux server (which inherits ``env``)."""
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        config = resolve_config(workspace)
        run = create_run(workspace, config)
        socket = f"ns-{run.run_id}"
        started.append(Run(name, run, 0, socket))  # cleaned up by socket even if the start fails
        start_detached(run, config)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    started[-1].pid = int(json.loads(run.supervisor.read_text())["pid"])
    started[-1].socket_path = tmux_query(socket, "", "#{socket_path}")
    return started[-1]


def wait_until(what: str, check, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench_supervisor: timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


def stop(run: Run) -> None:
    """Stop through the inbox like `nightshift stop`, then wait for the process to end."""
    if run.pid and pid_alive(run.pid):
        inbox.send_command(run.run, "stop")
        deadline = time.monotonic() + 15
        while pid_alive(run.pid) and time.monotonic() < deadline:
            time.sleep(0.1)


def clean_up(run: Run) -> None:
    if run.pid and pid_alive(run.pid):
        os.kill(run.pid, signal.SIGTERM)
        time.sleep(1)
        if pid_alive(run.pid):
            os.kill(run.pid, signal.SIGKILL)
    subprocess.run(["tmux", "-L", run.socket, "kill-server"], capture_output=True)
    if run.socket_path and Path(run.socket_path).name == run.socket:
        Path(run.socket_path).unlink(missing_ok=True)  # tmux 3.3 leaves the socket file behind


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(own utime+stime, reaped children's utime+stime) of a process, in seconds."""
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system, t.children_user + t.children_system


def on_cpu_seconds(pid: int) -> float:
    """The scheduler's own count of a process's time on a CPU (every thread's /proc/PID/task/*/schedstat, ns).
    utime/stime are sampled at the timer tick: a process that wakes on a timer is running when the tick fires, so a
    few tens of microseconds per wake-up are charged as whole ticks; schedstat counts what really ran."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def tmux_server_pid(socket: str) -> int | None:
    out = subprocess.run(["tmux", "-L", socket, "display-message", "-p", "#{pid}"], capture_output=True, text=True)
    return int(out.stdout) if out.returncode == 0 and out.stdout.strip().isdigit() else None


def tmux_query(socket: str, pane: str, fmt: str) -> str:
    where = ["-t", pane] if pane else []
    return subprocess.run(["tmux", "-L", socket, "display-message", "-p", *where, fmt], capture_output=True,
                          text=True).stdout.strip()


def call_cost_ms(call, n: int = 40) -> float:
    """CPU per call, of this process and the children it reaped (tmux clients), in ms."""
    own0, kids0 = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        call()
    own1, kids1 = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    kids = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
    return 1000 * ((own1 - own0) + kids) / n
