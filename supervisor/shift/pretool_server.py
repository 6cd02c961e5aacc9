"""The PreToolUse decision, resident: one helper per turn answers every tool call's hook over a unix socket, so a
call pays a shell and `socat` (a few ms) instead of a Python interpreter starting (~40 ms on a login node).

It runs outside the agent's namespace (started by the turn's wrapper, beside the API proxy), with the wrapper's
environment (the run, the shift's token); its socket's folder is bound read-only at /tmp/.pretool inside, so the
agent can neither replace the socket nor end the helper. The hook command tries the socket first and falls back to
the plain hook (`pretool.py`) when it is missing or refuses the connection, so a helper that is gone never leaves a
call undecided. The policy is read again when policy.json changes (a test that passed mid-shift is protected at
once). The helper ends with the wrapper that started it.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading

from supervisor.shift.pretool import answer, load_policy

INSIDE = "/tmp/.pretool"  # where the socket's folder is seen inside the namespace (a short path: sun_path is small)
NAME = "s"


class Policy:
    """policy.json, read again only when its size or mtime changed (a stat per call)."""

    def __init__(self, run_dir: str):
        self.path, self.run_dir = os.path.join(run_dir, "policy.json"), run_dir
        self.key: tuple | None = None
        self.doc: dict | None = None
        self.lock = threading.Lock()

    def current(self) -> dict | None:
        try:
            st = os.stat(self.path)
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        with self.lock:
            if key != self.key:
                self.key, self.doc = key, load_policy(self.run_dir)
            return self.doc


def _handle(conn: socket.socket, policy: Policy, run_dir: str, token: str, shift: str | None) -> None:
    with conn:
        conn.settimeout(30)
        chunks = []  # read whole, however large: a Write's payload holds the file it writes
        try:
            while chunk := conn.recv(1 << 20):
                chunks.append(chunk)
            payload = json.loads(b"".join(chunks) or b"{}")
        except (OSError, ValueError):
            return  # garbage or a broken client: nothing to decide (the client falls back to nothing: allowed)
        if isinstance(payload, dict):
            out = answer(run_dir, token, payload, shift, policy.current(), decided_by="helper")
            if out:
                try:
                    conn.sendall(out.encode() + b"\n")
                except OSError:
                    pass


def serve(path: str) -> None:
    run_dir, token = os.environ["NIGHTSHIFT_RUN_DIR"], os.environ["NIGHTSHIFT_TOKEN"]
    shift = os.environ.get("NIGHTSHIFT_SHIFT")
    folder, name = os.path.split(path)
    os.chdir(folder)  # bind by the short name: the folder's full path may pass sun_path's ~108 bytes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name + ".new")
    os.chmod(name + ".new", 0o600)
    server.listen(64)
    os.replace(name + ".new", name)  # the socket appears whole: the wrapper waits for it before the agent starts
    policy, parent = Policy(run_dir), os.getppid()
    server.settimeout(1.0)
    while os.getppid() == parent:  # ends with the wrapper, even when the wrapper was killed
        try:
            conn, _ = server.accept()
        except socket.timeout:
            continue
        threading.Thread(target=_handle, args=(conn, policy, run_dir, token, shift), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not os.environ.get("NIGHTSHIFT_RUN_DIR") or not os.environ.get("NIGHTSHIFT_TOKEN"):
        print("usage: pretool_server SOCKET (inside a turn's wrapper)", file=sys.stderr)
        return 2
    try:
        serve(argv[0])
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
