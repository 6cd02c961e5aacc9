"""The user registry of runs ($XDG_STATE_HOME/nightshift/runs.jsonl) and finding a run by id.

Home directories are shared on clusters, so `nightshift ls` and the TUI see runs started on any login node.
One line per run, appended when a run is created; a line whose run directory is gone shows as missing until
`nightshift forget RUN` or `nightshift ls --prune` drops it; a line that is not a run is skipped and reported.
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from nightshift.supervisor.run.liveness import supervisor_status
from nightshift.supervisor.run.paths import RunPaths, make_private_dir, registry_path, workspace_state_dir
from nightshift.supervisor.run.private import write_private_bytes
from nightshift.supervisor.errors import UserError


class RunNotFound(UserError):
    pass


class RunStillThere(UserError):
    """`forget` on a run whose folder is there: forgetting it would hide a run that still exists."""


LOCK_NAME = "runs.jsonl.lock"  # beside the registry: the registry itself is replaced by rename when pruned


@dataclass
class RegistryRead:
    """What the registry holds: its readable runs (newest last, one per run id) and the lines it could not read."""

    runs: list[dict[str, Any]]
    bad: list[int] = field(default_factory=list)  # 1-based numbers of lines that are not a run (torn, not UTF-8)

    def dead(self) -> list[dict[str, Any]]:
        """The runs whose run directory is gone (the workspace was moved or deleted). A folder without its event
        log yet is a run being created, never dead."""
        return [entry for entry in self.runs if entry["gone"]]


@contextmanager
def _locked(exclusive: bool) -> Iterator[None]:
    """Appends share the lock (O_APPEND keeps each line whole); a rewrite holds it alone, so a run that registers
    while `ls --prune` rewrites the file waits for the rename instead of appending to the file being replaced."""
    path = registry_path()
    make_private_dir(path.parent)
    fd = os.open(path.with_name(LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def register(run: RunPaths, **info: Any) -> None:
    line = json.dumps({"run_id": run.run_id, "run_dir": str(run.root), "workspace": str(run.workspace), **info})
    with _locked(exclusive=False):
        fd = os.open(registry_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)


def _parse(line: bytes) -> dict[str, Any] | None:
    """A registry line as a run, or None when it is not one (torn, not UTF-8, not JSON, no run id or folder)."""
    try:
        entry = json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is one
        return None
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry[k]
                                              for k in ("run_id", "run_dir")):
        return None
    if not isinstance(entry.get("workspace"), str):
        entry["workspace"] = str(RunPaths(Path(entry["run_dir"])).workspace)  # derivable: no reason to drop it
    return entry


def _lines() -> list[bytes]:
    try:
        return registry_path().read_bytes().split(b"\n")
    except FileNotFoundError:
        return []


def read_registry() -> RegistryRead:
    """Every registered run and the bad lines. Each run says whether its event log ``exists`` and whether its run
    directory is ``gone``."""
    seen: dict[str, dict[str, Any]] = {}
    bad: list[int] = []
    for number, line in enumerate(_lines(), 1):
        if not line.strip():
            continue
        entry = _parse(line)
        if entry is None:
            bad.append(number)  # a torn, foreign or unreadable line never hides the others
            continue
        seen[entry["run_id"]] = entry
    for entry in seen.values():
        entry["exists"] = (Path(entry["run_dir"]) / "events.jsonl").exists()
        entry["gone"] = not entry["exists"] and not Path(entry["run_dir"]).is_dir()
    return RegistryRead(list(seen.values()), bad)


def entries() -> list[dict[str, Any]]:
    return read_registry().runs


def bad_lines_note(bad: list[int]) -> str:
    """The one line a reader of the registry prints about the lines it skipped."""
    shown = ", ".join(str(n) for n in bad[:5]) + (", ..." if len(bad) > 5 else "")
    return (f"skipped {len(bad)} unreadable line{'s' if len(bad) != 1 else ''} of {registry_path()} "
            f"(line{'s' if len(bad) != 1 else ''} {shown}); `nightshift ls --prune` removes them")


def remove(run_ids: set[str], bad_lines: set[bytes] = frozenset()) -> int:
    """Drop the lines of these runs whose folder is gone (and these unreadable lines) from the registry; returns
    how many lines went.

    Read and rewritten under the exclusive lock, then renamed into place: a reader sees the old registry or the
    new one, and a line appended by a run starting meanwhile is read here, after it was written, and kept."""
    with _locked(exclusive=True):
        return _rewrite(run_ids, bad_lines)


def _rewrite(run_ids: set[str], bad_lines: set[bytes]) -> int:
    """The body of ``remove``; the caller holds the exclusive lock."""
    kept, dropped = [], 0
    for line in _lines():
        if not line.strip():
            continue
        entry = _parse(line)
        if entry is None and line in bad_lines or entry is not None and entry["run_id"] in run_ids and \
                not Path(entry["run_dir"]).is_dir():  # a folder back meanwhile is kept
            dropped += 1
            continue
        kept.append(line + b"\n")
    if dropped:
        write_private_bytes(registry_path(), b"".join(kept), durable=True)
    return dropped


def bad_line_bytes(numbers: list[int]) -> set[bytes]:
    """The contents of these lines, so a rewrite drops exactly the lines the user was shown."""
    lines = _lines()
    return {lines[n - 1] for n in numbers if 0 < n <= len(lines)}


def forget(ref: str) -> dict[str, Any]:
    """Drop a run whose folder is gone from the registry, by id or unique prefix; returns its entry."""
    runs = entries()
    matches = [e for e in runs if e["run_id"] == ref] or [e for e in runs if e["run_id"].startswith(ref)]
    if not matches:
        raise RunNotFound(f"run {ref} is not in the registry; `nightshift ls` lists your runs")
    if len(matches) > 1:
        raise RunNotFound(f"run id {ref} is ambiguous ({len(matches)} runs); give more of it")
    entry = matches[0]
    if not entry["gone"]:
        raise RunStillThere(f"run {entry['run_id']} is still at {entry['run_dir']}: forget drops only runs whose "
                            "folder is gone (stop it with `nightshift stop`; its folder is yours to delete)")
    remove({entry["run_id"]})
    return entry


def find_run(ref: str | None, cwd: Path | None = None) -> RunPaths:
    """A run by id (or unique prefix); with no id, the newest run of the workspace in ``cwd``."""
    if not ref:
        runs_dir = workspace_state_dir(Path(cwd or Path.cwd())) / "runs"
        candidates = sorted(p for p in runs_dir.glob("*") if (p / "events.jsonl").exists())
        if not candidates:
            raise RunNotFound("no run in this workspace; give a run id (`nightshift ls` lists them)")
        return RunPaths(candidates[-1])
    matches = [e for e in entries() if e["run_id"] == ref] or [e for e in entries() if e["run_id"].startswith(ref)]
    if cwd is not None or not matches:
        local = workspace_state_dir(Path(cwd or Path.cwd())) / "runs" / ref
        if (local / "events.jsonl").exists():
            return RunPaths(local)
    if not matches:
        raise RunNotFound(f"run {ref} not found; `nightshift ls` lists your runs")
    if len(matches) > 1:
        raise RunNotFound(f"run id {ref} is ambiguous ({len(matches)} runs); give more of it")
    run = RunPaths(Path(matches[0]["run_dir"]))
    if not run.events.exists():
        raise RunNotFound(f"run {ref} is registered but {run.root} is gone (workspace moved or deleted)")
    return run


def live_runs(workspace: Path, exclude: str | None = None) -> list[dict[str, Any]]:
    """The runs of ``workspace`` whose supervisor is alive now (other than ``exclude``): at most one may be."""
    found = []
    for run_dir in sorted((workspace_state_dir(Path(workspace)) / "runs").glob("*")):
        if run_dir.name == exclude or not (run_dir / "events.jsonl").exists():
            continue
        status = supervisor_status(run_dir / "supervisor.json")
        if status["alive"]:
            found.append({"run_id": run_dir.name, "pid": status.get("pid"), "host": status.get("host")})
    return found
