"""What every hook of nightshift's reads first: the shift's run directory and token from its environment (no
token: a Claude session nightshift did not start, which it never touches) and Claude Code's JSON on stdin
(garbage: nothing to act on). Light imports only: a hook runs at every stop or tool call of the agent."""
from __future__ import annotations

import json
import os
import sys


def supervised_input() -> tuple[str, str, dict] | None:
    """(run dir, token, payload) in a supervised session with a readable payload, else None."""
    run_dir, token = os.environ.get("NIGHTSHIFT_RUN_DIR"), os.environ.get("NIGHTSHIFT_TOKEN")
    if not run_dir or not token:
        return None
    try:
        payload = json.loads(sys.stdin.read() or "{}")
    except ValueError:
        return None
    return (run_dir, token, payload) if isinstance(payload, dict) else None
