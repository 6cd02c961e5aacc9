"""`nightshift hook pretool`: Claude Code's PreToolUse hook, run before every tool call of the agent.

It acts only in a session the supervisor started (the shift's token and run directory in its environment) and
reads only the run's compiled policy, so it is fast (started with `python -S`, stdlib only) and never waits for
the supervisor: with the supervisor gone, the static policy still holds. A refused call is answered with
Claude Code's deny decision and a reason the agent reads, and recorded for the supervisor (``refusals/``),
which turns it into a ``policy.denied`` event and names it in the next push-back.
"""
from __future__ import annotations

import json
import os
import sys

from nightshift.supervisor.shift.hook_input import supervised_input
from nightshift.supervisor.shift.policy_check import decide, record_refusal

SHORT = 200  # characters of a tool's input kept in the record: enough to name it, never a whole file


def short_input(tool: str, tool_input: dict) -> str:
    for key in ("command", "file_path", "notebook_path", "path", "url", "query", "pattern"):
        if tool_input.get(key):
            text = str(tool_input[key])
            return text if len(text) <= SHORT else text[: SHORT - 1] + "…"
    text = json.dumps(tool_input)[:SHORT]
    return text


def main(argv: list[str]) -> int:
    found = supervised_input()
    if found is None:
        return 0  # not a session nightshift started (never touched), or garbage
    run_dir, token, payload = found
    out = answer(run_dir, token, payload, os.environ.get("NIGHTSHIFT_SHIFT"), load_policy(run_dir))
    if out:
        print(out)
    return 0


def load_policy(run_dir: str) -> dict | None:
    try:
        with open(os.path.join(run_dir, "policy.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (ValueError, OSError):
        return None  # no compiled policy: Claude Code's own rules and the integrity check still hold


def answer(run_dir: str, token: str, payload: dict, shift: str | None, policy: dict | None,
           decided_by: str = "hook") -> str:
    """What the hook prints for one call: Claude Code's deny decision (and the refusal recorded), or nothing.
    Shared by the hook process and the resident helper (pretool_server.py)."""
    if policy is None or not isinstance(payload.get("tool_input"), dict):
        return ""
    tool, tool_input = str(payload.get("tool_name") or ""), payload["tool_input"]
    refused = decide(policy, tool, tool_input, str(payload.get("cwd") or ""))
    if refused is None:
        return ""
    rule, message = refused
    try:
        record_refusal(run_dir, {"tool": tool, "input": short_input(tool, tool_input), "rule": rule,
                                 "message": message, "shift": shift, "token": token,
                                 "decided_by": decided_by})
    except OSError:
        pass  # the refusal holds even when it cannot be recorded
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                              "permissionDecisionReason": f"nightshift policy ({rule}): {message}"}})


if __name__ == "__main__":  # by hand; the hook itself runs main() through agents/claude_settings.hook_command
    sys.exit(main(sys.argv[1:]))
