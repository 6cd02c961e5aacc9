"""What Claude Code's own records say about a turn: the stream-json ``result`` line of a headless turn, the
transcript JSONL of an interactive session, and API limits (overload, rate limit, "usage limit reached|<epoch>")
turned into a time to wait until.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.run import untrusted
from nightshift.supervisor.agents.base import StopInfo

USAGE_LIMIT = re.compile(r"usage limit reached\|(\d{9,11})", re.I)
OVERLOAD = re.compile(r"\b(529|overloaded)\b", re.I)
RATE_LIMIT = re.compile(r"\b429\b|rate.?limit", re.I)
BACKOFF_SECONDS = 60.0


def limit_wait(text: str, now: float | None = None) -> float | None:
    """Epoch seconds to wait until when ``text`` reports an API limit, else None."""
    now = time.time() if now is None else now
    match = USAGE_LIMIT.search(text or "")
    if match:
        return max(float(match.group(1)), now + 1.0)
    if OVERLOAD.search(text or "") or RATE_LIMIT.search(text or ""):
        return now + BACKOFF_SECONDS
    return None


def context_tokens(usage: dict[str, Any]) -> int:
    return sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                  "cache_creation_input_tokens"))


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        text = untrusted.read_text(path.parent, path.name)  # the agent's own folder: no link is followed
    except OSError:
        return out
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a truncated last line of a killed process
        if isinstance(item, dict):
            out.append(item)
    return out


def read_stream(path: Path, exit_code: int | None) -> StopInfo:
    """A headless turn: the ``result`` line (cost, usage, session, error), else what the stream shows."""
    items = _lines(path)
    result = next((i for i in reversed(items) if i.get("type") == "result"), None)
    session = next((i.get("session_id") for i in reversed(items) if i.get("session_id")), None)
    last_usage = next((i["message"]["usage"] for i in reversed(items) if i.get("type") == "assistant"
                       and isinstance(i.get("message"), dict) and i["message"].get("usage")), {})
    if result is None:
        error = f"no result line in {path.name} (exit status {exit_code}): the turn was cut short or never started"
        return StopInfo(reason="exit", exit_code=exit_code, session_id=session, error=error,
                        context_tokens=context_tokens(last_usage) or None)
    text = str(result.get("result") or "")
    stop = StopInfo(reason="exit", exit_code=exit_code, last_message=text[:2000], session_id=result.get("session_id")
                    or session, cost_usd=float(result.get("total_cost_usd") or 0.0), usage=result.get("usage") or {},
                    context_tokens=context_tokens(last_usage) or None)
    if result.get("is_error") or result.get("subtype", "success") != "success":
        stop.error = (text or str(result.get("subtype")))[:300]
        status = str(result.get("api_error_status") or "")
        stop.wait_until = limit_wait(f"{status} {text}")
    return stop


def read_transcript(path: Path | None, price) -> tuple[float, dict[str, int], int | None, str]:
    """An interactive session so far: (estimated cost, summed usage, context tokens of the last turn, last text).

    Transcripts carry usage but no cost; the cost is estimated with ``price(usage, model)``.
    """
    totals = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    cost, last_context, last_text = 0.0, None, ""
    seen: set[str] = set()
    for item in _lines(Path(path)) if path else []:
        message = item.get("message") if item.get("type") == "assistant" else None
        if not isinstance(message, dict):
            continue
        usage = message.get("usage") or {}
        if message.get("id") in seen:  # one API message is written once per content block
            continue
        seen.add(message.get("id"))
        for key in totals:
            totals[key] += int(usage.get(key) or 0)
        cost += price(usage, message.get("model", ""))
        last_context = context_tokens(usage) or last_context
        texts = [b.get("text", "") for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
        last_text = "\n".join(t for t in texts if t) or last_text
    return cost, totals, last_context, last_text
