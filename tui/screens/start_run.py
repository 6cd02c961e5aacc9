"""Asking for the workspace of a new run (a folder with nightshift.toml; `nightshift init` makes one)."""
from __future__ import annotations

import os

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class StartRunScreen(ModalScreen[str | None]):
    """Dismissed with the path typed (Enter), or None (Escape)."""

    DEFAULT_CSS = """
    StartRunScreen { align: center middle; }
    StartRunScreen > Vertical { width: 76; max-width: 100%; height: auto; border: thick $accent; background: $panel; padding: 1 2; }
    """
    BINDINGS = [("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Start a run: the workspace folder (it needs a nightshift.toml). Enter starts, Escape cancels.")
            yield Input(value=os.getcwd(), id="workspace")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
