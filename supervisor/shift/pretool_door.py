"""`pretool_door SOCKET PORT`: run inside the turn's namespace (``[policy] network = false``) before the agent
starts: opens the listening socket of the decision helper's HTTP door on the namespace's own 127.0.0.1:PORT and
hands it to the helper outside (over the unix socket SOCKET, whose folder is read-only inside), then exits.

The helper, in the host's PID namespace, is then the only holder of the port: the agent can neither end it nor
bind the port while it lives. Exit status 0 when the helper took the socket; otherwise a line on stderr (the port
taken, no helper) and 1: the hook's URL then refuses every call (it fails closed).
"""
from __future__ import annotations

import socket
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: pretool_door SOCKET PORT", file=sys.stderr)
        return 2
    path, port = argv[0], int(argv[1])
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError as exc:
        print(f"nightshift: the decision helper's port 127.0.0.1:{port} cannot be opened in the namespace ({exc}); "
              "tool calls are refused this turn", file=sys.stderr)
        _close_the_door(path)
        return 1
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10)
            conn.connect(path)
            socket.send_fds(conn, [b"door"], [listener.fileno()])
            if conn.recv(2) != b"ok":
                raise OSError("the helper did not take the door")
    except OSError as exc:
        print(f"nightshift: the decision helper did not take its door ({exc}); tool calls are refused this turn",
              file=sys.stderr)
        return 1
    return 0


def _close_the_door(path: str) -> None:
    """Tell the helper no door comes: it takes only the first connection, so no later one (the agent's) counts."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(10)
            conn.connect(path)
            conn.sendall(b"none")
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
