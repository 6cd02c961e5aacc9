"""Noticing an agent that waits for a human. Claude Code's PermissionRequest hook (`nightshift hook permission`)
fires the moment a permission prompt is shown: it records what is asked in ``<run>/waits/`` and returns at once
(the prompt stays for a human to answer). The supervisor turns each record into an ``agent.waiting`` event; other
dialogs are caught on the agent's screen (see agents/claude.py). Light imports: it runs inside the agent's CLI.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from nightshift.supervisor.run.listing import matching
from nightshift.supervisor.shift.hook_input import supervised_input
from nightshift.supervisor.shift.pretool import short_input

# What a screen that waits for a human shows (Claude Code 2.1.330), with the name of what it waits for.
PROMPTS = {
    "Do you want to proceed?": "approval of a tool call",
    "This command requires approval": "approval of a shell command",
    "Do you want to create": "approval to create a file",
    "Do you want to make this edit": "approval of an edit",
    "Do you want to allow Claude to fetch": "approval of a web fetch",
    "Do you want to allow this connection?": "approval of a network connection outside the sandbox",
}


def waiting_on_screen(screen: str) -> str | None:
    for marker, what in PROMPTS.items():
        if marker in screen:
            return what
    return None


def main(argv: list[str]) -> int:
    found = supervised_input()
    if found is None:
        return 0
    run_dir, token, payload = found
    tool = str(payload.get("tool_name") or "a tool")
    tool_input = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
    folder = Path(run_dir) / "waits"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        name = f"{time.time():.6f}-{os.getpid()}.json"
        tmp = folder / f".{name}.tmp"
        tmp.write_text(json.dumps({"what": f"permission for {tool}: {short_input(tool, tool_input)}",
                                   "tool": tool, "token": token, "ts": time.time()}))
        os.replace(tmp, folder / name)
    except OSError:
        pass  # the screen check still notices the prompt
    return 0  # no decision: the prompt stays for a human (or the policy's on_wait) to answer


def take_waits(folder: Path) -> list[dict]:
    """The waits recorded in ``folder`` (RunPaths.waits), each marked seen as it is taken."""
    out = []
    for path in matching(folder, ".json"):  # listed again only when waits/ changed (cheap on NFS)
        try:
            out.append(json.loads(path.read_text(encoding="utf-8", errors="replace")))
        except ValueError:
            pass
        path.rename(path.with_suffix(".seen"))
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
