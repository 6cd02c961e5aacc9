"""One pass over a run's events.jsonl for `nightshift report`: only the lines the report needs are parsed.

A long run has a million events; parsing every line costs seconds. The fold (snapshot.json plus the log's
tail, see supervisor.run.state) already holds the per-shift totals and every verdict's metrics, so this scan
finds lines by their ``"type":"..."`` text (events are written with compact separators, ``type`` before
``shift``): the regex engine finds candidates in C and Python sees only the hits. Parsed are: the rare
events a person must see (pauses, refusals, waits, budget, breaker, preflight, Slurm core-hours, ...); per
turn the events of the table when the run is small enough to show turns (``per_turn``), otherwise only the
last stop and the last verdict of each shift, searched backwards from where the next shift starts.

Event types are read defensively: other parts of nightshift add types (``policy.denied``,
``agent.waiting``, ``slurm.*``, ``preflight.*``); unknown ones are skipped, never fatal. A log in another
format (an older writer) or with damaged lines is parsed line by line instead, and a torn or unreadable line
is skipped and reported in ``warnings``.
"""
from __future__ import annotations

import json
import mmap
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# Events a person must see, whatever their number (parsed in full).
HUMAN_TYPES = ("run.paused", "budget.exceeded", "breaker.tripped",
               "agent.waiting", "agent.wait_answered", "command.accepted", "judge.unavailable", "tests.baseline",
               "test.released")
HUMAN_PREFIXES = ("policy.", "preflight", "slurm.", "approval.", "core_hours", "budget.")
# Per turn: the table's rows (parsed in full only when the run shows turns, else the last per shift).
TURN_TYPES = ("shift.started", "shift.ended", "agent.started", "agent.stopped", "verify.finished",
              "commit.created", "pushback.sent")
LAST_PER_SHIFT = ("agent.stopped", "verify.finished")


def _alternation(exact: tuple[str, ...], prefixes: tuple[str, ...]) -> bytes:
    parts = [re.escape(t) for t in exact]
    # slurm.job_changed is a poll result (many per job), not a person's business
    parts += [r'slurm\.(?!job_changed")[^"]*' if p == "slurm." else re.escape(p) + '[^"]*' for p in prefixes]
    return "|".join(parts).encode()


_HUMAN = re.compile(rb'"type":"(?:' + _alternation(HUMAN_TYPES, HUMAN_PREFIXES) + rb')"')
_TURN = re.compile(rb'"type":"(?:' + _alternation(TURN_TYPES, ()) + rb')"')
_SHIFT_START = re.compile(rb'"type":"shift\.started","shift":(\d+)')


@dataclass
class Scan:
    """What the scan found: parsed events by purpose, counts, and what could not be read."""

    human: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)       # every TURN_TYPES event (per_turn runs)
    last: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)  # (type, shift) -> last event
    counts: Counter = field(default_factory=Counter)                # per parsed type; "all": any read
    first_ts: str | None = None
    last_ts: str | None = None
    warnings: list[str] = field(default_factory=list)


def _wanted_human(kind: str) -> bool:
    return kind != "slurm.job_changed" and (kind in HUMAN_TYPES or kind.startswith(HUMAN_PREFIXES))


def scan_events(path: Path, per_turn: bool) -> Scan:
    """Scan ``path`` once. ``per_turn``: parse every turn event (a small run) rather than the last per shift."""
    scan = Scan()
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            # Mapped, not read: the regex engine and find() scan the page cache without a 200 MB copy.
            blob = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        scan.warnings.append("events.jsonl is missing: the report shows only what the shift files say")
        return scan
    except (OSError, ValueError) as exc:
        scan.warnings.append(f"events.jsonl unreadable ({getattr(exc, 'strerror', None) or exc}): the report "
                             "shows only the shift files")
        return scan
    try:
        _scan(blob, scan, per_turn)
    finally:
        if isinstance(blob, mmap.mmap):
            blob.close()
    return scan


