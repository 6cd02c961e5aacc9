"""Benchmark of the TUI: time to first paint of a run with 1,000,000 events against one with 10 (goal: under
1 s, ratio under 1.5), and the CPU an idle open TUI takes while it watches 20 runs (inotify and polling).

First paint is measured twice: in process (app start to the run's title drawn, headless) and as a user sees it
(`python -m nightshift.tui.app RUN_DIR` started in a real terminal, a tmux pane on a private socket, until the title
shows in the pane). Prints figures; asserts nothing.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nightshift.supervisor.run.registry import register  # noqa: E402
from tests.fixtures_tui import FIXED_NOW, write_big_run  # noqa: E402

REPEATS = 7
SOCKETS = itertools.count()


async def _first_paint_once(run) -> float:
    from nightshift.tui.app import make_app

    start = time.perf_counter()
    app = make_app(live=False, runs=[run], open_run=run.run_id)
    async with app.run_test(size=(80, 24)) as pilot:
        while True:
            screen = app.screen
            title = screen.query("#run-title")
            if title and "shift" in str(title.first().render()):
                return time.perf_counter() - start
            await pilot.pause(0.001)


def tmux(sock: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout


def first_paint_in_terminal(run, env: dict[str, str], script: str | None = None) -> float | None:
    """Seconds from launching the TUI in a tmux pane (a fresh private server) to the run's title in that pane."""
    if not shutil.which("tmux"):
        return None
    sock = f"nsbench-{os.getpid()}-{next(SOCKETS)}"
    cmd = f"cd {ROOT} && exec {sys.executable} " + (script or f"-m nightshift.tui.app {run.root}")
    start = time.perf_counter()
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", cmd],
                   env=env, check=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "shift 7" in tmux(sock, "capture-pane", "-p"):
                return time.perf_counter() - start
            time.sleep(0.005)
        return None
    finally:
        tmux(sock, "kill-server")


def alternate(measure, big, small) -> tuple[float | None, float | None]:
    """Medians over REPEATS rounds, big and small taking turns to go first (load and cache effects even out)."""
    got: dict[str, list[float]] = {"big": [], "small": []}
    for i in range(REPEATS):
        order = (("big", big), ("small", small)) if i % 2 == 0 else (("small", small), ("big", big))
        for name, run in order:
            value = measure(run)
            if value is not None:
                got[name].append(value)
    return (statistics.median(got["big"]) if got["big"] else None,
            statistics.median(got["small"]) if got["small"] else None)


FLOOR_APP = """
from textual.app import App
from textual.widgets import Footer, Static
class Floor(App):
    def compose(self):
        yield Static("shift 7")
        yield Footer()
Floor().run()
"""


def idle_cpu(env: dict[str, str], tag: str, seconds: float = 20.0, script: str | None = None) -> float | None:
    """CPU percent of the TUI process, open on the dashboard of 20 runs, over ``seconds`` of idling."""
    import psutil

    if not shutil.which("tmux"):
        return None
    sock = f"nsbench-{os.getpid()}-{next(SOCKETS)}"
    cmd = f"cd {ROOT} && exec {sys.executable} " + (script or "-m nightshift.tui.app")
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", cmd],
                   env=env, check=True)
    try:
        pid = int(tmux(sock, "display-message", "-p", "#{pane_pid}").strip())
        proc = psutil.Process(pid)
        time.sleep(3.0)  # past the first paint
        before = proc.cpu_times()
        t0 = time.monotonic()
        time.sleep(seconds)
        after = proc.cpu_times()
        wall = time.monotonic() - t0
        return 100.0 * ((after.user - before.user) + (after.system - before.system)) / wall
    finally:
        tmux(sock, "kill-server")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="nightshift-bench-tui-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "HOME": str(root), "XDG_STATE_HOME": str(root / "state"), "TERM": "xterm-256color"}
        os.environ.update(HOME=env["HOME"], XDG_STATE_HOME=env["XDG_STATE_HOME"])
        t = time.perf_counter()
        big = write_big_run(root, 1_000_000, name="big", run_id="20261101-000000-b1b1")
        print(f"wrote the 1,000,000-event run ({big.events.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
        small = write_big_run(root, 10, name="small", run_id="20261101-000000-5a11")

        subprocess.run(["sync"], check=False)  # the 160 MB just written is flushed before anything is timed
        time.sleep(1.0)
        big_in, small_in = alternate(lambda run: asyncio.run(_first_paint_once(run)), big, small)
        print(f"first paint in process (median of {REPEATS}): 1,000,000 events {big_in * 1000:.0f} ms, "
              f"10 events {small_in * 1000:.0f} ms, ratio {big_in / small_in:.2f}")
        floor_script = str(root / "floor_app.py")
        Path(floor_script).write_text(FLOOR_APP)
        big_t, small_t = alternate(lambda run: first_paint_in_terminal(run, env), big, small)
        floor_runs = [first_paint_in_terminal(None, env, script=floor_script) for _ in range(REPEATS)]
        floor_t = statistics.median([t for t in floor_runs if t is not None] or [0.0])
        if big_t and small_t and floor_t:
            print(f"first paint in a terminal, process start included (median of {REPEATS}): 1,000,000 events "
                  f"{big_t * 1000:.0f} ms, 10 events {small_t * 1000:.0f} ms, ratio {big_t / small_t:.2f} "
                  f"(goal < 1000 ms, ratio < 1.5); anchor: a one-line Textual app paints in {floor_t * 1000:.0f} ms")
        else:
            print("first paint in a terminal: skipped (no tmux)")

        for i in range(20):
            run = write_big_run(root / "many", 200, name=f"ws{i:02d}", run_id=f"20261102-0000{i:02d}-abcd")
            register(run, host="login2", created=FIXED_NOW)
        floor_cpu = idle_cpu(env, "floor", script=floor_script)
        print(f"idle CPU anchor, a one-line Textual app: {floor_cpu:.2f} %" if floor_cpu is not None else "")
        for tag, (mode, extra) in enumerate((("inotify", {}), ("polling (as on NFS/Lustre)", {"NIGHTSHIFT_POLL": "1"}))):
            cpu = idle_cpu({**env, **extra}, str(tag))
            print(f"idle CPU of an open TUI watching 20 runs, {mode}: "
                  + (f"{cpu:.2f} %" if cpu is not None else "skipped (no tmux)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
