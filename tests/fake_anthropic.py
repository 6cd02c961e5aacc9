"""A scripted fake of the Anthropic Messages API on 127.0.0.1, for the real SDK and the real Claude Code CLI.

Only the model is fake: clients talk real HTTP to it (``POST /v1/messages``, streaming SSE or JSON).
Stdlib only; binds 127.0.0.1 on a free port; stops by itself (daemon threads, shutdown on context exit,
and an idle timeout so a leaked server dies).

Turns and their builders live in tests/fake_anthropic_turns.py and are re-exported here.

Usage::

    from tests.fake_anthropic import FakeAnthropic, text, tools, write, bash, error, usage_limit

    with FakeAnthropic([tools(write("a.txt", "hi"), bash("ls")), text("done")]) as fake:
        env = fake.env()                      # ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY=dummy, offline switches
        ...run the client...
        assert fake.requests[-1].last_user_text() == "..."

Script: a queue of ``Turn`` objects; each scripted /v1/messages request consumes the next one. Builders:

- ``text(s)``: a text reply (stop_reason end_turn).
- ``tools(*calls, text=None)``: tool_use blocks (``write(path, content)``, ``bash(cmd)``,
  ``tool(name, input)``), then ``text`` if given (stop_reason tool_use).
- ``reply(*blocks)``: any blocks in order; a plain str is a text block.
- ``error(status, type, message, retry_after=None)``: an HTTP error with the Anthropic error JSON body;
  shortcuts ``overloaded()`` (529), ``rate_limited(retry_after)`` (429), ``server_error()`` (500).
- ``usage_limit(reset_epoch)``: the text "Claude AI usage limit reached|<epoch>" (older Claude Code's form);
  ``usage_limit(epoch, as_error=True)``: a 429 rate_limit_error with the ``anthropic-ratelimit-unified-*``
  headers (status rejected, reset epoch) and the same text as its message. Claude Code 2.1.330 with an API
  key retries it, then ends with is_error, api_error_status 429 and the result
  "API Error: Request rejected (429) · Claude AI usage limit reached|<epoch>".
- ``raw(body, status=200)``: an arbitrary body (e.g. not JSON).

Every builder takes ``input_tokens``/``output_tokens`` (usage reported; estimated from sizes when omitted),
``delay`` (seconds to wait before answering, to test timeouts) and ``match`` (the turn is used only by a
request whose last user message contains that string; other requests get the ``fallback`` reply without
consuming the script). ``Turn.from_dict`` reads the same from JSON (``{"text": "hi"}``, ``{"error": 529}``,
``{"tools": [{"name": "Bash", "input": {"command": "ls"}}], "text": "..."}``, ``{"usage_limit": 1700000000}``).

Side requests: a /v1/messages call without ``tools`` (Claude Code's session title) is answered with
``{"title": "Fake session"}`` without consuming the script when ``side_requests="title"`` (default);
with ``side_requests="script"`` it consumes the script like any other (the judge's requests, if tool-less).

``known_models``: if set, a request for another model gets 404 not_found_error (a refused model).
When the script is empty, requests get ``fallback`` (default: text "(fake model: script exhausted)").

Recorded: ``fake.requests`` (``Recorded``: method, path, headers without secrets, body, kind in
{"script", "side", "fallback", "head", "other"}). ``HEAD /`` returns 200; ``POST /v1/messages/count_tokens``
answers an estimate. ``fake.push(*turns)`` appends turns; ``fake.remaining`` counts unconsumed turns.

Standalone: ``python -m tests.fake_anthropic --script turns.json --port-file PATH`` serves until idle.
"""
from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fake_anthropic_turns import (USAGE_LIMIT_TEXT, Turn, _ids, bash, error, message_text, overloaded,
                                        raw, rate_limited, reply, server_error, text, tool, tools, usage_limit,
                                        write)

__all__ = ["FakeAnthropic", "Recorded", "Turn", "USAGE_LIMIT_TEXT", "bash", "error", "message_text", "overloaded",
           "raw", "rate_limited", "reply", "server_error", "text", "tool", "tools", "usage_limit", "write"]

SECRET_HEADERS = {"x-api-key", "authorization", "cookie", "proxy-authorization"}


@dataclass
class Recorded:
    """One request as the server saw it (secret headers replaced by "<redacted>")."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict | None
    kind: str

    def last_user_text(self) -> str:
        users = [m for m in (self.body or {}).get("messages", []) if m.get("role") == "user"]
        return message_text(users[-1]) if users else ""

    @property
    def system_text(self) -> str:
        system = (self.body or {}).get("system", "")
        return system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)


class FakeAnthropic:
    """The server: start()/stop() or a context manager; see the module docstring."""

    def __init__(self, script: list[Turn] | None = None, *, side_requests: str = "title",
                 fallback: Turn | None = None, known_models: set[str] | None = None,
                 idle_timeout: float = 600.0, title: str = "Fake session", ports: tuple[int, ...] = ()) -> None:
        if side_requests not in ("title", "script"):
            raise ValueError("side_requests must be 'title' or 'script'")
        self.script: list[Turn] = list(script or [])
        self.side_requests = side_requests
        self.fallback = fallback or text("(fake model: script exhausted)")
        self.known_models = known_models
        self.idle_timeout = idle_timeout
        self.title = title
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.last_activity = time.monotonic()
        self.httpd: ThreadingHTTPServer | None = None
        self.ports = ports  # tried in order before any free port (a test about what a port's digits may hold)

    # lifecycle
    def start(self) -> "FakeAnthropic":
        handler = type("Handler", (_Handler,), {"fake": self})
        for port in (*self.ports, 0):
            try:
                self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
                break
            except OSError:
                continue
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                         name="fake-anthropic", daemon=True).start()
        threading.Thread(target=self._idle_watch, name="fake-anthropic-idle", daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd and not self.stopped.is_set():
            self.stopped.set()
            self.httpd.shutdown()
            self.httpd.server_close()

    def __enter__(self) -> "FakeAnthropic":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _idle_watch(self) -> None:
        # A leaked server (a test that forgot to stop it) shuts itself down after idle_timeout.
        while not self.stopped.wait(0.5):
            if time.monotonic() - self.last_activity > self.idle_timeout:
                threading.Thread(target=self.stop, daemon=True).start()
                return

    # what tests use
    @property
    def port(self) -> int:
        assert self.httpd, "start() the server first"
        return self.httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, api_key: str = "dummy") -> dict[str, str]:
        """Environment pointing a client (SDK or Claude Code) at this server, with no other traffic."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": api_key,
                "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1"}

    def push(self, *turns: Turn) -> None:
        with self.lock:
            self.script.extend(turns)

    @property
    def remaining(self) -> int:
        with self.lock:
            return len(self.script)

    def message_requests(self, kind: str | None = "script") -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith("/v1/messages")
                    and "count_tokens" not in r.path and (kind is None or r.kind == kind)]

    # dispatch
    def choose(self, body: dict) -> tuple[Turn, str]:
        """The turn answering this request, and the kind it is recorded as."""
        if self.side_requests == "title" and not body.get("tools"):
            return text(json.dumps({"title": self.title})), "side"
        last_user = Recorded("POST", "", {}, body, "").last_user_text()
        with self.lock:
            if not self.script:
                return self.fallback, "fallback"
            head = self.script[0]
            if head.match is not None and head.match not in last_user:
                return self.fallback, "fallback"
            return self.script.pop(0), "script"

    def record(self, method: str, path: str, headers: dict[str, str], body: dict | None, kind: str) -> None:
        clean = {k.lower(): ("<redacted>" if k.lower() in SECRET_HEADERS else v) for k, v in headers.items()}
        with self.lock:
            self.requests.append(Recorded(method, path, clean, body, kind))
            self.last_activity = time.monotonic()


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic
    server_version = "fake-anthropic/1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_HEAD(self) -> None:
        self.fake.record("HEAD", self.path, dict(self.headers), None, "head")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.fake.record("GET", self.path, dict(self.headers), None, "other")
        self._json(200 if self.path in ("/", "") else 404,
                   {} if self.path in ("/", "") else _error_body("not_found_error", f"no route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw_body or b"{}")
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            self.fake.record("POST", self.path, dict(self.headers), None, "other")
            return self._json(400, _error_body("invalid_request_error", "body is not a JSON object"))
        route = self.path.split("?")[0]
        if route == "/v1/messages/count_tokens":
            self.fake.record("POST", self.path, dict(self.headers), body, "other")
            return self._json(200, {"input_tokens": _estimate_tokens(body)})
        if route != "/v1/messages":
            self.fake.record("POST", self.path, dict(self.headers), body, "other")
            return self._json(404, _error_body("not_found_error", f"no route {route}"))
        missing = [k for k in ("model", "max_tokens", "messages") if k not in body]
        if missing:
            self.fake.record("POST", self.path, dict(self.headers), body, "other")
            return self._json(400, _error_body("invalid_request_error", f"{missing[0]}: Field required"))
        if self.fake.known_models is not None and body["model"] not in self.fake.known_models:
            self.fake.record("POST", self.path, dict(self.headers), body, "other")
            return self._json(404, _error_body("not_found_error", f"model: {body['model']}"))
        turn, kind = self.fake.choose(body)
        self.fake.record("POST", self.path, dict(self.headers), body, kind)
        if turn.delay and self.fake.stopped.wait(turn.delay):
            return  # the server is stopping: drop the request
        self._answer(turn, body)

    def _answer(self, turn: Turn, body: dict) -> None:
        if turn.raw_body is not None:
            return self._send(turn.status, turn.raw_body.encode(), "application/json", turn.headers)
        if turn.status != 200:
            return self._json(turn.status, _error_body(turn.error_type or "api_error", turn.error_message or ""),
                              turn.headers)
        usage = {"input_tokens": turn.input_tokens if turn.input_tokens is not None else _estimate_tokens(body),
                 "output_tokens": turn.output_tokens if turn.output_tokens is not None
                 else max(1, len(json.dumps(turn.blocks)) // 4),
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        message = {"id": f"msg_fake_{next(_ids):06d}", "type": "message", "role": "assistant",
                   "model": body.get("model", "claude-fake"), "content": turn.blocks,
                   "stop_reason": turn.stop_reason or "end_turn", "stop_sequence": None, "usage": usage}
        if body.get("stream"):
            return self._stream(message)
        self._json(200, message)

    def _stream(self, message: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        usage = message["usage"]
        start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
        events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start}),
                                          ("ping", {"type": "ping"})]
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                head, chunks = {"type": "text", "text": ""}, _split(block["text"])
                deltas = [{"type": "text_delta", "text": c} for c in chunks]
            else:
                head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": c}
                          for c in _split(json.dumps(block["input"]))]
            events.append(("content_block_start",
                           {"type": "content_block_start", "index": index, "content_block": head}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
                       for d in deltas]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                         "usage": {"output_tokens": usage["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        try:
            for name, data in events:
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing to do
        self.close_connection = True

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers or {})

    def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_fake")
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout)


def _error_body(etype: str, message: str) -> dict:
    return {"type": "error", "error": {"type": etype, "message": message}}


def _estimate_tokens(body: dict) -> int:
    return max(1, len(json.dumps(body.get("messages", []))) // 4)


def _split(s: str) -> list[str]:
    """Two or more chunks, so clients really assemble deltas (an empty string stays one chunk)."""
    if len(s) < 2:
        return [s]
    mid = len(s) // 2
    return [s[:mid], s[mid:]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a scripted fake Anthropic Messages API on 127.0.0.1.")
    parser.add_argument("--script", type=Path, help="JSON list of turns (see Turn.from_dict)")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--side-requests", choices=["title", "script"], default="title")
    parser.add_argument("--idle-timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    turns = [Turn.from_dict(d) for d in json.loads(args.script.read_text())] if args.script else []
    fake = FakeAnthropic(turns, side_requests=args.side_requests, idle_timeout=args.idle_timeout).start()
    if args.port_file:
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(str(fake.port))
        tmp.rename(args.port_file)
    print(fake.url, flush=True)
    try:
        fake.stopped.wait()
    except KeyboardInterrupt:
        fake.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
