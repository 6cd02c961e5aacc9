"""Fixtures for the core loop: real git workspaces, a scripted command agent, supervisors in subprocesses,
and cleanup of every per-run tmux server by its private socket.

The scripted agent (``agent.py`` in the workspace) reads ``agent_script.json``: for each ``s<shift>t<turn>``
(or ``default``) a list of actions: ``["write", path, text]``, ``["append", path, text]``, ``["sleep", s]``,
``["claim", status, summary]``, ``["exit", code]``, ``["shell", command]`` (bash, in the workspace). It is not a model; it only does what the test says.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace

AGENT = r'''
import json, os, subprocess, sys, time
from pathlib import Path
key = f"s{os.environ['NIGHTSHIFT_SHIFT']}t{os.environ['NIGHTSHIFT_TURN']}"
script = json.loads(Path("agent_script.json").read_text())
print(f"scripted agent {key}", flush=True)
for action in script.get(key, script.get("default", [])):
    kind, args = action[0], action[1:]
    if kind == "write":
        Path(args[0]).parent.mkdir(parents=True, exist_ok=True); Path(args[0]).write_text(args[1])
    elif kind == "append":
        with open(args[0], "a") as fh: fh.write(args[1])
    elif kind == "sleep":
        time.sleep(float(args[0]))
    elif kind == "claim":
        subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "claim", args[0], "--summary", args[1]], check=True)
    elif kind == "exit":
        sys.exit(int(args[0]))
    elif kind == "shell":
        subprocess.run(["bash", "-c", args[0]])
'''

CONFIG = """
goal = "make check.txt say ok"

[agent]
kind = "command"
command = "{python} agent.py"
max_pushbacks_per_shift = {pushbacks}

[backend]
kind = "{backend}"

[limits]
max_shifts = {max_shifts}
breaker_stops = {breaker}

[verify]
test_command = "{test_command}"
require_changelog = {require_changelog}
require_plan = false
{extra}
"""


def require_tool(name: str) -> None:
    """A missing real part fails in CI and skips loudly elsewhere."""
    if shutil.which(name):
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is required in CI but not installed (make test installs it)")
    pytest.skip(f"{name} not installed: this test needs the real {name}")


def mount_tmpfs(path: Path, size: str) -> None:
    """A small tmpfs at ``path`` (a full or read-only disk made real). Mounting needs root with CAP_SYS_ADMIN, as
    the suite runs here and in CI: where it is refused, the test fails in CI and skips loudly elsewhere, like a
    missing tool. Unmount with ``unmount``."""
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True,
                          text=True)
    if proc.returncode == 0:
        return
    why = (proc.stderr.strip() or f"mount exited {proc.returncode}").splitlines()[0]
    if os.environ.get("CI") == "true":
        pytest.fail(f"a {size} tmpfs is required in CI but could not be mounted ({why}): run the suite as root "
                    "with CAP_SYS_ADMIN (a container needs --cap-add SYS_ADMIN)")
    pytest.skip(f"SKIPPED LOUDLY: cannot mount a {size} tmpfs ({why}); run the suite as root to test this")


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


class Workspace:
    def __init__(self, path: Path):
        self.path = path

    def configure(self, script: dict, backend: str = "tmux", test_command: str = "test \"$(cat check.txt)\" = ok",
                  pushbacks: int = 3, max_shifts: int = 5, breaker: int = 4, require_changelog: bool = False,
                  extra: str = "") -> "Workspace":
        if backend == "tmux":
            require_tool("tmux")
        (self.path / "agent_script.json").write_text(json.dumps(script))
        (self.path / "nightshift.toml").write_text(CONFIG.format(
            python=sys.executable, backend=backend, test_command=test_command.replace('"', '\\"'),
            pushbacks=pushbacks, max_shifts=max_shifts, breaker=breaker,
            require_changelog=str(require_changelog).lower(), extra=extra))
        subprocess.run(["git", "add", "-A"], cwd=self.path, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup"], cwd=self.path,
                       check=True)
        return self

    def create_run(self):
        from nightshift.supervisor.shift.launcher import create_run, resolve_config
        return create_run(self.path, resolve_config(self.path))

    def events(self, run) -> list[dict]:
        from nightshift.supervisor.run.events import read_events
        return read_events(run.events).events

    def types(self, run) -> list[str]:
        return [e["type"] for e in self.events(run)]


@pytest.fixture
def workspace(tmp_path):
    require_tool("git")
    path = tmp_path / "ws"
    path.mkdir()
    init_workspace(path, InitOptions(goal="make check.txt say ok", agent="command"))
    (path / "agent.py").write_text(AGENT)
    yield Workspace(path)
    for run_dir in (path / ".nightshift" / "runs").glob("*"):
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)
        kill_supervisor(run_dir)


def kill_supervisor(run_dir: Path) -> None:
    try:
        pid = json.loads((run_dir / "supervisor.json").read_text())["pid"]
        if pid != os.getpid():
            os.kill(pid, 9)
    except (FileNotFoundError, ValueError, KeyError, ProcessLookupError, PermissionError):
        pass


def supervise(run, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The supervisor in a subprocess (as `nightshift run` starts it: its argv, its folder), waited for."""
    from nightshift.supervisor.shift.launcher import supervise_argv
    return subprocess.run(supervise_argv(run), capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=run.root)


def nightshift(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 60,
               input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**os.environ, **(env or {})}, input=input)


def wait_for(predicate, timeout: float = 30, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
