"""The Plan tab (CLAUDE.md with its checkbox progress) and the Lab notes tab (CHANGELOG.md), rendered.

The file is read again only when its modification time changes.
"""
from __future__ import annotations

from pathlib import Path

from textual import work
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from nightshift.supervisor.run.shown import plain
from nightshift.supervisor.verify.plan import plan_count
from nightshift.tui.shown import shown_line

MAX_CHARS = 80_000  # a very long file is cut (with a note) rather than slowing the screen


def progress(text: str, width: int = 20) -> str:
    """The plan's count as the verdict says it ("plan: 4/4 checked": the "## Plan" section's items, each once;
    supervisor/verify/plan.py), with a bar."""
    done, items = plan_count(text)
    if not items:
        return "plan: no checkbox items"
    filled = round(done / items * width)
    return f"plan: {done}/{items} checked  [{'#' * filled}{'.' * (width - filled)}]"


class DocView(VerticalScroll):
    DEFAULT_CSS = """
    DocView { height: 1fr; }
    DocView #doc-head { height: 1; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, path: Path, with_progress: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.with_progress = with_progress
        self._mtime: float | None = -1.0

    def compose(self):
        yield Static(f"{self.path.name}", id="doc-head")
        yield Markdown("", id="doc-body")

    def check(self) -> None:
        """Reload when the file changed (called when the run changes and when the tab is shown)."""
        self.load()

    @work(thread=True, exit_on_error=False, exclusive=True, group="doc")
    def load(self) -> None:
        try:
            mtime = self.path.stat().st_mtime
        except OSError:
            mtime = None
        if mtime == self._mtime:
            return
        self._mtime = mtime
        if mtime is None:
            head, body = f"{self.path.name}: not found in the workspace ({self.path.parent})", ""
        else:
            try:
                body = self.path.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                body = ""
                head = f"{self.path.name}: unreadable ({exc.strerror})"
            else:
                head = f"{self.path.name} · {progress(body)}" if self.with_progress else self.path.name
                if len(body) > MAX_CHARS:
                    body = body[:MAX_CHARS] + f"\n\n*(cut at {MAX_CHARS} characters; open {self.path} to read on)*"
        self.app.call_from_thread(self._paint, head, body)

    def _paint(self, head: str, body: str) -> None:
        self.query_one("#doc-head", Static).update(shown_line(head))
        self.query_one("#doc-body", Markdown).update(plain(body))  # Markdown, but no escape sequence of the agent's
