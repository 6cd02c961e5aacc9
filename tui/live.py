"""Live updates for the TUI without replaying anything: one background loop that wakes on a change
(watchdog/inotify on local filesystems, a timer where the runs live on NFS or Lustre, whose writes from other
hosts inotify never sees) and reads only the bytes appended since the last offset of each run.

``LiveFeed.tick`` is plain Python (it runs in a Textual thread worker); the app folds its result on the UI
thread, so widgets never see a state that is half updated.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from nightshift.supervisor.run import registry
from nightshift.supervisor.run.paths import RunPaths, registry_path
from nightshift.supervisor.run.watch import needs_polling
from nightshift.tui.fleet_rows import FleetLinks, discover
from nightshift.tui.follow import RunFollower, Update

POLL_INTERVAL = 1.0  # seconds between looks when polling (network filesystems)
SAFETY_INTERVAL = 5.0  # with inotify, a look now and then anyway (clock-driven columns, missed events)


@dataclass
class Batch:
    updates: dict[str, Update] = field(default_factory=dict)
    new_runs: dict[str, RunFollower] = field(default_factory=dict)
    gone_runs: set[str] = field(default_factory=set)  # dropped from the registry (`nightshift forget`, `ls --prune`)
    bad_lines: list[int] | None = None  # the registry's unreadable lines, when it was read again
    fleets: dict[str, FleetLinks] = field(default_factory=dict)  # fleets whose lanes were read again

    def __bool__(self) -> bool:
        return bool(self.updates or self.new_runs or self.gone_runs or self.bad_lines or self.fleets)


class LiveFeed:
    """What changed in the user's runs since the last tick: new registry entries and appended events."""

    def __init__(self, followers: dict[str, RunFollower], use_registry: bool = True):
        self.followers = followers  # shared with the UI thread; only read here
        self.use_registry = use_registry
        self.wake = threading.Event()
        self.polling = False
        self._registry_mtime: float | None = None
        self.from_registry: set[str] = set()
        self._observer = None
        self._watched: set[Path] = set()
        self._is_fleet: dict[str, bool] = {}

    def initial(self) -> Batch:
        """Every registered run, read from its snapshot and tail (the dashboard's first paint)."""
        return self._registry_batch(force=True)

    def _registry_batch(self, force: bool = False) -> Batch:
        batch = Batch()
        if not self.use_registry:
            return batch
        try:
            mtime = registry_path().stat().st_mtime
        except OSError:
            mtime = None
        if not force and mtime == self._registry_mtime:
            return batch
        self._registry_mtime = mtime
        found = registry.read_registry()
        batch.bad_lines = found.bad
        listed = {entry["run_id"] for entry in found.runs}
        for entry in found.runs:
            run_id = entry["run_id"]
            if run_id not in self.followers and run_id not in batch.new_runs:
                batch.new_runs[run_id] = RunFollower(RunPaths(Path(entry["run_dir"])))
        # Only a run the registry gave is taken away by it; a run opened by its folder stays.
        batch.gone_runs = {run_id for run_id in self.from_registry - listed if run_id in self.followers}
        self.from_registry = listed
        return batch

    def tick(self) -> Batch:
        batch = self._registry_batch()
        for run_id, follower in list(self.followers.items()):
            update = follower.fetch()
            if update is not None:
                batch.updates[run_id] = update
        return self.link_lanes(batch)

    def link_lanes(self, batch: Batch) -> Batch:
        """The lanes of each fleet that is new or whose log grew (lanes are planned, made and ended in it), and a
        follower for each lane run not followed yet: a lane is on the dashboard under its fleet even when the
        registry does not list it (the fleet opened by its folder, a registry pruned)."""
        changed = {**{rid: f.run for rid, f in batch.new_runs.items()},
                   **{rid: self.followers[rid].run for rid in batch.updates if rid in self.followers}}
        for run_id, run in changed.items():
            links = discover(run, self._is_fleet)
            if links is None:
                continue
            batch.fleets[run_id] = links
            for link in links.lanes:
                lane_id = link.run.run_id
                if lane_id not in self.followers and lane_id not in batch.new_runs and link.run.events.exists():
                    batch.new_runs[lane_id] = RunFollower(link.run)  # a planned lane has no run yet: not a row
        return batch

    def wait(self, cancelled=lambda: False) -> None:
        """Sleep until a watched file changes, the interval passes, or ``cancelled()`` (checked twice a second)."""
        left = POLL_INTERVAL if self.polling or self._observer is None else SAFETY_INTERVAL
        while left > 0 and not cancelled():
            if self.wake.wait(min(0.5, left)):
                break
            left -= 0.5
        self.wake.clear()

    def watch(self, roots: list[Path]) -> None:
        """Watch these run directories (and the registry) with inotify, unless a filesystem needs polling."""
        roots = [r for r in roots if r.is_dir() and r not in self._watched]
        if any(needs_polling(r) for r in roots) or needs_polling(registry_path().parent if registry_path().parent.exists() else Path.home()):
            self.polling = True
        if self.polling or not roots and self._observer is not None:
            return
        try:
            self._schedule(roots)
        except (OSError, ImportError):
            self.polling = True  # out of inotify watches, or no watchdog: the timer still works

    def _schedule(self, roots: list[Path]) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        wake = self.wake

        class Handler(FileSystemEventHandler):
            def on_any_event(self, ev):  # noqa: N802 - watchdog's name
                target = str(getattr(ev, "dest_path", "") or ev.src_path)
                if target.endswith(("events.jsonl", "runs.jsonl", "snapshot.json")) and ev.event_type in ("modified", "created", "moved", "closed"):
                    wake.set()

        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            reg_dir = registry_path().parent
            if reg_dir.is_dir():
                self._observer.schedule(Handler(), str(reg_dir), recursive=False)
            self._observer.start()
        for root in roots:
            self._observer.schedule(Handler(), str(root), recursive=False)
            self._watched.add(root)

    def stop(self) -> None:
        self.wake.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None
