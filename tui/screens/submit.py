"""Submitting a workspace to Slurm (`nightshift submit` from the TUI): first the #SBATCH settings and the whole
batch script that will be sent, then, on a second Enter, the submit. Slurm's refusal is shown verbatim in the
form, which stays open; nothing is created then (the face checks with ``sbatch --test-only`` first).
"""
from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from nightshift.tui.seams import ActionError

HINT = "Workspace to submit (it needs a nightshift.toml). Enter shows what will be sent; Enter again sends; Escape cancels."


class SubmitScreen(ModalScreen[tuple[str, int] | None]):
    """Dismissed with (run id, job id) once Slurm took the first job, or None (Escape)."""

    DEFAULT_CSS = """
    SubmitScreen { align: center middle; }
    SubmitScreen > Vertical { width: 100; max-width: 100%; height: 90%; border: thick $accent; background: $panel; padding: 0 1; }
    SubmitScreen #submit-settings { height: auto; color: $text; }
    SubmitScreen #submit-script-box { height: 1fr; border: round $primary-background; }
    SubmitScreen #submit-error { height: auto; color: $error; }
    """
    BINDINGS = [("escape", "cancel", "Cancel")]

    def __init__(self, workspace: str | None = None) -> None:
        super().__init__()
        self.workspace = workspace or os.getcwd()
        self.plan = None
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(HINT, id="submit-hint")
            yield Input(value=self.workspace, id="submit-workspace")
            yield Static("", id="submit-settings")
            with VerticalScroll(id="submit-script-box"):
                yield Static("", id="submit-script")
            yield Static("", id="submit-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = event.value.strip()
        if not path or self.busy:
            return
        self.busy = True
        if self.plan is not None and Path(path).expanduser().resolve() == self.plan.workspace:
            self.say("sending to Slurm ...", error=False)
            self.send(self.plan)
        else:
            self.say("reading nightshift.toml ...", error=False)
            self.preview(Path(path))

    def say(self, message: str, error: bool = True) -> None:
        self.query_one("#submit-error", Static).update(Text(message, style="bold" if error else "dim"))

    @work(thread=True, exit_on_error=False, group="submit")
    def preview(self, workspace: Path) -> None:
        try:
            plan = self.app.seams.plan_submit(workspace)
        except Exception as exc:  # noqa: BLE001 - a worker that dies leaves the form busy for good
            self.app.call_from_thread(self.refused, str(exc) if isinstance(exc, ActionError) else f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self.show_plan, plan)

    def show_plan(self, plan) -> None:
        self.plan, self.busy = plan, False
        settings = Text(f"run {plan.run_id} will be submitted with:\n", style="bold")
        settings.append("\n".join(plan.settings))
        self.query_one("#submit-settings", Static).update(settings)
        self.query_one("#submit-script", Static).update(Text(plan.script))
        self.say("This is the script Slurm will get. Enter sends it; Escape cancels.", error=False)

    @work(thread=True, exit_on_error=False, group="submit")
    def send(self, plan) -> None:
        try:
            run_id, job_id = self.app.seams.submit_plan(plan)
        except Exception as exc:  # noqa: BLE001 - a worker that dies leaves the form busy for good
            self.app.call_from_thread(self.refused, str(exc) if isinstance(exc, ActionError) else f"{type(exc).__name__}: {exc}")
            return
        self.app.call_from_thread(self.dismiss, (run_id, job_id))

    def refused(self, message: str) -> None:
        """Slurm's (or the config's) words, verbatim; the form stays open: fix nightshift.toml, Enter previews again."""
        self.busy, self.plan = False, None
        self.say(f"not submitted: {message}")

    def action_cancel(self) -> None:
        self.dismiss(None)
