"""One shift's verdicts and the push-back that answered them, read from ``shifts/<n>/``.

Each turn's ``t<turn>.verdict.json`` (the checks, pass/fail by word), then what the supervisor sent back: the
next turn's prompt in the same shift (an in-session push-back) or the first prompt of the next shift (a fresh
start that orients the agent).
"""
from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from nightshift.supervisor.run.shown import plain
from nightshift.supervisor.run.paths import RunPaths


def _turns(run: RunPaths, shift: int, name: str) -> list[tuple[int, Path]]:
    out = []
    for path in run.shift_dir(shift).glob(f"t*.{name}"):
        head = path.name.split(".", 1)[0][1:]
        if head.isdigit():
            out.append((int(head), path))
    return sorted(out)


def verdict_text(run: RunPaths, shift: int) -> Text:
    text = Text()
    verdicts = _turns(run, shift, "verdict.json")
    if not verdicts:
        text.append(f"Shift {shift} has no verdict yet.\n", style="dim")
    for turn, path in verdicts:
        try:
            v = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            text.append(f"turn {turn}: {path.name} unreadable ({exc})\n", style="red")
            continue
        passed = bool(v.get("passed"))
        text.append(f"Turn {turn}: ", style="bold")
        text.append("PASS" if passed else "FAIL", style="bold green" if passed else "bold red")
        claimed = v.get("claimed")
        text.append(plain(f"  claimed: {claimed or 'nothing'}  metric: {v.get('metric', '-')}", one_line=True) + "\n")
        for check in v.get("checks") or []:
            ok = check.get("passed")
            text.append("  PASS " if ok else "  FAIL ", style="green" if ok else "red")
            text.append(plain(f"{check.get('name', '?')}: {check.get('summary', '')}", one_line=True) + "\n")
            for line in (check.get("lines") or [])[:6] if not ok else []:
                text.append(f"       {plain(line, one_line=True)}\n", style="dim")
    text.append("\n")
    text.append_text(pushback_text(run, shift, verdicts[-1][0] if verdicts else 0))
    return text


def pushback_text(run: RunPaths, shift: int, last_verdict_turn: int) -> Text:
    text = Text()
    later = [(t, p) for t, p in _turns(run, shift, "prompt.md") if t > last_verdict_turn]
    if later:
        turn, path = later[0]
        text.append(f"Push-back (turn {turn}, same shift):\n", style="bold")
    else:
        path = run.turn_file(shift + 1, 1, "prompt.md")
        if not path.exists():
            return Text("No push-back after the last verdict (the run decided otherwise, or not yet).", style="dim")
        text.append(f"Push-back (a fresh shift {shift + 1}, its orientation prompt):\n", style="bold")
    try:
        text.append(plain(path.read_text(encoding="utf-8", errors="replace")[-6000:]))
    except OSError as exc:
        text.append(f"{path.name} unreadable: {exc.strerror}", style="red")
    return text


class VerdictScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    VerdictScreen { align: center middle; }
    VerdictScreen > Vertical { width: 100%; height: 100%; border: thick $accent; background: $panel; }
    VerdictScreen #verdict-title { height: 1; padding: 0 1; background: $primary-background; }
    """
    BINDINGS = [("escape", "dismiss", "Close"), ("q", "dismiss", "Close")]

    def __init__(self, run: RunPaths, shift: int) -> None:
        super().__init__()
        self.run = run
        self.shift = shift

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"{self.run.run_id} · shift {self.shift} · verdict and push-back (Escape closes)",
                         id="verdict-title")
            with VerticalScroll():
                yield Static("reading ...", id="verdict-body")

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exit_on_error=False, exclusive=True)
    def load(self) -> None:
        text = verdict_text(self.run, self.shift)
        self.app.call_from_thread(self.query_one("#verdict-body", Static).update, text)
