"""Following one run from the TUI: its state from snapshot.json plus the log's tail, then only new bytes.

Opening a run never replays its whole history: ``load_state`` reads the snapshot and the events after it,
and the Events tab is seeded from the last few hundred kilobytes of the log, so a run with a million events
opens as fast as one with ten. Nothing here writes to the run directory.
"""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nightshift.supervisor.run.events import read_events
from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.state import apply, empty_state, load_state
from nightshift.tui.fmt import home_path

RECENT_EVENTS = 2000  # what the Events tab keeps in memory
SEED_BYTES = 256 * 1024  # how far back from the end the Events tab starts reading on open


@dataclass
class Update:
    events: list[dict[str, Any]]
    offset: int
    size: int
    warnings: list[str]
    reload: "RunFollower | None" = None


class RunFollower:
    """The live state of one run, advanced by ``poll()`` from the last offset read."""

    def __init__(self, run: RunPaths):
        self.run = run
        self.state: dict[str, Any] = empty_state()
        self.offset = 0
        self.warnings: list[str] = []
        self.problem: str | None = None  # "missing" / "half-written" when the run cannot be read as a whole
        self.detail = ""  # a line saying what is wrong and what to do
        self._recent: deque[dict[str, Any]] | None = None
        self._size = -1
        self.load()

    def load(self) -> None:
        """(Re)read the run from its snapshot and the tail of its log."""
        root = self.run.root
        self.problem, self.detail = None, ""
        if not root.is_dir():
            self.problem = "missing"
            gone = not self.run.workspace.exists()
            self.detail = (f"workspace {home_path(self.run.workspace)} was deleted" if gone
                           else f"run directory {home_path(root)} is gone") + \
                "; remove the line from the registry or restore the folder"
            self.state, self.offset = empty_state(), 0
            return
        try:
            self.state, self.offset, warnings = load_state(root)
        except OSError as exc:
            self.problem, self.detail = "unreadable", f"{home_path(root)}: {exc.strerror}"
            return
        self.warnings = warnings
        self._recent = None
        if not self.run.events.exists():
            self.problem, self.detail = "half-written", "its run directory has no events.jsonl (never started, or cut short while starting)"
        elif self.state.get("run_id") is None:
            self.problem, self.detail = "half-written", "events.jsonl has no run.created event yet"
        self._size = self._events_size()

    def _events_size(self) -> int:
        try:
            return self.run.events.stat().st_size
        except OSError:
            return -1

    def fetch(self) -> "Update | None":
        """Read what is new (in a worker thread); nothing changes here until ``absorb`` on the UI thread."""
        size = self._events_size()
        if self.problem:
            # A missing or half-written run is read again only when something about it changed.
            if size == self._size and self.run.root.is_dir() == (self.problem != "missing"):
                return None
            return Update([], 0, size, [], reload=RunFollower(self.run))
        if size < self.offset:
            return Update([], 0, size, [], reload=RunFollower(self.run))  # the log was replaced: start over
        if size == self._size:
            return None
        result = read_events(self.run.events, self.offset)
        # An incomplete last line is normal while the supervisor writes; only unreadable lines are news.
        warnings = [w for w in result.warnings if "incomplete last line" not in w]
        return Update(result.events, result.offset, size, warnings)

    def absorb(self, update: "Update") -> list[dict[str, Any]]:
        """Fold a fetched update into the state (on the UI thread); returns the new events."""
        if update.reload is not None:
            fresh = update.reload
            self.state, self.offset, self.warnings = fresh.state, fresh.offset, fresh.warnings
            self.problem, self.detail, self._size, self._recent = fresh.problem, fresh.detail, fresh._size, None
            return []
        for event in update.events:
            apply(self.state, event)
            if self._recent is not None:
                self._recent.append(event)
        self.offset, self._size = update.offset, update.size
        self.warnings += update.warnings
        if self.problem == "half-written" and self.state.get("run_id"):
            self.problem, self.detail = None, ""
        return update.events

    def poll(self) -> list[dict[str, Any]]:
        """fetch + absorb in one go (for callers on a single thread)."""
        update = self.fetch()
        return self.absorb(update) if update is not None else []

    def recent_events(self) -> list[dict[str, Any]]:
        """The last events of the log, read from its end (never the whole file)."""
        if self._recent is None:
            self._recent = deque(self._read_tail(), maxlen=RECENT_EVENTS)
        return list(self._recent)

    def _read_tail(self) -> list[dict[str, Any]]:
        try:
            with open(self.run.events, "rb") as fh:
                start = max(0, self.offset - SEED_BYTES)
                fh.seek(start)
                blob = fh.read(self.offset - start)
        except OSError:
            return []
        if start > 0:
            blob = blob[blob.find(b"\n") + 1:]  # the first line is probably cut: drop it
        out = []
        for raw in blob.split(b"\n"):
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict) and "type" in event:
                out.append(event)
        return out


def turn_file(run: RunPaths, shift: int | None, turn: int | None, name: str) -> Path | None:
    if not shift or not turn:
        return None
    return run.turn_file(int(shift), int(turn), name)


def latest_turn_file(run: RunPaths, shift: int | None, name: str) -> Path | None:
    """The newest ``t<turn>.<name>`` of a shift (the turn numbers in the file names, highest first)."""
    if not shift:
        return None
    best, best_turn = None, -1
    try:
        for path in run.shift_dir(int(shift)).glob(f"t*.{name}"):
            head = path.name.split(".", 1)[0][1:]
            if head.isdigit() and int(head) > best_turn:
                best, best_turn = path, int(head)
    except OSError:
        return None
    return best
