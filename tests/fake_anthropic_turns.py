"""The scripted turns of the fake Messages API (tests/fake_anthropic.py) and their builders.

A ``Turn`` is one answer: content blocks (text, tool_use), an HTTP error with the Anthropic error JSON, or a raw
body; with usage numbers, a delay and an optional match on the request's last user message. See the docstring
of tests/fake_anthropic.py for how the server uses them.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

USAGE_LIMIT_TEXT = "Claude AI usage limit reached|{epoch}"
_ids = itertools.count(1)


@dataclass
class Turn:
    """One scripted answer: content blocks, or an HTTP error, or a raw body."""

    blocks: list[dict] = field(default_factory=list)
    stop_reason: str | None = None
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    delay: float = 0.0
    match: str | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "Turn":
        """A turn from its JSON form (see the module docstring)."""
        opts = {k: d[k] for k in ("input_tokens", "output_tokens", "delay", "match") if k in d}
        if "error" in d:
            return error(int(d["error"]), d.get("type"), d.get("message"), d.get("retry_after"), **opts)
        if "usage_limit" in d:
            return usage_limit(int(d["usage_limit"]), as_error=bool(d.get("as_error")), **opts)
        if "raw" in d:
            return raw(d["raw"], int(d.get("status", 200)), **opts)
        if "tools" in d:
            calls = [tool(c["name"], c.get("input", {})) for c in d["tools"]]
            return tools(*calls, text=d.get("text"), **opts)
        return text(str(d.get("text", "")), **opts)


def tool(name: str, input: dict) -> dict:
    return {"type": "tool_use", "id": f"toolu_fake_{next(_ids):06d}", "name": name, "input": input}


def write(file_path: str, content: str) -> dict:
    return tool("Write", {"file_path": file_path, "content": content})


def bash(command: str, description: str = "run a command") -> dict:
    return tool("Bash", {"command": command, "description": description})


def reply(*blocks: dict | str, **opts: Any) -> Turn:
    made = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    has_tool = any(b["type"] == "tool_use" for b in made)
    opts.setdefault("stop_reason", "tool_use" if has_tool else "end_turn")
    return Turn(blocks=made, **opts)


def text(s: str, **opts: Any) -> Turn:
    return reply(s, **opts)


def tools(*calls: dict, text: str | None = None, **opts: Any) -> Turn:
    return reply(*calls, *([text] if text else []), **opts)


def error(status: int, type: str | None = None, message: str | None = None,
          retry_after: float | None = None, **opts: Any) -> Turn:
    default_type = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}
    etype = type or default_type.get(status, "api_error")
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Turn(status=status, error_type=etype, error_message=message or f"fake {etype}",
                headers=headers, **opts)


def overloaded(**opts: Any) -> Turn:
    return error(529, "overloaded_error", "Overloaded", **opts)


def rate_limited(retry_after: float = 1, **opts: Any) -> Turn:
    return error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit",
                 retry_after=retry_after, **opts)


def server_error(**opts: Any) -> Turn:
    return error(500, "api_error", "Internal server error", **opts)


def usage_limit(reset_epoch: int, as_error: bool = False, **opts: Any) -> Turn:
    message = USAGE_LIMIT_TEXT.format(epoch=int(reset_epoch))
    if as_error:
        # The headers Claude Code reads to tell a plan's usage limit (with its reset time) from a plain 429.
        turn = error(429, "rate_limit_error", message, **opts)
        turn.headers.update({"anthropic-ratelimit-unified-status": "rejected",
                             "anthropic-ratelimit-unified-reset": str(int(reset_epoch)),
                             "anthropic-ratelimit-unified-representative-claim": "five_hour"})
        return turn
    return text(message, **opts)


def raw(body: str, status: int = 200, **opts: Any) -> Turn:
    return Turn(raw_body=body, status=status, **opts)


def message_text(message: dict) -> str:
    """All text of one message: a string content, text blocks, and tool_result contents."""
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            inner = block.get("content", "")
            parts.append(inner if isinstance(inner, str) else message_text({"content": inner}))
    return "\n".join(parts)
