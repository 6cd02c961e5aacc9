"""Small text formatters shared by the screens: ages, costs, oracle figures, sparklines, status labels.

Pure functions of their arguments (the clock is passed in), so the snapshot tests are deterministic.
"""
from __future__ import annotations

import math
import os
from datetime import datetime
from pathlib import Path
from typing import Any

SPARK_CHARS = "▁▂▃▄▅▆▇█"

# What the fold's status means to a person, in a few letters that fit an 80-column row.
STATUS_LABELS = {
    "created": "starting", "working": "working", "verifying": "verifying", "pushed_back": "pushed back",
    "waiting": "waiting (limit)", "paused": "paused", "done": "done", "failed": "failed", "stopped": "stopped",
}
# Row states for runs that cannot be read as a whole; shown instead of a status, never a crash.
PROBLEM_STATES = ("missing", "half-written", "unreadable")


def parse_ts(ts: str | None) -> float | None:
    """Seconds since the epoch of an event timestamp ("2026-11-22T10:00:00.000000Z"), or None."""
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except (ValueError, TypeError):
        return None


def age(seconds: float | None) -> str:
    """'12s', '5m', '3h', '2d' (compact, for a table cell); '-' when unknown."""
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    for limit, unit, div in ((90, "s", 1), (90 * 60, "m", 60), (36 * 3600, "h", 3600)):
        if seconds < limit:
            return f"{int(seconds // div)}{unit}"
    return f"{int(seconds // 86400)}d"


def ts_age(ts: str | None, now: float) -> str:
    at = parse_ts(ts)
    return age(None if at is None else now - at)


def clock_time(ts: str | None) -> str:
    """'11-22 10:04' from an event timestamp (UTC, as recorded)."""
    if not ts or len(ts) < 16:
        return "-"
    return f"{ts[5:10]} {ts[11:16]}"


def duration(start: str | None, end: str | None, now: float) -> str:
    a = parse_ts(start)
    if a is None:
        return "-"
    b = parse_ts(end)
    return age((now if b is None else b) - a)


def cost(usd: float | None) -> str:
    if not usd:
        return "$0"
    return f"${usd:.2f}" if usd >= 0.995 else f"${usd:.3f}"


def metric(value: Any) -> str:
    """The headline oracle figure (worst error / tolerance, lower is better; <= 1 passes)."""
    if value is None:
        return "-"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "?"
    if math.isnan(v) or math.isinf(v):
        return "inf" if v > 0 else "nan"
    return f"{v:.3g}" if v < 1000 else f"{v:.1e}"


def sparkline(values: list[float | None], width: int = 8) -> str:
    """The last ``width`` values on a log scale (errors span decades); gaps for missing values."""
    values = values[-width:]
    logs = [math.log10(v) if isinstance(v, (int, float)) and v > 0 and math.isfinite(v) else None for v in values]
    known = [x for x in logs if x is not None]
    if not known:
        return ""
    lo, hi = min(known), max(known)
    span = (hi - lo) or 1.0
    out = []
    for x in logs:
        if x is None:
            out.append(" ")
        else:
            out.append(SPARK_CHARS[min(len(SPARK_CHARS) - 1, int((x - lo) / span * (len(SPARK_CHARS) - 1) + 0.5))])
    return "".join(out)


def home_path(path: str | Path | None) -> str:
    """A path with the home folder written as ~ (shorter, and the same on every login node)."""
    if not path:
        return "-"
    text = str(path)
    home = os.environ.get("HOME") or str(Path.home())
    if home and home != "/" and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")):]
    return text


def ellipsize(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
