"""The Agent tab: the live tail of the agent's tmux pane (capture-pane), or of its log file when the pane is
not reachable from here (a batch job, another login node, a finished turn).

Captured in a thread worker on a timer that runs only while the tab is shown.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.containers import VerticalScroll
from textual.widgets import Static

from nightshift.supervisor.run.paths import RunPaths
from nightshift.tui.follow import latest_turn_file
from nightshift.tui.shown import terminal_colours

TAIL_BYTES = 48 * 1024
TAIL_LINES = 200
# Escape sequences other than colours (cursor moves, title sets, bracketed paste) garble a log replay.
SGR = re.compile(r"\x1b\[[0-9;:]*m")
NON_SGR = re.compile(r"\x1b\[[0-9;?]*[A-Za-ln-z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\r(?!\n)")


def capture_pane(target: dict[str, Any]) -> str | None:
    """The pane's screen and a little scrollback (tmux capture-pane), or None when the pane is not reachable."""
    if target.get("backend") != "tmux" or not target.get("socket") or not target.get("pane"):
        return None
    # A plain tmux call: libtmux here would cost the TUI's start-up ~150 ms of imports for one command.
    # With the server's identity first in the same call: a pane id of a dead server names another pane now.
    server = target.get("server")
    probe = ["display-message", "-p", "-t", target["pane"], "#{pid}:#{start_time}", ";"] if server else []
    try:
        result = subprocess.run(["tmux", "-L", target["socket"], *probe, "capture-pane", "-p", "-e", "-J", "-t",
                                 target["pane"], "-S", f"-{TAIL_LINES}"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):  # no tmux, a hung server: fall back to the log file
        return None
    if result.returncode != 0 or result.stderr:
        return None
    lines = result.stdout.splitlines()
    if server:
        if not lines or lines.pop(0) != server:
            return None
    # A dead pane (remain-on-exit) shows little but "Pane is dead": its log file says more.
    plain = [SGR.sub("", line) for line in lines if "Pane is dead" not in line]
    if not "".join(plain).strip():
        return None
    return "\n".join(lines).rstrip("\n")


def read_log_tail(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - TAIL_BYTES))
            blob = fh.read()
    except OSError:
        return None
    text = blob.decode("utf-8", errors="replace")
    if size > TAIL_BYTES:
        text = text.split("\n", 1)[-1]
    return "\n".join(text.splitlines()[-TAIL_LINES:])


def agent_output(run: RunPaths, state: dict[str, Any]) -> tuple[str, str]:
    """(where it came from, the text)."""
    target = state.get("target") or {}
    if state.get("phase") not in ("finished",):
        captured = capture_pane(target)
        if captured is not None:
            return f"tmux pane {target.get('pane')} (live)", captured
    log = Path(target["log"]) if target.get("log") else latest_turn_file(run, state.get("shift"), "log")
    text = read_log_tail(log)
    if text is None:
        return "no agent output yet", ""
    return f"shift {log.parent.name} · {log.name}" if log else "log", text


class AgentTail(VerticalScroll):
    """Follows the end of the output unless the user scrolled up to read."""

    DEFAULT_CSS = """
    AgentTail { height: 1fr; }
    AgentTail #agent-source { color: $text-muted; height: 1; }
    """

    def __init__(self, run: RunPaths, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.state: dict[str, Any] = {}
        self._last = None

    def compose(self):
        yield Static("", id="agent-source")
        yield Static("", id="agent-text")

    def on_mount(self) -> None:
        self.set_interval(1.0, self.tick)

    def show_state(self, state: dict[str, Any]) -> None:
        self.state = state
        self.tick()

    def tick(self) -> None:
        if self.state and self.is_on_screen and self.display:
            self.capture(dict(self.state))

    @work(thread=True, exit_on_error=False, exclusive=True, group="agent-tail")
    def capture(self, state: dict[str, Any]) -> None:
        where, text = agent_output(self.run, state)
        if (where, text) != self._last:
            self.app.call_from_thread(self._paint, where, text)

    def _paint(self, where: str, text: str) -> None:
        # What was shown is remembered only once it is on screen: a paint that failed (the screen still being
        # built on a loaded machine) is painted again at the next tick instead of being taken as done forever.
        at_end = self.scroll_y >= self.max_scroll_y - 1
        self.query_one("#agent-source", Static).update(f"{where} · a attaches")
        self.query_one("#agent-text", Static).update(terminal_colours(NON_SGR.sub("", text)) if text else
                                                     Text("(nothing yet)", style="dim"))
        self._last = (where, text)
        if at_end:
            self.call_after_refresh(self.scroll_end, animate=False)
