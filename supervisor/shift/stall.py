"""A stalled agent: no output, no tool call, no stop for ``[limits] stall_after``. It is nudged once; if it stays
silent for another ``stall_after`` its shift is ended and a fresh one started (a hung network call, a deadlocked
tool, a session waiting on something that will never come would otherwise hold the run until turn_timeout).

Activity is what the turn writes: everything the agent prints goes to its turn log (the pane's output for tmux, the
process's for local and Slurm; a headless Claude Code prints each tool call and result as it happens). The log is
checked with one stat, a few times per ``stall_after``, never at every wake-up.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from nightshift.supervisor.agents.base import StopInfo

NUDGE = ("nightshift: nothing has come from you for {silent}. If a command hangs, stop it and try another way; "
         "write what you are doing in CHANGELOG.md, then go on (or `nightshift claim blocked --summary ...`).")

# Claude Code lets one Bash tool call run silent this long (its BASH_MAX_TIMEOUT_MS, 10 minutes by default).
CLAUDE_TOOL_LIMIT = 600.0


def claude_tool_limit() -> float:
    try:
        return float(os.environ.get("BASH_MAX_TIMEOUT_MS", "")) / 1000.0
    except ValueError:
        return CLAUDE_TOOL_LIMIT


class StallWatch:
    """``check()`` says "nudge" once after ``after`` seconds without output, "end" after another silent ``after``
    since the nudge, else None."""

    def __init__(self, after: float, log_file: Path | None):
        self.after, self.log_file = after, log_file
        self.last = time.monotonic()
        self.size: int | None = None
        self.nudged = False
        self.every = max(0.5, min(5.0, after / 4))
        self._checked = 0.0

    def reset(self) -> None:
        """Not running yet (a batch job in the queue): silence counts from when it runs."""
        self.last = time.monotonic()

    def check(self) -> str | None:
        now = time.monotonic()
        if now - self._checked < self.every:
            return None
        self._checked = now
        try:
            size = os.stat(self.log_file).st_size if self.log_file else None
        except OSError:
            size = None
        if size != self.size:
            self.size, self.last = size, now
            return None
        if now - self.last < self.after:
            return None
        if not self.nudged:
            self.nudged, self.last = True, now
            return "nudge"
        return "end"

    def silent_for(self) -> str:
        seconds = self.after
        return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g}s"


def on_stall(session, what: str, stall: StallWatch, ctx, target: dict[str, Any] | None) -> StopInfo | None:
    """Nudge a silent agent once (typed into its live session, where it has one); then end its turn.
    ``session`` is the shift's AgentSession (its agent, backend and ledger)."""
    silent = stall.silent_for()
    if what == "nudge":
        typed = bool(target) and session.agent.hook_driven and session.backend.send_text(target, NUDGE.format(
            silent=silent))
        session.ledger.emit("agent.stalled", ctx.shift, turn=ctx.turn, action="nudged", silent=silent,
                            delivered=typed)
        return None
    session.ledger.emit("agent.stalled", ctx.shift, turn=ctx.turn, action="ended", silent=silent)
    if target:
        session.backend.terminate(target)
    return StopInfo(reason="stalled", error=f"no output for {silent}, nudged once, then {silent} more")
