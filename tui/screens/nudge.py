"""Typing a message for the agent: delivered into its context by the supervisor (a `nudge` command)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class NudgeScreen(ModalScreen[str | None]):
    """Enter sends the message; Escape (or an empty message) sends nothing."""

    DEFAULT_CSS = """
    NudgeScreen { align: center middle; }
    NudgeScreen > Vertical { width: 76; max-width: 100%; height: auto; border: thick $accent; background: $panel; padding: 1 2; }
    """
    BINDINGS = [("escape", "cancel", "Cancel")]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Message for the agent of {self.run_id} (Enter sends, Escape cancels):")
            yield Input(placeholder="e.g. the TE spectrum crosses zero: compare it against sqrt(TT*EE)", id="message")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
