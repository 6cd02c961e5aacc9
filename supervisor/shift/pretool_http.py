"""The resident helper's HTTP door: Claude Code's ``"type": "http"`` PreToolUse hook POSTs the call's JSON here and
reads the decision from the answer's body, with no process started per call.

The door is a listening TCP socket on 127.0.0.1 the helper holds outside the agent's namespace: in the namespace's
own loopback (``[policy] network = false``; made inside by `pretool_door` and handed over, so the agent can neither
end it nor take its port) or the host's loopback on an ephemeral port (network on). Only ``POST /pretool/<key>``
is served, the key being random per turn and written only in the 0600 settings file: another user of the machine
reaches nothing, and the agent, which may read that file, can only ask for decisions: there is no way to change a
rule or end the helper over HTTP. A request that is not a readable call (malformed, oversized) is refused with a
line the agent reads and recorded like any refusal; the CLI blocks the call on any failure (``onFailure: "block"``).
"""
from __future__ import annotations

import json
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from nightshift.supervisor.run.private import write_private_json
from nightshift.supervisor.shift.pretool import answer
from nightshift.supervisor.shift.policy_check import record_refusal

MAX_REQUEST = 32 << 20  # bytes: a Write carries its whole file; beyond this the call is refused, never read


def refusal(rule: str, message: str) -> bytes:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                              "permissionDecisionReason": f"nightshift ({rule}): {message}"}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the CLI's next call reuses the connection
    server: "DecisionServer"

    def log_message(self, format: str, *args) -> None:  # the turn's pane is the agent's: print nothing
        pass

    def setup(self) -> None:
        super().setup()
        # One small answer per call on a kept-alive connection: without this, Nagle's algorithm and the client's
        # delayed ACK hold each answer ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _send(self, status: int, body: bytes, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self._headers_buffer.append(b"\r\n" + body)  # headers and body in one write (end_headers flushes it)
        self.flush_headers()

    def do_POST(self) -> None:
        srv = self.server
        if self.path != srv.path:
            self._send(404, b'{"error": "not found"}', close=True)
            return
        try:
            length = int(self.headers.get("Content-Length") or "-1")
        except ValueError:
            length = -1
        if length < 0 or length > MAX_REQUEST:
            why = ("the call was larger than nightshift reads" if length > MAX_REQUEST else
                   "the call's request had no length")
            self._record("hook_input", f"{why}; refused (write large files from a script, in parts)")
            self._send(200, refusal("hook_input", f"{why}; refused (write large files from a script, in parts)"),
                       close=True)
            return
        try:
            payload = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, OSError):
            payload = None
        if not isinstance(payload, dict) or not isinstance(payload.get("tool_input"), dict):
            message = "the hook's request was not a tool call nightshift can read; refused"
            self._record("hook_input", message)
            self._send(200, refusal("hook_input", message))
            return
        out = answer(srv.run_dir, srv.token, payload, srv.shift, srv.policy.current(), decided_by="helper")
        self._send(200, out.encode() if out else b"{}")

    def do_GET(self) -> None:
        self._send(405, b'{"error": "POST a tool call"}', close=True)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def _record(self, rule: str, message: str) -> None:
        try:
            record_refusal(self.server.run_dir, {"tool": "?", "input": "", "rule": rule, "message": message,
                                                 "shift": self.server.shift, "token": self.server.token,
                                                 "decided_by": "helper"})
        except OSError:
            pass


class DecisionServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, listener: socket.socket, policy, run_dir: str, token: str, shift: str | None,
                 address: tuple[str, int] | None = None):
        """``listener``: bound and listening (or, with ``address``, a stand-in until the door's socket comes)."""
        self.address = address or listener.getsockname()[:2]
        super().__init__(self.address, _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = listener
        self.policy, self.run_dir, self.token, self.shift = policy, run_dir, token, shift
        self.path = f"/pretool/{secrets.token_urlsafe(18)}"

    @property
    def url(self) -> str:
        return f"http://{self.address[0]}:{self.address[1]}{self.path}"

    def start(self) -> None:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()


def host_listener() -> socket.socket:
    """The door on the host's loopback (the namespace shares it): an ephemeral port, never one already taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


def point_settings(settings_file: str, url: str) -> None:
    """Write the helper's URL into the turn's Claude Code settings (PreToolUse's HTTP hook and the allow-list of
    hook URLs), atomically and private; the agent's CLI reads them when it starts."""
    with open(settings_file, encoding="utf-8") as fh:
        settings = json.load(fh)
    for group in settings.get("hooks", {}).get("PreToolUse", []):
        for hook in group.get("hooks", []):
            if hook.get("type") == "http":
                hook["url"] = url
    settings["allowedHttpHookUrls"] = [url]
    write_private_json(settings_file, settings)
