"""`[notify] command`: tell the human when a run is done, paused, tripped its breaker, failed or is blocked.

With ``[notify] report = true`` the run's morning report is written first (by running `nightshift report`, the
face's verb, as a command: the run room imports nothing above it) and its path is NIGHTSHIFT_REPORT.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from nightshift.supervisor.run.own_python import python_argv
from nightshift.supervisor.run.paths import RunPaths

REPORT_TIMEOUT = 120


def write_report(run_root: Path) -> tuple[Path | None, str | None]:
    """(the report's path, or None; a one-line error, or None)."""
    out = Path(run_root) / "report.html"
    try:
        proc = subprocess.run(python_argv("nightshift.supervisor.cli.main", "report", str(run_root), "-o", str(out)), cwd=run_root,
                              capture_output=True, timeout=REPORT_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"the report was not written within {REPORT_TIMEOUT}s"
    except OSError as exc:
        return None, f"the report could not be written ({exc.strerror or exc})"
    if proc.returncode != 0:
        said = proc.stderr.decode(errors="replace").strip().splitlines()
        return None, f"the report failed: {said[-1][:200] if said else f'exit {proc.returncode}'}"
    return out, None


def notify(command: str, kind: str, run_id: str, message: str, report_of: Path | None = None) -> str | None:
    """Run the user's command with NIGHTSHIFT_EVENT/RUN/MESSAGE (and REPORT) set; returns a one-line error or None."""
    if not command:
        return None
    env = {**os.environ, "NIGHTSHIFT_EVENT": kind, "NIGHTSHIFT_RUN": run_id, "NIGHTSHIFT_MESSAGE": message}
    report_error = None
    if report_of is not None:
        path, report_error = write_report(report_of)
        if path is not None:
            env["NIGHTSHIFT_REPORT"] = str(path)
    try:
        proc = subprocess.run(["bash", "-c", command], env=env, capture_output=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "notify command timed out after 60s"
    if proc.returncode != 0:
        return f"notify command exited {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[:200]}"
    return report_error


def tell(cfg, kind: str, run: RunPaths, message: str) -> str | None:
    """``[notify]`` (``cfg``) as the user set it: the command, when ``kind`` is one it is on for, with ``run``'s
    report when asked; a one-line error or None."""
    if not cfg.command or kind not in cfg.on:
        return None
    return notify(cfg.command, kind, run.run_id, message, report_of=run.root if cfg.report else None)
