"""The user registry of runs ($XDG_STATE_HOME/nightshift/runs.jsonl) and finding a run by id.

Home directories are shared on clusters, so `nightshift ls` and the TUI see runs started on any login node.
One line per run, appended when a run is created; a line whose run directory is gone shows as missing.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from supervisor.run.liveness import supervisor_status
from supervisor.run.paths import RunPaths, make_private_dir, registry_path, workspace_state_dir
from supervisor.errors import UserError


class RunNotFound(UserError):
    pass


def register(run: RunPaths, **info: Any) -> None:
    path = registry_path()
    make_private_dir(path.parent)
    line = json.dumps({"run_id": run.run_id, "run_dir": str(run.root), "workspace": str(run.workspace), **info})
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def entries() -> list[dict[str, Any]]:
    """Every registered run, newest last, each with ``exists`` telling whether its run dir is still there."""
    seen: dict[str, dict[str, Any]] = {}
    try:
        lines = registry_path().read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line.decode("utf-8"))  # a line that is not UTF-8 is skipped like a torn one
            run_id, _ = str(entry["run_id"]), str(entry["run_dir"])
        except (ValueError, KeyError, TypeError):
            continue  # a torn, foreign or unreadable line never hides the others
        seen[run_id] = entry
    for entry in seen.values():
        entry["exists"] = (Path(entry["run_dir"]) / "events.jsonl").exists()
    return list(seen.values())


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
