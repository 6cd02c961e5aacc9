"""The Events tab: the end of the run's event log, one line each, filterable by type.

Seeded from the last few hundred kilobytes of events.jsonl (never the whole log), then appended live.
"""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, RichLog

from nightshift.supervisor.run.shown import plain
from nightshift.supervisor.run.story import describe
from nightshift.tui import fmt

TYPE_STYLES = {"verify": "cyan", "pushback": "magenta", "run": "bold", "command": "yellow", "agent": "green",
               "budget": "red", "breaker": "red", "shift": "blue"}


def event_line(event: dict[str, Any]) -> Text:
    kind = str(event.get("type", "?"))
    try:
        story = describe(event)
    except Exception:  # noqa: BLE001 - an odd event's data never breaks the list
        story = None
    if story is None:
        story = plain(" ".join(f"{k}={v}" for k, v in (event.get("data") or {}).items()), one_line=True)
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f"{event.get('seq', '?'):>6} ", style="dim")
    line.append(f"{fmt.clock_time(event.get('ts'))} ", style="dim")
    line.append(f"{plain(kind, one_line=True):<17}", style=TYPE_STYLES.get(kind.split('.')[0], ""))
    line.append(" " + story.splitlines()[0] if story else "")
    return line


class EventsView(Vertical):
    DEFAULT_CSS = """
    EventsView { height: 1fr; }
    EventsView Input { height: 3; }
    EventsView RichLog { height: 1fr; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.events: list[dict[str, Any]] = []
        self._last_seq = -1

    def compose(self) -> ComposeResult:
        yield Input(placeholder="/ filter by type (e.g. verify, command, pushback)", id="event-filter")
        yield RichLog(id="event-log", wrap=False, max_lines=5000, auto_scroll=True)

    def matches(self, event: dict[str, Any]) -> bool:
        wanted = self.query_one("#event-filter", Input).value.strip().lower()
        return not wanted or any(w in str(event.get("type", "")).lower() for w in wanted.split())

    def show_events(self, events: list[dict[str, Any]]) -> None:
        """Append events newer than those shown (the log is append-only, seq grows)."""
        log = self.query_one("#event-log", RichLog)
        fresh = [e for e in events if int(e.get("seq") or 0) > self._last_seq]
        if not fresh:
            return
        self.events = (self.events + fresh)[-5000:]
        self._last_seq = int(fresh[-1].get("seq") or self._last_seq)
        for event in fresh:
            if self.matches(event):
                log.write(event_line(event))

    def on_input_changed(self, event: Input.Changed) -> None:
        log = self.query_one("#event-log", RichLog)
        log.clear()
        shown = [e for e in self.events if self.matches(e)]
        for e in shown[-1000:]:
            log.write(event_line(e))
