"""What a long step is doing, said while it runs: one status line on stderr ("running the test command (12 s)"),
redrawn with its elapsed time and gone when the step ends, so a verb that works for minutes never looks hung.

Only where stderr is a terminal: a pipe, a file, a log or a batch job's output gets nothing of it, so the lines a
script reads are the same as before. Drawn with rich (installed with textual), imported only then: a verb that
runs headless never pays for it. ``say`` prints a result line (on stdout) with the status line moved out of the way.

    with step("running the test command"):       # nested steps show the innermost; the outer comes back after
        ...
    say("ok    tests        12 passing")
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.RLock()  # the supervisor's own threads may say lines while a step is shown
_STACK: list[tuple[str, float]] = []  # (what, since) of the steps under way, innermost last
_LIVE = None  # the rich Live that draws the status line, while a step is shown
ENABLED = False  # set by the face for the verbs a person waits on; never in the TUI (its screen) or a supervisor


def enable() -> None:
    global ENABLED
    ENABLED = True


def shown() -> bool:
    """A status line is drawn only for a person at a terminal (stderr a tty), never in a pipe or a log."""
    stream = sys.__stderr__
    if not ENABLED:
        return False
    try:
        return stream is not None and stream.isatty()
    except ValueError:  # a closed stream
        return False


@contextmanager
def step(what: str) -> Iterator[None]:
    """Say ``what`` (with its elapsed time) on the terminal while the block runs."""
    with _LOCK:
        _STACK.append((what, time.monotonic()))
        _start()
    try:
        yield
    finally:
        with _LOCK:
            _STACK.pop()
            if not _STACK:
                _stop()


def say(text: str) -> None:
    """Print a line now (flushed: it reaches a terminal or a pipe as its step ends), the status line around it."""
    with _LOCK:
        live = _LIVE
        if live is not None:
            _stop()  # transient: the status line is erased, the line goes where it stood
        print(text, flush=True)
        if live is not None and _STACK:
            _start()


class _Status:
    """The status line's renderable: the innermost step, its elapsed time, read at each redraw."""

    def __init__(self, spinner):
        self.spinner = spinner

    def __rich__(self):
        from rich.text import Text

        from nightshift.supervisor.run.shown import plain

        if not _STACK:  # the last redraw as the line is taken away
            return Text("")
        what, since = _STACK[-1]
        # One row whatever the width: a wrapped status line could not be erased in place.
        self.spinner.update(text=Text(plain(f"{what} ({time.monotonic() - since:.0f} s)", one_line=True),
                                      no_wrap=True, overflow="ellipsis"))
        return self.spinner


def _start() -> None:
    global _LIVE
    if _LIVE is not None or not shown():
        return
    from rich.console import Console  # lazily: only a terminal pays for it
    from rich.live import Live
    from rich.spinner import Spinner

    # The raw stderr: the verbs' streams pass text through plain(), which would strip the cursor movements.
    console = Console(file=sys.__stderr__, stderr=True)
    # No redirect: stdout may be a file while stderr is the terminal, and its lines must stay in stdout.
    _LIVE = Live(_Status(Spinner("dots")), console=console, transient=True, refresh_per_second=4,
                 redirect_stdout=False, redirect_stderr=False)
    _LIVE.start(refresh=True)  # drawn at once: a step shorter than a redraw is still said


def _stop() -> None:
    global _LIVE
    if _LIVE is not None:
        _LIVE.stop()
        _LIVE = None
