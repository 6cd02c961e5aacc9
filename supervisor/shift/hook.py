"""`nightshift hook stop`: Claude Code's Stop hook. Runs at every stop of every Claude session in the workspace,
so it imports little and does nothing unless its environment carries the token of a shift the supervisor started.

In a supervised session it records the stop, waits for the verdict, and prints ``{"decision": "block", ...}``
(the push-back) or nothing (the agent may stop). When the supervisor is gone or slower than the hook timeout,
it lets the agent stop and leaves a note for the supervisor: it never hangs a session.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from nightshift.supervisor.shift import stop_channel
from nightshift.supervisor.shift.hook_input import supervised_input
from nightshift.supervisor.run.liveness import supervisor_status

FIELDS = ("session_id", "transcript_path", "last_assistant_message", "stop_hook_active", "cwd")


def main(argv: list[str]) -> int:
    found = supervised_input()
    if found is None:
        return 0  # not a session nightshift started (never touched), or nothing readable
    run_dir, token, payload = found
    stops = Path(run_dir) / "stops"
    if not stops.is_dir():
        return 0
    supervisor_file = Path(run_dir) / "supervisor.json"
    request = {k: payload.get(k) for k in FIELDS}
    request.update(token=token, shift=os.environ.get("NIGHTSHIFT_SHIFT"), pid=os.getpid())
    try:
        req_id = stop_channel.post_request(stops, request)
    except OSError:
        return 0
    timeout = float(os.environ.get("NIGHTSHIFT_HOOK_TIMEOUT", "600"))
    answer = stop_channel.wait_answer(stops, req_id, timeout,
                                      alive=lambda: supervisor_status(supervisor_file)["alive"])
    if answer is None:
        why = "supervisor not running" if not supervisor_status(supervisor_file)["alive"] else \
            f"no verdict within {timeout:.0f}s"
        stop_channel.release(stops, req_id, why)
        return 0
    if answer.get("decision") == "block" and answer.get("reason"):
        print(json.dumps({"decision": "block", "reason": answer["reason"]}))
    return 0


if __name__ == "__main__":  # by hand; the hook itself runs main() through agents/claude_settings.hook_command
    sys.exit(main(sys.argv[1:]))
