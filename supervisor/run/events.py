"""The append-only event log (events.jsonl): one writer, fsync per event, readers from an offset.

Each line is ``{"v":1,"seq":N,"ts":"...Z","type":"shift.started","shift":3,"data":{...}}``.
A torn last line (a crash mid-write) is skipped with a warning by readers and cut off, after being
saved beside the log, by the next writer: never fatal, and nothing complete is ever lost.
"""
from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from nightshift.supervisor.errors import UserError

VERSION = 1


class EventLogError(UserError):
    """A one-line, actionable reason why an event could not be recorded."""


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class ReadResult:
    events: list[dict[str, Any]]
    offset: int  # byte offset just past the last complete line read
    warnings: list[str] = field(default_factory=list)


def read_events(path: Path, offset: int = 0, limit_bytes: int | None = None) -> ReadResult:
    """Read complete events from ``offset``. An incomplete last line is left for the next read."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            blob = fh.read() if limit_bytes is None else fh.read(limit_bytes)
    except FileNotFoundError:
        return ReadResult([], offset)
    events: list[dict[str, Any]] = []
    warnings: list[str] = []
    end = blob.rfind(b"\n") + 1  # only whole lines are consumed
    if end < len(blob) and limit_bytes is None:
        warnings.append(f"{path.name}: incomplete last line at byte {offset + end} skipped (torn write?)")
    pos = offset
    for raw in blob[:end].split(b"\n")[:-1]:
        line_at = pos
        pos += len(raw) + 1
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            warnings.append(f"{path.name}: unreadable line at byte {line_at} skipped")
            continue
        if isinstance(event, dict) and "type" in event:
            events.append(event)
        else:
            warnings.append(f"{path.name}: line at byte {line_at} is not an event, skipped")
    return ReadResult(events, offset + end, warnings)


class EventLog:
    """The single writer of a run's events.jsonl. The caller holds the supervisor lock."""

    def __init__(self, path: Path, last_seq: int | None = None, tail_offset: int = 0):
        self.path = Path(path)
        self.warnings: list[str] = []
        self._repair_torn_tail()
        if last_seq is None:
            last_seq = 0
            result = read_events(self.path, tail_offset)
            for event in result.events:
                last_seq = max(last_seq, int(event.get("seq", 0)))
        self.seq = last_seq
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def _repair_torn_tail(self) -> None:
        """Cut a partial last line left by a crash, keeping its bytes in events.jsonl.torn."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0:
            return
        with open(self.path, "rb+") as fh:
            back = min(size, 1 << 20)
            fh.seek(size - back)
            tail = fh.read()
            if tail.endswith(b"\n"):
                return
            cut = tail.rfind(b"\n") + 1
            keep = size - back + cut
            with open(self.path.with_suffix(".jsonl.torn"), "ab") as torn:
                torn.write(tail[cut:] + b"\n")
            fh.truncate(keep)
            os.fsync(fh.fileno())
        self.warnings.append(f"{self.path.name}: torn last line ({size - keep} bytes) moved to events.jsonl.torn")

    def append(self, type_: str, shift: int | None = None, **data: Any) -> dict[str, Any]:
        event = {"v": VERSION, "seq": self.seq + 1, "ts": utc_now(), "type": type_, "shift": shift, "data": data}
        line = (json.dumps(event, separators=(",", ":"), default=str) + "\n").encode()
        before = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            written = os.write(self._fd, line)
            if written != len(line):
                raise OSError(errno.ENOSPC, "short write")
            os.fsync(self._fd)
        except OSError as exc:
            # Leave no partial line behind: what was recorded before stays intact.
            try:
                os.ftruncate(self._fd, before)
            except OSError:
                pass
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise EventLogError(
                    f"disk full: could not append to {self.path}; free space, then `nightshift resume {self.path.parent.name}`"
                ) from None
            raise EventLogError(f"could not append to {self.path}: {exc.strerror}") from None
        self.seq += 1
        return event

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass
