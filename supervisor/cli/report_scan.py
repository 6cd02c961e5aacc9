"""One pass over a run's events.jsonl for `nightshift report`: only the lines the report needs are parsed.

A long run has a million events; parsing every line costs seconds. The fold (snapshot.json plus the log's
tail, see supervisor.run.state) already holds the per-shift totals and every verdict's metrics, so this scan
finds lines by their ``"type":"..."`` text (events are written with compact separators, ``type`` before
``shift``) and parses only: the rare events a person must see (pauses, refusals, waits, budget, breaker,
preflight, Slurm core-hours, ...), and per turn the events of the table, when the run is small enough to
show turns (``per_turn``); otherwise only the last stop and the last verdict of each shift.

Event types are read defensively: other parts of nightshift add types (``policy.denied``,
``agent.waiting``, ``slurm.*``, ``preflight.*``); unknown ones are counted, never fatal. A torn or
unreadable line is skipped and reported in ``warnings``.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# Events a person must see, whatever their number (parsed in full).
HUMAN_TYPES = ("run.created", "run.paused", "run.resumed", "run.finished", "budget.exceeded", "breaker.tripped",
               "agent.waiting", "command.accepted", "command.rejected", "judge.unavailable", "supervisor.started")
HUMAN_PREFIXES = ("policy.", "preflight", "slurm.", "approval.", "core_hours", "budget.")
# Per turn: the table's rows (parsed in full only when the run shows turns, else the last per shift).
TURN_TYPES = ("shift.started", "shift.ended", "agent.started", "agent.stopped", "verify.finished",
              "commit.created", "pushback.sent")
LAST_PER_SHIFT = ("agent.stopped", "verify.finished")

_LINE = re.compile(rb'^[^\n]*?"type":"([^"]+)","shift":(null|\d+)[^\n]*$', re.M)
_TYPE = re.compile(rb'"type":"([^"]+)"')


@dataclass
class Scan:
    """What the scan found: parsed events by purpose, type counts, and what could not be read."""

    human: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)       # every TURN_TYPES event (per_turn runs)
    last: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)  # (type, shift) -> last event
    counts: Counter = field(default_factory=Counter)
    first_ts: str | None = None
    last_ts: str | None = None
    warnings: list[str] = field(default_factory=list)


def _wanted_human(kind: str) -> bool:
    # slurm.job_changed is a poll result (many per job): the latest is kept, not every one
    return kind != "slurm.job_changed" and (kind in HUMAN_TYPES or kind.startswith(HUMAN_PREFIXES))


def scan_events(path: Path, per_turn: bool) -> Scan:
    """Scan ``path`` once. ``per_turn``: parse every turn event (a small run) rather than the last per shift."""
    scan = Scan()
    try:
        blob = Path(path).read_bytes()
    except FileNotFoundError:
        scan.warnings.append("events.jsonl is missing: the report shows only what the shift files say")
        return scan
    except OSError as exc:
        scan.warnings.append(f"events.jsonl unreadable ({exc.strerror}): the report shows only the shift files")
        return scan
    if blob and not blob.endswith(b"\n"):
        cut = blob.rfind(b"\n") + 1
        scan.warnings.append(f"events.jsonl: torn last line ({len(blob) - cut} bytes) skipped")
        blob = blob[:cut]
    last_pos: dict[tuple[str, int], int] = {}
    matched = 0
    for m in _LINE.finditer(blob):
        matched += 1
        kind = m.group(1).decode("ascii", "replace")
        scan.counts[kind] += 1
        if _wanted_human(kind) or (per_turn and kind in TURN_TYPES):
            _parse_into(scan, m.group(0), kind, per_turn)
        elif kind in LAST_PER_SHIFT and m.group(2) != b"null":
            last_pos[(kind, int(m.group(2)))] = m.start()
    for key, start in last_pos.items():
        end = blob.find(b"\n", start)
        event = _loads(blob[start:end if end >= 0 else len(blob)], scan)
        if event is not None:
            scan.last[key] = event
    lines = blob.count(b"\n")
    if matched < lines:
        _scan_odd_lines(blob, scan, lines - matched)
    _edges(blob, scan)
    return scan


def _parse_into(scan: Scan, raw: bytes, kind: str, per_turn: bool) -> None:
    event = _loads(raw, scan)
    if event is None:
        return
    if _wanted_human(kind):
        scan.human.append(event)
    if kind in TURN_TYPES:
        scan.turns.append(event)
        if kind in LAST_PER_SHIFT and isinstance(event.get("shift"), int):
            scan.last[(kind, event["shift"])] = event


def _loads(raw: bytes, scan: Scan) -> dict[str, Any] | None:
    try:
        event = json.loads(raw)
    except ValueError:
        scan.warnings.append("events.jsonl: an unreadable line was skipped")
        return None
    if not isinstance(event, dict) or not isinstance(event.get("data", {}), dict):
        scan.warnings.append("events.jsonl: a line that is not an event was skipped")
        return None
    event.setdefault("data", {})
    return event if isinstance(event.get("data"), dict) else None


def _scan_odd_lines(blob: bytes, scan: Scan, how_many: int) -> None:
    """Lines the fast pattern missed (another writer's key order, garbage): parse them one by one."""
    bad = 0
    for raw in blob.split(b"\n"):
        if not raw.strip() or _LINE.match(raw):
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            bad += 1
            continue
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            bad += 1
            continue
        kind = event["type"]
        event["data"] = event.get("data") if isinstance(event.get("data"), dict) else {}
        scan.counts[kind] += 1
        if _wanted_human(kind):
            scan.human.append(event)
        if kind in TURN_TYPES:
            scan.turns.append(event)
            if isinstance(event.get("shift"), int):
                scan.last[(kind, event["shift"])] = event
    if bad:
        scan.warnings.append(f"events.jsonl: {bad} unreadable line(s) skipped")
    # Events found this way are out of order with the rest: keep both lists in log order.
    scan.human.sort(key=lambda e: e.get("seq") or 0)
    scan.turns.sort(key=lambda e: e.get("seq") or 0)


def _edges(blob: bytes, scan: Scan) -> None:
    """The first and last timestamps, for durations and the burn rate."""
    first = blob[:blob.find(b"\n")] if b"\n" in blob else b""
    tail = blob[blob.rfind(b"\n", 0, len(blob) - 1) + 1:]
    for raw, attr in ((first, "first_ts"), (tail, "last_ts")):
        m = re.search(rb'"ts":"([^"]+)"', raw)
        if m:
            setattr(scan, attr, m.group(1).decode("ascii", "replace"))


def type_count(path: Path, kind: str) -> int:
    """How many events of ``kind`` a log holds, without parsing it (e.g. policy refusals for `status`)."""
    try:
        return Path(path).read_bytes().count(f'"type":"{kind}"'.encode())
    except OSError:
        return 0


def ts_seconds(ts: str | None) -> float | None:
    """An event's timestamp as epoch seconds, or None when absent or unreadable."""
    if not ts:
        return None
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None
