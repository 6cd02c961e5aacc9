"""The nightshift TUI: every run of the user at a glance, closed and reopened at will.

``make_app`` builds the app for ``main`` (the `nightshift` / `nightshift tui` commands), the snapshot tests
and the benchmark alike. The app holds no state of its own: it reads run directories (snapshot plus tail)
and writes nothing but inbox commands (see tui/seams.py). Live updates come from one thread worker
(tui/live.py) whose batches are folded on the UI thread.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

from textual import work
from textual.app import App, SystemCommand
from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from nightshift.supervisor.run.paths import RunPaths
from nightshift.supervisor.run.registry import bad_lines_note
from nightshift.tui.actions import RunActions
from nightshift.tui.follow import RunFollower
from nightshift.tui.live import Batch, LiveFeed
from nightshift.tui.runs import RunBook
from nightshift.tui.screens.dashboard import DashboardScreen
from nightshift.tui.seams import Seams


class NightshiftApp(RunActions, App[int]):
    """The app; screens ask it for the run book and call its actions (tui/actions.py)."""

    TITLE = "nightshift"
    CSS = """
    Screen { background: $surface; }
    .title-bar { height: 1; background: $primary-background; color: $text; padding: 0 1; }
    .detail-line { height: auto; max-height: 3; color: $text-muted; padding: 0 1; }
    .fail { color: $error; }
    """
    BINDINGS = [("question_mark", "help", "Help"), ("q", "quit", "Quit")]

    class Batched(Message):
        """New events (or new runs) read by the live worker, to fold on the UI thread."""

        def __init__(self, batch: Batch, initial: bool = False) -> None:
            super().__init__()
            self.batch = batch
            self.initial = initial

    def __init__(self, clock: Callable[[], float] = time.time, seams: Seams | None = None, live: bool = True,
                 runs: list[RunPaths] | None = None, open_run: str | None = None):
        super().__init__()
        self.animation_level = "none"  # over a slow SSH link an animation is only bytes and delay
        self.clock = clock
        self.seams = seams or Seams()
        self.live = live
        self.book = RunBook(clock)
        self.loaded = False
        self._explicit_runs = runs
        self._open_run = open_run
        self._bad_lines: list[int] = []
        self.feed = LiveFeed(self.book.followers, use_registry=runs is None)

    def on_mount(self) -> None:
        if not self._open_run:  # opened on one run, the dashboard is built when the user goes back to it
            self.push_screen(DashboardScreen())
        self.load_runs()

    @work(thread=True, exit_on_error=False, exclusive=True, group="load")
    def load_runs(self) -> None:
        """First paint: every run read from its snapshot and tail, off the UI thread."""
        batch = self.feed.initial()
        for run in self._explicit_runs or []:
            batch.new_runs.setdefault(run.run_id, RunFollower(run))
        self.feed.link_lanes(batch)
        self.post_message(self.Batched(batch, initial=True))

    @work(thread=True, exit_on_error=False, exclusive=True, group="live")
    def follow_runs(self) -> None:
        worker = get_current_worker()
        last = time.monotonic()
        while not worker.is_cancelled:
            self.feed.wait(lambda: worker.is_cancelled)
            if worker.is_cancelled:
                return
            try:
                batch = self.feed.tick()
            except OSError as exc:  # a filesystem hiccup (NFS): say so, and look again at the next tick
                self.call_from_thread(self.notify, f"reading the runs failed: {exc}", severity="warning")
                continue
            # With nothing new, a beat every few seconds keeps the ages and heartbeats honest.
            if batch or time.monotonic() - last > 4.5:
                last = time.monotonic()
                self.post_message(self.Batched(batch))

    def on_nightshift_app_batched(self, message: Batched) -> None:
        batch = message.batch
        changed: set[str] = set()
        for run_id, follower in batch.new_runs.items():
            self.book.add(run_id, follower)
            changed.add(run_id)
        if batch.gone_runs:
            self._drop_runs(batch.gone_runs)
            changed |= batch.gone_runs
        for run_id, links in batch.fleets.items():
            self.book.link(links)
            changed.add(run_id)
        if batch.bad_lines is not None and batch.bad_lines != self._bad_lines:
            self._bad_lines = batch.bad_lines  # said once, and again only when the registry's bad lines change
            if batch.bad_lines:
                self.notify(bad_lines_note(batch.bad_lines), severity="warning", timeout=10)
        flawed = [rid for rid, f in batch.new_runs.items() if f.warnings and not f.problem]
        if flawed:
            # One notice for all of them; the rows carry a "!" and the details.
            self.notify(f"{len(flawed)} run log{'s' if len(flawed) > 1 else ''} with unreadable or torn lines "
                        f"(skipped): {', '.join(flawed[:3])}; rows marked !", severity="warning", timeout=8)
        for run_id, update in batch.updates.items():
            follower = self.book.followers.get(run_id)
            if follower is None:
                continue
            before = len(follower.warnings)
            follower.absorb(update)
            changed.add(run_id)
            for warning in follower.warnings[before:]:
                self.notify(f"{run_id}: {warning}", severity="warning", timeout=8)
        if message.initial:
            self.loaded = True
            if self._open_run:
                self.open_run(self._open_run)
            if self.live:
                self.feed.watch([f.run.root for f in self.book.followers.values()])
                self.follow_runs()
        elif batch.new_runs and self.live:
            self.feed.watch([f.run.root for f in batch.new_runs.values()])
        for screen in self.screen_stack:
            refresh = getattr(screen, "runs_changed", None)
            if refresh is not None:
                refresh(changed)

    def _drop_runs(self, gone: set[str]) -> None:
        """Runs dropped from the registry leave the dashboard; a screen open on one closes with it."""
        from nightshift.tui.screens.run_screen import RunScreen

        shown = [i for i, s in enumerate(self.screen_stack) if isinstance(s, RunScreen) and s.run_id in gone]
        if shown:
            for _ in range(len(self.screen_stack) - shown[0]):
                self.pop_screen()
            if not any(isinstance(s, DashboardScreen) for s in self.screen_stack):
                self.push_screen(DashboardScreen())
        for run_id in gone:
            self.book.remove(run_id)

    def poll_now(self) -> None:
        """Look at the logs right away (tests and the `g` key): the same path as a live tick."""
        self.post_message(self.Batched(self.feed.tick()))

    def open_run(self, run_id: str) -> None:
        from nightshift.tui.screens.run_screen import RunScreen

        follower = self.book.followers.get(run_id) or next(
            (f for rid, f in self.book.followers.items() if rid.startswith(run_id)), None)
        if follower is None:
            self.notify(f"run {run_id} not found; the dashboard lists your runs", severity="error")
            if not self.screen_stack[1:]:
                self.push_screen(DashboardScreen())
            return
        self.push_screen(RunScreen(follower.run.run_id))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from self.run_commands(screen)

    def on_unmount(self) -> None:
        self.feed.stop()


def make_app(clock: Callable[[], float] = time.time, seams: Seams | None = None, live: bool = True,
             runs: list[RunPaths] | None = None, open_run: str | None = None) -> NightshiftApp:
    """The one way to build the app (CLI, snapshot tests, benchmark)."""
    return NightshiftApp(clock=clock, seams=seams, live=live, runs=runs, open_run=open_run)


def main(argv: list[str] | None = None, seams: Seams | None = None) -> int:
    parser = argparse.ArgumentParser(prog="nightshift tui", description="Every run of yours at a glance.")
    parser.add_argument("run", nargs="?", help="open this run (id, id prefix, or run directory) directly")
    args = parser.parse_args(argv if argv is not None else [])
    runs, open_run = None, None
    if args.run:
        as_dir = Path(args.run).expanduser()
        if (as_dir / "events.jsonl").exists():
            run = RunPaths(as_dir.resolve())
            runs, open_run = [run], run.run_id
        else:
            open_run = args.run
    if not sys.stdout.isatty():
        print("nightshift tui: needs a terminal; use `nightshift ls` or `nightshift status` in scripts",
              file=sys.stderr)
        return 2
    result = make_app(seams=seams, runs=runs, open_run=open_run).run()
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