def _scan(blob: Any, scan: Scan, per_turn: bool) -> None:
    end = len(blob)
    if end and blob[end - 1:end] != b"\n":
        cut = blob.rfind(b"\n") + 1
        scan.warnings.append(f"events.jsonl: torn last line ({end - cut} bytes) skipped")
        end = cut
    if not end:
        return
    first = blob[:blob.find(b"\n")]
    last = blob[blob.rfind(b"\n", 0, end - 1) + 1:end - 1]
    _edges(first, last, scan)
    if b'"type":"' not in first or b'"type":"' not in last:
        _slow_scan(bytes(blob[:end]), scan)  # another writer's format (an older nightshift): every line parsed
        return
    scan.counts["all"] = 1  # at least one event; the fold's seq says how many
    for m in _HUMAN.finditer(blob, 0, end):
        _parse_line(blob, m.start(), scan)
    if per_turn:
        for m in _TURN.finditer(blob, 0, end):
            _parse_line(blob, m.start(), scan)
        scan.human.sort(key=lambda e: e.get("seq") if isinstance(e.get("seq"), int) else 0)
        scan.turns.sort(key=lambda e: e.get("seq") if isinstance(e.get("seq"), int) else 0)
    else:
        _last_per_shift(blob, scan, end)


def _line_at(blob: Any, pos: int) -> bytes:
    start = blob.rfind(b"\n", 0, pos) + 1
    end = blob.find(b"\n", pos)
    return blob[start:end if end >= 0 else len(blob)]


def _take(event: dict[str, Any], scan: Scan) -> None:
    kind = event["type"]
    scan.counts[kind] += 1
    if _wanted_human(kind):
        scan.human.append(event)
    if kind in TURN_TYPES:
        scan.turns.append(event)
        if kind in LAST_PER_SHIFT and isinstance(event.get("shift"), int):
            scan.last[(kind, event["shift"])] = event


def _parse_line(blob: Any, pos: int, scan: Scan) -> None:
    event = _loads(_line_at(blob, pos), scan)
    if event is not None:
        _take(event, scan)


def _last_per_shift(blob: Any, scan: Scan, end: int) -> None:
    """The last stop and verdict of each shift, searched backwards from where the next shift starts: a
    short search per shift instead of a pass over every turn."""
    starts, needle, pos = [], b'"type":"shift.started","shift":', blob.find(b'"type":"shift.started","shift":')
    while pos >= 0:  # bytes.find skips ahead far faster than a regex scan: one hit per shift
        m = _SHIFT_START.match(blob, pos)
        if m:
            starts.append((int(m.group(1)), pos))
        pos = blob.find(needle, pos + len(needle))
    for i, (shift, at) in enumerate(starts):
        limit = starts[i + 1][1] if i + 1 < len(starts) else end
        for kind in LAST_PER_SHIFT:
            pos = blob.rfind(b'"type":"%s","shift":%d,' % (kind.encode(), shift), at, limit)
            if pos >= 0:
                event = _loads(_line_at(blob, pos), scan)
                if event is not None:
                    scan.last[(kind, shift)] = event


def _loads(raw: bytes, scan: Scan) -> dict[str, Any] | None:
    try:
        event = json.loads(raw)
    except ValueError:
        scan.warnings.append("events.jsonl: an unreadable line was skipped")
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str) or \
            not isinstance(event.get("data", {}), dict):
        scan.warnings.append("events.jsonl: a line that is not an event was skipped")
        return None
    event.setdefault("data", {})
    return event


def _slow_scan(blob: bytes, scan: Scan) -> None:
    """Every line parsed: for logs in another format (an older writer) or with damaged lines."""
    bad = 0
    for raw in blob.split(b"\n"):
        if not raw.strip():
            continue
        scan.counts["all"] += 1
        event = _loads(raw, Scan())
        if event is None:
            bad += 1
        else:
            _take(event, scan)
    if bad:
        scan.warnings.append(f"events.jsonl: {bad} unreadable line(s) skipped")


def _edges(first: bytes, last: bytes, scan: Scan) -> None:
    """The first and last timestamps, for durations and the burn rate."""
    for raw, attr in ((first, "first_ts"), (last, "last_ts")):
        m = re.search(rb'"ts":"([^"]+)"', raw)
        if m:
            setattr(scan, attr, m.group(1).decode("ascii", "replace"))


def ts_seconds(ts: str | None) -> float | None:
    """An event's timestamp as epoch seconds, or None when absent or unreadable."""
    if not ts:
        return None
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None
