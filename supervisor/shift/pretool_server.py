"""The PreToolUse decision, resident: one helper per turn answers every tool call's hook over a unix socket, so a
call pays a shell and `socat` (a few ms) instead of a Python interpreter starting (~40 ms on a login node).

It runs outside the agent's namespace (started by the turn's wrapper, beside the API proxy), with the wrapper's
environment (the run, the shift's token); its socket's folder is bound read-only at /tmp/.pretool inside, so the
agent can neither replace the socket nor end the helper. The hook command tries the socket first and falls back to
the plain hook (`pretool.py`) when it is missing or refuses the connection, so a helper that is gone never leaves a
call undecided. The policy is read again when policy.json changes (a test that passed mid-shift is protected at
once). The helper ends with the wrapper that started it.

With ``--http host|door:PORT --settings FILE`` it also serves the HTTP hook (shift/pretool_http.py): on an
ephemeral port of the host's loopback, or on the namespace's own 127.0.0.1:PORT through the listening socket
`pretool_door` opens inside and hands over on the ``d`` socket beside ``s`` (taken once, before the agent starts).
It writes its URL into the turn's settings FILE before ``s`` appears, so the agent starts with it.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading

from nightshift.supervisor.shift.pretool import answer, load_policy
from nightshift.supervisor.shift.pretool_http import DecisionServer, host_listener, point_settings

INSIDE = "/tmp/.pretool"  # where the socket's folder is seen inside the namespace (a short path: sun_path is small)
NAME = "s"
DOOR = "d"


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


def _take_door(door: socket.socket, port: int, decisions: DecisionServer) -> None:
    """Take the listening socket `pretool_door` hands over from inside, on the first connection only: whatever it
    brings (a door that could not open its port connects to say so), the door's socket is then closed, so nothing
    the agent hands over later is ever served (the agent would hold such a socket too, and could answer on it)."""
    door.settimeout(120)
    try:
        conn, _ = door.accept()
        with conn:
            conn.settimeout(10)
            _, fds, _, _ = socket.recv_fds(conn, 16, 4)
            listener = None
            for fd in fds:
                sock = socket.socket(fileno=fd)
                if listener is None and _is_door(sock, port):
                    listener = sock
                else:
                    sock.close()
            if listener is not None:
                decisions.socket = listener
                decisions.start()
                conn.sendall(b"ok")
    except OSError:
        return  # no door within the limit: the hook's URL refuses every call (fails closed)
    finally:
        door.close()
        try:
            os.unlink(DOOR)
        except OSError:
            pass


def _is_door(sock: socket.socket, port: int) -> bool:
    try:
        return (sock.family == socket.AF_INET and sock.type == socket.SOCK_STREAM
                and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) == 1
                and sock.getsockname() == ("127.0.0.1", port))
    except OSError:
        return False


def serve(path: str, http: str | None = None, settings: str | None = None) -> None:
    run_dir, token = os.environ["NIGHTSHIFT_RUN_DIR"], os.environ["NIGHTSHIFT_TOKEN"]
    shift = os.environ.get("NIGHTSHIFT_SHIFT")
    folder, name = os.path.split(path)
    os.chdir(folder)  # bind by the short name: the folder's full path may pass sun_path's ~108 bytes
    policy, parent = Policy(run_dir), os.getppid()
    if http is not None and settings:
        if http == "host":
            decisions = DecisionServer(host_listener(), policy, run_dir, token, shift)
            decisions.start()
        else:  # "door:PORT": the namespace's own loopback, opened inside and handed over
            port = int(http.split(":", 1)[1])
            placeholder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # replaced by the door's socket
            decisions = DecisionServer(placeholder, policy, run_dir, token, shift, address=("127.0.0.1", port))
            door = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            door.bind(DOOR)
            os.chmod(DOOR, 0o600)
            door.listen(4)
            threading.Thread(target=_take_door, args=(door, port, decisions), daemon=True).start()
        point_settings(settings, decisions.url)
    with open("pid.new", "w") as fh:  # for the supervisor's check at a stop (same host) and tests
        fh.write(f"{os.getpid()} {socket.gethostname()}")
    os.replace("pid.new", "pid")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name + ".new")
    os.chmod(name + ".new", 0o600)
    server.listen(64)
    os.replace(name + ".new", name)  # the socket appears whole: the wrapper waits for it before the agent starts
    server.settimeout(1.0)
    while os.getppid() == parent:  # ends with the wrapper, even when the wrapper was killed
        try:
            conn, _ = server.accept()
        except socket.timeout:
            continue
        threading.Thread(target=_handle, args=(conn, policy, run_dir, token, shift), daemon=True).start()


def main(argv: list[str]) -> int:
    http = settings = None
    if len(argv) == 5 and argv[1] == "--http" and argv[3] == "--settings" and \
            (argv[2] == "host" or argv[2].startswith("door:") and argv[2][5:].isdigit()):
        http, settings = argv[2], argv[4]
    elif len(argv) != 1:
        argv = []
    if not argv or not os.environ.get("NIGHTSHIFT_RUN_DIR") or not os.environ.get("NIGHTSHIFT_TOKEN"):
        print("usage: pretool_server SOCKET [--http host|door:PORT --settings FILE] (inside a turn's wrapper)",
              file=sys.stderr)
        return 2
    try:
        serve(argv[0], http, settings)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
