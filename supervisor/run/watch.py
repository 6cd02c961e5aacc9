"""Wake the supervisor when something it waits for appears: watchdog (inotify) on local filesystems,
plain polling where inotify cannot see other hosts' writes (NFS, Lustre, GPFS...).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

NETWORK_FS = {"nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "fuse.sshfs", "beegfs", "ceph", "panfs"}
WAKE_SUFFIXES = (".json", ".exit")  # inbox commands, Stop-hook requests, claims, exit statuses


def filesystem_type(path: Path) -> str:
    """The type of the filesystem holding ``path``, from /proc/mounts (longest matching mount point)."""
    path = os.path.realpath(path)
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3 and (path == parts[1] or path.startswith(parts[1].rstrip("/") + "/")):
                    if len(parts[1]) > len(best):
                        best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def needs_polling(path: Path) -> bool:
    return filesystem_type(path) in NETWORK_FS or os.environ.get("NIGHTSHIFT_POLL") == "1"


class Waker:
    """``wait(timeout)`` returns early when a watched file of interest is created or moved into place."""

    def __init__(self, paths: list[Path]):
        self._event = threading.Event()
        self._observer = None
        self.interval = 0.25
        if paths and not needs_polling(paths[0]):
            try:
                self._start_observer(paths)
                self.interval = 1.0  # inotify wakes us; the timeout is only a safety net
            except (OSError, ImportError):
                self._observer = None

    def _start_observer(self, paths: list[Path]) -> None:
        from watchdog.events import FileCreatedEvent, FileMovedEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        event = self._event

        class Handler(FileSystemEventHandler):
            def on_any_event(self, ev):  # noqa: N802 - watchdog's name
                target = getattr(ev, "dest_path", "") or ev.src_path
                if ev.event_type in ("created", "moved") and str(target).endswith(WAKE_SUFFIXES):
                    event.set()

        observer = Observer()
        handler = Handler()
        for path in paths:
            path.mkdir(parents=True, exist_ok=True)
            # Creations and renames only: the kernel then never reports the agent's log growing (tmux pipes
            # every line it prints into shifts/<n>/t<k>.log), which cost ~0.4 ms of CPU per write.
            observer.schedule(handler, str(path), recursive=True, event_filter=[FileCreatedEvent, FileMovedEvent])
        observer.daemon = True
        observer.start()
        self._observer = observer

    def wait(self, timeout: float) -> bool:
        woke = self._event.wait(timeout)
        self._event.clear()
        return woke

    def stop(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
