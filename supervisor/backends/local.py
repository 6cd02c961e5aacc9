"""The local backend: each turn a child process in its own session, output to the turn's log file.

For machines without tmux and for tests; a supervisor restarted after a crash finds a still-running turn by
the pid file the backend writes beside the wrapper.
"""
from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

from nightshift.supervisor.backends.base import LaunchSpec, read_exit, write_wrapper
from nightshift.supervisor.run.liveness import pid_alive


class LocalBackend:
    kind = "local"

    def __init__(self) -> None:
        self._children: dict[int, subprocess.Popen] = {}

    def launch(self, spec: LaunchSpec) -> dict[str, Any]:
        wrapper = write_wrapper(spec)
        log = open(spec.log_file, "ab") if spec.log_file else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(["bash", str(wrapper)], cwd=spec.cwd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        self._children[proc.pid] = proc
        spec.wrapper.with_suffix(".pid").write_text(str(proc.pid))
        return {"backend": "local", "pid": proc.pid}

    def find(self, spec: LaunchSpec) -> dict[str, Any] | None:
        try:
            pid = int(spec.wrapper.with_suffix(".pid").read_text())
        except (FileNotFoundError, ValueError):
            return None
        if read_exit(spec) is None and pid_alive(pid):
            return {"backend": "local", "pid": pid}
        return None

    def is_alive(self, target: dict[str, Any]) -> bool:
        child = self._children.get(target["pid"])
        if child is not None:
            return child.poll() is None  # also reaps it
        return pid_alive(target["pid"])

    def terminate(self, target: dict[str, Any]) -> None:
        try:
            os.killpg(target["pid"], signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        child = self._children.pop(target["pid"], None)
        if child is not None:
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(target["pid"], signal.SIGKILL)

    def send_text(self, target: dict[str, Any], text: str) -> bool:
        return False

    def capture(self, target: dict[str, Any], lines: int = 60) -> str:
        return ""

    def attach_command(self, target: dict[str, Any]) -> list[str] | None:
        return None
