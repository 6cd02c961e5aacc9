"""Asking for the workspace of a new run (a folder with nightshift.toml; `nightshift init` makes one).

When the face hands in a preflight (``check``), the first Enter runs it in a thread and shows its screen here,
each line ok or a problem with its fix; Enter again starts the run only if nothing would make it fail (to start
anyway, `nightshift run --no-check` in a shell). Without one, Enter starts at once.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from nightshift.tui.shown import shown


class StartRunScreen(ModalScreen[Any]):
    """Dismissed with the path typed (no check), (path, checked) after a passing check, or None (Escape)."""

    DEFAULT_CSS = """
    StartRunScreen { align: center middle; }
    StartRunScreen > Vertical { width: 110; max-width: 100%; height: auto; max-height: 90%; border: thick $accent; background: $panel; padding: 1 2; }
    StartRunScreen #preflight-box { height: auto; max-height: 24; }
    """
    BINDINGS = [("escape", "cancel", "Cancel")]

    def __init__(self, check: Callable[[str], Any] | None = None) -> None:
        super().__init__()
        self.check = check
        self.checked: tuple[str, Any] | None = None  # (path, result) of the last preflight
        self.checking = False

    def compose(self) -> ComposeResult:
        with Vertical():
            hint = " Enter checks it first (the preflight), then Enter starts." if self.check else " Enter starts."
            yield Static("Start a run: the workspace folder (it needs a nightshift.toml)." + hint +
                         " Escape cancels.")
            yield Input(value=os.getcwd(), id="workspace")
            with VerticalScroll(id="preflight-box"):
                yield Static("", id="preflight")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = event.value.strip()
        if not path or self.check is None:
            self.dismiss(path or None)
            return
        if self.checked and self.checked[0] == path and self.checked[1].passed:
            self.dismiss((path, self.checked[1]))
        elif not self.checking:
            self.checking = True
            self.query_one("#preflight", Static).update(shown(f"checking {path} (runs the oracle and the tests once) ..."))
            self.run_check(path)

    @work(thread=True, exit_on_error=False, group="preflight")
    def run_check(self, path: str) -> None:
        try:
            result = self.check(path)
        except Exception as exc:  # noqa: BLE001 - a failed check is shown, never the end of the TUI
            self.app.call_from_thread(self.show_error, f"the preflight could not run: {exc}")
            return
        self.app.call_from_thread(self.show_result, path, result)

    def show_result(self, path: str, result: Any) -> None:
        self.checking = False
        self.checked = (path, result)
        advice = ("\nready: Enter starts the run" if result.passed else
                  "\nfix the problems above and press Enter to check again (or `nightshift run --no-check`)")
        self.query_one("#preflight", Static).update(shown(result.text + advice))

    def show_error(self, message: str) -> None:
        self.checking = False
        self.query_one("#preflight", Static).update(shown(message))

    def action_cancel(self) -> None:
        self.dismiss(None)
