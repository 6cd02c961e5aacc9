"""`[notify] command`: tell the human when a run is done, paused, tripped its breaker, failed or is blocked."""
from __future__ import annotations

import os
import subprocess


def notify(command: str, kind: str, run_id: str, message: str) -> str | None:
    """Run the user's command with NIGHTSHIFT_EVENT/RUN/MESSAGE set; returns a one-line error or None."""
    if not command:
        return None
    env = {**os.environ, "NIGHTSHIFT_EVENT": kind, "NIGHTSHIFT_RUN": run_id, "NIGHTSHIFT_MESSAGE": message}
    try:
        proc = subprocess.run(["bash", "-c", command], env=env, capture_output=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "notify command timed out after 60s"
    if proc.returncode != 0:
        return f"notify command exited {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[:200]}"
    return None
