"""What the TUI shows of the workspace and the agent, as text: supervisor/run/shown.plain (control characters and
escape sequences made visible) inside a Rich ``Text``, which Textual never reads as markup (a stray `[/]` raised
MarkupError; an `[@click=...]` tag in a preflight line became a live action). Every widget and table cell that
shows such text goes through here.
"""
from __future__ import annotations

import re

from rich.text import Text

from nightshift.supervisor.run.shown import plain

SGR = re.compile(r"(\x1b\[[0-9;:]*m)")


def shown(text: object, style: str = "") -> Text:
    """``text`` as plain text: no markup, no escape sequence."""
    return Text(plain(text), style=style)


def shown_line(text: object, style: str = "") -> Text:
    """One line of it (a table cell): newlines shown as escapes too."""
    return Text(plain(text, one_line=True), style=style)


def cells(values) -> list:
    """A table row's cells: every string as a line of text (DataTable reads a str cell as markup)."""
    return [shown_line(v) if isinstance(v, str) else v for v in values]


def terminal_colours(text: str) -> Text:
    """The agent's own screen with its colours (SGR) kept and every other sequence made visible."""
    return Text.from_ansi("".join(part if SGR.fullmatch(part) else plain(part) for part in SGR.split(text)))
