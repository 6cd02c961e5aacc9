"""Is a run's supervisor alive? supervisor.json holds host and pid; its mtime is the heartbeat.

On the same host we check the pid (skipping zombies, which PID 1 may reap late); from another login node
only the heartbeat can tell, since the file is on the shared filesystem. Inside another PID namespace of the same
host (the agent's Stop hook runs in nightshift's namespace) the supervisor's pid means nothing: there the run lock
it holds tells, since a lock is seen across namespaces and at once (a heartbeat can be late during a long oracle).
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.run.private import write_private_json

HEARTBEAT_SECONDS = 5.0
STALE_AFTER = 45.0


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return True


def pid_namespace() -> int | None:
    """This process's PID namespace (the inode of /proc/self/ns/pid), or None where /proc does not say."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def lock_held(lock: Path) -> bool:
    """Does some process hold ``lock`` (the supervisor's run lock)? Tried shared and without waiting, then let go."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def write_supervisor_info(path: Path, **extra: Any) -> None:
    info = {"host": os.uname().nodename, "pid": os.getpid(), "pidns": pid_namespace(), "started": time.time(),
            **extra}
    write_private_json(path, info)


def beat(path: Path) -> None:
    try:
        os.utime(path)
    except FileNotFoundError:
        pass


def supervisor_status(path: Path) -> dict[str, Any]:
    """{"alive": bool, "host", "pid", "heartbeat_age", "local": bool} (alive False when never started)."""
    try:
        info = json.loads(path.read_text())
        age = time.time() - path.stat().st_mtime
    except (FileNotFoundError, ValueError):
        return {"alive": False, "host": None, "pid": None, "heartbeat_age": None, "local": True}
    local = info.get("host") == os.uname().nodename
    if info.get("stopped"):
        alive = False
    elif local and info.get("pidns") not in (None, pid_namespace()):
        alive = lock_held(path.with_name("supervisor.lock"))  # another PID namespace: its pid is not ours to check
    elif local:
        alive = pid_alive(int(info.get("pid", 0)))
    else:
        alive = age < STALE_AFTER
    return {**info, "alive": alive, "heartbeat_age": age, "local": local}


def processes_of_shift(run_dir: Path, shift: int) -> list[int]:
    """Pids (on this host) whose environment marks them as the agent of this run's shift: what survives when its
    pane or server dies without it (a process that ignored SIGHUP). By shift, not turn: a process keeps the turn
    it was launched with while push-backs in its session count turns up. Read from /proc; empty where none."""
    marks = {f"NIGHTSHIFT_RUN_DIR={run_dir}".encode(), f"NIGHTSHIFT_SHIFT={shift}".encode()}
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            env = set((entry / "environ").read_bytes().split(b"\0"))
        except OSError:
            continue
        if marks <= env and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found
