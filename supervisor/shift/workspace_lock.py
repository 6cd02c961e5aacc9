"""One supervisor per workspace, even when two start at the same moment.

The "is another run live here?" check reads the other runs' supervisor.json, which a supervisor writes only once it
is up: two supervisors starting at once both found none and both ran, two agents undoing each other's work in one
repository. Two locks close that window:

- the workspace lock (``.nightshift/workspace.lock``), taken by a supervisor before anything else and held for its
  life (flock: the kernel drops it when the process dies, kill -9 included); a second supervisor refuses at once,
  naming the holder;
- the launch lock (one per workspace path, beside the user's registry, so a refused launch leaves nothing in the
  workspace), held by `nightshift run` from its "is a run live here?" check until its supervisor holds the
  workspace lock, so a second `run` waits, then gets the usual one-line refusal, and no orphan run is created.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from nightshift.supervisor.errors import UserError
from nightshift.supervisor.run.paths import make_private_dir, registry_path, workspace_state_dir

LAUNCH_WAIT = 600.0
SAME_RUN_GRACE = 10.0  # seconds a supervisor waits for its own run's previous supervisor to let go  # a launch runs the preflight (the oracle, the tests): the next one may wait that long


class WorkspaceBusy(UserError):
    pass


def hold_workspace(workspace: Path, run_id: str) -> int:
    """Take the workspace lock for this supervisor's life; returns its fd (close it to let go)."""
    path = make_private_dir(workspace_state_dir(workspace)) / "workspace.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + SAME_RUN_GRACE
    while not _try_lock(fd):
        holder = _holder(fd)
        # The same run's last supervisor (we hold its run lock, so it is on its way out, e.g. a Slurm chain's
        # hand-off) may not have let go of the workspace yet: give it a moment.
        if holder.get("run_id") == run_id and time.monotonic() < deadline:
            time.sleep(0.1)
            continue
        # The holder took the lock but has not written its name yet (a moment): wait for it, so the refusal
        # names the run that is live (a CI run caught "run another run ... pid None" in that moment).
        if not holder.get("run_id") and time.monotonic() < deadline:
            time.sleep(0.02)
            continue
        os.close(fd)
        other = holder.get("run_id", "another run")
        raise WorkspaceBusy(f"run {other} is live in this workspace (supervisor pid {holder.get('pid')} on "
                            f"{holder.get('host')}); one run at a time: `nightshift stop {other}` first, or use "
                            "another clone")
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({"run_id": run_id, "pid": os.getpid(), "host": socket.gethostname()}).encode(), 0)
    return fd


@contextmanager
def launch_lock(workspace: Path, wait: float = LAUNCH_WAIT) -> Iterator[None]:
    """Serialise `nightshift run` in one workspace (``wait`` at most for another launch to finish)."""
    name = hashlib.sha256(str(Path(workspace).resolve()).encode()).hexdigest()[:32]
    try:
        fd = os.open(make_private_dir(registry_path().parent / "launch") / f"{name}.lock", os.O_RDWR | os.O_CREAT,
                     0o600)
    except OSError:
        yield  # a state folder nightshift cannot write: registering the run says so in one line
        return
    try:
        deadline = time.monotonic() + wait
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise WorkspaceBusy(f"another `nightshift run` has been starting in {workspace} for {wait:.0f}s; "
                                    "`nightshift ls` shows it; try again when it is up")
            time.sleep(0.2)
        yield
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(fd: int) -> dict:
    try:
        value = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
