"""The help screen: every key, in one page that fits 80x24."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = """\
[b]nightshift keys[/b]                  (Escape closes this page)

[b]Dashboard[/b]
  up/down  a run   Enter  open   s  start a run   b  submit to Slurm
[b]Run screen[/b]
  1-6  Agent, Plan, Lab notes, Oracle, Shifts, Events tabs
  Escape  back to the dashboard     /  filter the events by type
  Enter on a shift (Shifts tab)  its verdict and push-back

[b]Actions[/b] (on the highlighted or open run)
  p  pause after the agent's turn   r  resume
  x  stop the run (asks first)      n  nudge: a message for the agent
  a  attach to the agent's pane     v  a shift's verdict and push-back
  y  approve what the agent waits for   N  deny it (run screen)
  o  write the run's report (HTML)  g  reload now   ctrl+p  command palette

[b]Reading the screen[/b]
  Best: worst error / tolerance, under 1 passes; Trend: its history.
  Last: age of the last event. Supervisor: host and heartbeat age.
  Oracle rows that fail say FAIL, not only in red.

The TUI only reads run directories and writes commands to their
inbox: closing it never disturbs a run, and reopening it, from any
login node, shows the same picture."""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 78; max-width: 100%; height: auto; max-height: 100%; border: thick $accent; background: $panel; padding: 0 1; }
    """
    BINDINGS = [("escape", "dismiss", "Close"), ("q", "dismiss", "Close"), ("question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(KEYS)
