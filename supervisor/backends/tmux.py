"""The tmux backend: each turn in a window of the run's own tmux server (a private per-run socket).

A per-run server (``tmux -L ns-<run id>``) is started by the `nightshift run` that created it, so the agent
inherits that shell's environment (credentials included) without anything being written down, and the
supervisor runs in the same server, detached from the SSH connection. Panes stay after their process ends
(remain-on-exit) so the last screen can still be read.

A target carries the identity of the server it lives in (``server``: the server's pid and start time). A
server that died (a reboot, the OOM killer, `tmux kill-server`) and was started again on the same socket
reuses pane ids (``%0``...), so a target from a dead server is never acted on: not killed, typed into or read.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from typing import Any

import libtmux
from libtmux.exc import LibTmuxException

from nightshift.supervisor.backends.base import AGENT_SESSION, LaunchSpec, socket_for, write_wrapper
from nightshift.supervisor.run.liveness import pid_alive
from nightshift.supervisor.errors import UserError

class TmuxMissing(UserError):
    pass


def require_tmux() -> str:
    path = shutil.which("tmux")
    if not path:
        raise TmuxMissing("tmux not found; install it (apt-get install tmux) or use --backend local")
    return path


class TmuxBackend:
    kind = "tmux"

    def __init__(self, socket_name: str | None, run_id: str):
        require_tmux()
        self.socket_name = socket_name or socket_for(run_id)
        self.server = libtmux.Server(socket_name=self.socket_name)
        self._identity: str | None = None  # the server's identity while its process lives (server_identity)

    def _session(self, spec: LaunchSpec):
        try:
            found = self.server.sessions.filter(session_name=AGENT_SESSION)
        except LibTmuxException:
            found = []
        return found[0] if found else None

    def _window(self, name: str):
        session = self._session(None)  # type: ignore[arg-type]
        if session is None:
            return None
        matches = [w for w in session.windows if w.window_name == name]
        return matches[0] if matches else None

    def launch(self, spec: LaunchSpec) -> dict[str, Any]:
        """One tmux call: remain-on-exit is on before the window exists, so an agent that exits at once (a typo
        in its command) leaves a dead pane and its exit file instead of a vanished window (or server)."""
        wrapper = write_wrapper(spec)
        window = ["-P", "-F", "#{pane_id} #{pane_pid}", "-n", spec.name, "-c", str(spec.cwd),
                  f"bash {shlex.quote(str(wrapper))}"]
        if self._session(spec) is None:
            make = ["new-session", "-d", "-s", AGENT_SESSION, "-x", "200", "-y", "50", *window]
        else:
            make = ["new-window", "-d", "-t", f"{AGENT_SESSION}:", *window]
        argv = ["tmux", "-L", self.socket_name, "set-option", "-g", "remain-on-exit", "on", ";", *make]
        if spec.log_file:
            argv += [";", "pipe-pane", "-o", "-t", f"{AGENT_SESSION}:{spec.name}",
                     f"cat >> {shlex.quote(str(spec.log_file))}"]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or len(proc.stdout.split()) < 2:
            raise TmuxMissing(f"tmux could not start turn {spec.name} on socket {self.socket_name}: "
                              f"{proc.stderr.strip() or 'no pane'}; "
                              f"check `{shlex.join(['tmux', '-L', self.socket_name, 'ls'])}`")
        pane_id, pane_pid = proc.stdout.split()[:2]
        return {**self._target(spec.name, pane_id), "pane_pid": int(pane_pid)}

    def server_identity(self) -> str | None:
        """``"<server pid>:<start time>"`` of the server now on our socket, or None when none runs.

        Asked before every call on a pane (owns()), so it is kept while that server's process lives: a tmux call
        costs a process and a socket round trip, a pid check one kill(0). A server that died is asked afresh
        (a new one on the socket has another pid; it cannot start while the old pid lives)."""
        cached = self._identity
        if cached and pid_alive(int(cached.split(":")[0])):
            return cached
        proc = subprocess.run(["tmux", "-L", self.socket_name, "list-sessions", "-F", "#{pid}:#{start_time}"],
                              capture_output=True, text=True, check=False)
        lines = proc.stdout.split()
        self._identity = lines[0] if proc.returncode == 0 and lines else None
        return self._identity

    def _target(self, window: str, pane_id: str) -> dict[str, Any]:
        return {"backend": "tmux", "socket": self.socket_name, "session": AGENT_SESSION, "window": window,
                "pane": pane_id, "server": self.server_identity(), "host": os.uname().nodename}

    def owns(self, target: dict[str, Any]) -> bool:
        """Does ``target`` belong to the server running now? A target without an identity (recorded before
        identities were) is trusted only while its pane's process lives."""
        if target.get("socket", self.socket_name) != self.socket_name or not self._here(target):
            return False
        server = target.get("server")
        if server is None:
            return bool(target.get("pane_pid")) and pid_alive(int(target["pane_pid"]))
        return server == self.server_identity()

    def find(self, spec: LaunchSpec) -> dict[str, Any] | None:
        window = self._window(spec.name)
        if window is None:
            return None
        pane = window.panes[0]
        if pane.pane_dead == "1":
            return None
        return self._target(window.window_name, pane.pane_id)

    def _pane(self, target: dict[str, Any]):
        if not self.owns(target):
            return None  # a pane id of a dead server may name another pane (even the supervisor's) now
        try:
            return self.server.panes.get(pane_id=target["pane"], default=None)
        except (LibTmuxException, KeyError):
            return None

    @staticmethod
    def _here(target: dict[str, Any]) -> bool:
        """Pids mean something only on their host (a continuation batch job may run on another node)."""
        return target.get("host", os.uname().nodename) == os.uname().nodename

    def is_alive(self, target: dict[str, Any]) -> bool:
        if not self._here(target):
            return False
        server = str(target.get("server") or "")
        if target.get("pane_pid") and server:
            # The pane's process and its server on this host: no tmux call. A process that outlived its server
            # (it ignored SIGHUP) is out of our reach: the server that could type into or end it is gone.
            return pid_alive(int(target["pane_pid"])) and pid_alive(int(server.split(":")[0]))
        pane = self._pane(target)
        return pane is not None and pane.pane_dead != "1"

    def terminate(self, target: dict[str, Any]) -> None:
        if not self.owns(target):
            return  # its server is gone, and the pane with it
        subprocess.run(["tmux", "-L", self.socket_name, "kill-window", "-t", f"{target['pane']}"],
                       capture_output=True, check=False)

    def send_text(self, target: dict[str, Any], text: str) -> bool:
        pane = self._pane(target)
        if pane is None:
            return False
        # Bracketed paste keeps a multi-line message as one user message (see notes/claude-code-offline.md).
        subprocess.run(["tmux", "-L", self.socket_name, "load-buffer", "-b", "nightshift", "-"], input=text.encode(),
                       check=False, capture_output=True)
        subprocess.run(["tmux", "-L", self.socket_name, "paste-buffer", "-p", "-d", "-b", "nightshift", "-t",
                        target["pane"]], check=False, capture_output=True)
        pane.send_keys("", enter=True)
        return True

    def send_keys(self, target: dict[str, Any], *keys: str) -> bool:
        if self._pane(target) is None:
            return False
        done = subprocess.run(["tmux", "-L", self.socket_name, "send-keys", "-t", target["pane"], *keys],
                              check=False, capture_output=True)
        return done.returncode == 0

    def capture(self, target: dict[str, Any], lines: int = 60) -> str:
        pane = self._pane(target)
        if pane is None:
            return ""
        return "\n".join((pane.capture_pane() or [])[-lines:])

    def attach_command(self, target: dict[str, Any]) -> list[str] | None:
        return ["tmux", "-L", target.get("socket", self.socket_name), "attach", "-t",
                f"{target['session']}:{target['window']}"]

    def kill_server(self) -> None:
        subprocess.run(["tmux", "-L", self.socket_name, "kill-server"], capture_output=True, check=False)
        self._identity = None
