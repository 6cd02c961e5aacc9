"""The record of a run submitted as a chain of batch jobs (`nightshift submit`): ``slurm/chain.jsonl``, one JSON
line per thing that happened to the chain (submitted, started, walltime_warning, stopping, not_continued,
cancelled, finished), each with its epoch ``ts``.

The jobs of the chain and `nightshift stop` write it (hpc/chain.py); the allocation, `status`, the budget and the
TUI read it, all through this one parser. A reader keeps its place: each read parses only the lines appended
since the last one (the dashboard refreshes every run's Slurm lines each second, and the file may sit on NFS).
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

RECORD = Path("slurm") / "chain.jsonl"


def record_path(run_root: Path) -> Path:
    return Path(run_root) / RECORD


def append_record(run_root: Path, what: str, **data: Any) -> dict[str, Any]:
    """Append one line (0600). One write of a line opened O_APPEND: two writers (a job and `nightshift stop` on
    another host) never interleave within a line on a local file system."""
    entry = {"ts": time.time(), "what": what, **data}
    path = record_path(run_root)
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, (json.dumps(entry) + "\n").encode())
    finally:
        os.close(fd)
    return entry


class ChainReader:
    """One run's record, read incrementally: ``read()`` returns every record so far, parsing only the bytes
    appended since the previous call. A torn last line (a job writing it right now) waits for the next read; a
    file that was replaced or shortened is read again from its start."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()  # the TUI reads from worker threads
        self._records: list[dict[str, Any]] = []
        self._offset = 0
        self._inode: int | None = None

    def read(self) -> list[dict[str, Any]]:
        with self._lock:
            try:
                st = os.stat(self.path)
            except OSError:
                self._reset(None)
                return []
            if st.st_ino != self._inode or st.st_size < self._offset:
                self._reset(st.st_ino)
            if st.st_size > self._offset:
                self._read_new()
            return list(self._records)

    def _reset(self, inode: int | None) -> None:
        self._records, self._offset, self._inode = [], 0, inode

    def _read_new(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1  # complete lines only
        for line in data[:end].splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a damaged line says nothing we can use; the rest of the record still counts
            if isinstance(entry, dict):
                self._records.append(entry)
        self._offset += end


_readers: dict[Path, ChainReader] = {}
_readers_lock = threading.Lock()


def read_chain(run_root: Path) -> list[dict[str, Any]]:
    """Every record of a run's chain, oldest first ([] for a run that was never submitted). The reader of each
    run is kept for the life of the process, so repeated reads cost only what was appended."""
    path = record_path(run_root)
    with _readers_lock:
        reader = _readers.get(path)
        if reader is None:
            reader = _readers[path] = ChainReader(path)
    return reader.read()
