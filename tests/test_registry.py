"""The user's registry of runs: `nightshift ls` skips and reports the lines that are not a run (one line on stderr,
the good runs still listed), `nightshift forget RUN` and `nightshift ls --prune` drop runs whose folder is gone
(prune asks first in a terminal, `--yes` for scripts) and lose nothing else, not even a line a starting run
appends while the registry is being rewritten."""
from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from nightshift.supervisor.run import registry
from nightshift.supervisor.run.paths import registry_path
from tests.fixtures_core import nightshift, wait_for
from tests.fixtures_tui import tui_home  # noqa: F401
from tests.test_bad_input import one_line_error

BAD = [b"\xff\xfe not utf-8", b'{"run_id": "half', b'["a", "list"]', b'{"run_id": "no-folder"}']


def add_bad_lines() -> None:
    with open(registry_path(), "ab") as fh:
        fh.write(b"\n".join(BAD) + b"\n")


def registry_lines() -> list[bytes]:
    return [line for line in registry_path().read_bytes().splitlines() if line.strip()]


def test_ls_skips_and_reports_bad_lines_and_lists_the_good_runs(tui_home):
    home, runs = tui_home
    # an older line without "workspace" (the KeyError): the workspace follows from the run's folder
    with open(registry_path(), "ab") as fh:
        fh.write(f'{{"run_id": "20261122-010101-beef", "run_dir": "{home}/work/old/.nightshift/runs/x"}}\n'.encode())
    add_bad_lines()
    out = nightshift("ls")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    warning = out.stderr.strip().splitlines()
    assert len(warning) == 1 and "skipped 4 unreadable lines" in warning[0], out.stderr
    assert str(registry_path()) in warning[0] and "lines 8, 9, 10, 11" in warning[0] and "--prune" in warning[0]
    for run in runs.values():
        assert run.run_id in out.stdout
    assert f"{home}/work/old (run dir gone)" in out.stdout
    assert "nightshift forget RUN" in out.stdout  # how a missing row goes away


def test_forget_drops_one_dead_run_and_nothing_else(tui_home):
    home, runs = tui_home
    add_bad_lines()
    before = registry_lines()
    gone = runs["gone"].run_id
    out = nightshift("forget", gone[:12])  # a unique prefix is enough
    assert out.returncode == 0 and f"forgot run {gone}" in out.stdout, out.stderr
    assert registry_lines() == [line for line in before if gone.encode() not in line]
    assert gone not in nightshift("ls").stdout
    after = registry_path().read_bytes()
    one_line_error(nightshift("forget", runs["done"].run_id), "is still at", "forget drops only runs whose folder is gone")
    one_line_error(nightshift("forget", "19990101"), "run 19990101 is not in the registry", "nightshift ls")
    one_line_error(nightshift("forget", "2026"), "ambiguous")
    assert registry_path().read_bytes() == after  # a refused forget writes nothing
    assert oct(registry_path().stat().st_mode & 0o777) == "0o600"


def in_a_terminal(args: list[str], answer: bytes) -> tuple[int, str]:
    """`nightshift ...` with a real pseudo-terminal as its stdin and stdout, answering its question."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", *args], stdin=follower, stdout=follower,
                            stderr=follower, close_fds=True)
    os.close(follower)
    seen = b""
    try:
        while b"[y/N]" not in seen:
            chunk = os.read(leader, 4096)
            if not chunk:
                break
            seen += chunk
        os.write(leader, answer)
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
    finally:
        code = proc.wait(timeout=60)
        os.close(leader)
    return code, seen.decode(errors="replace")


def test_prune_asks_in_a_terminal_and_needs_yes_in_a_script(tui_home):
    home, runs = tui_home
    add_bad_lines()
    before = registry_lines()
    gone = runs["gone"].run_id
    code, screen = in_a_terminal(["ls", "--prune"], b"n\n")
    assert code == 0 and gone in screen and "4 unreadable lines" in screen and "nothing dropped" in screen, screen
    assert registry_lines() == before
    one_line_error(nightshift("ls", "--prune"), "asks first", "--yes")  # no terminal, no --yes: nothing dropped
    assert registry_lines() == before
    code, screen = in_a_terminal(["ls", "--prune"], b"y\n")
    assert code == 0 and "dropped 5 lines" in screen, screen
    good = [line for line in before if gone.encode() not in line and line not in BAD]
    assert registry_lines() == good  # the live and finished runs, byte for byte, in their order
    out = nightshift("ls", "--prune", "--yes")
    assert out.returncode == 0 and "nothing to prune" in out.stdout and not out.stderr
    for name in ("done", "paused", "cosmo"):
        assert runs[name].run_id in out.stdout


def blocked_on(lock: Path) -> bool:
    """Whether a process waits for ``lock`` (a "->" line of /proc/locks names the file's inode)."""
    inode = f":{lock.stat().st_ino} "
    return any("->" in line and inode in line for line in Path("/proc/locks").read_text().splitlines())


def test_a_run_registering_during_a_rewrite_is_not_lost(tui_home, tmp_path):
    home, runs = tui_home
    gone = runs["gone"].run_id
    starting = tmp_path / "new-ws" / ".nightshift" / "runs" / "20261122-100000-a11e"
    register = ("import sys; from pathlib import Path; from nightshift.supervisor.run.paths import RunPaths; "
                "from nightshift.supervisor.run.registry import register; register(RunPaths(Path(sys.argv[1])), host='h')")
    with registry._locked(exclusive=True):  # a prune, between reading the registry and renaming the new one
        proc = subprocess.Popen([sys.executable, "-c", register, str(starting)])
        wait_for(lambda: blocked_on(registry_path().with_name(registry.LOCK_NAME)), timeout=60,
                 what="the starting run to wait for the registry's lock")
        assert registry._rewrite({gone}, set()) == 1
    assert proc.wait(timeout=60) == 0
    ids = [e["run_id"] for e in registry.entries()]
    assert starting.name in ids and gone not in ids


async def test_the_dashboard_reports_bad_lines_and_loses_a_pruned_run(tui_home):
    from tests.test_tui_actions import notices, open_dashboard, until
    from nightshift.tui.app import make_app
    from nightshift.tui.screens.dashboard import DashboardScreen
    from nightshift.tui.screens.run_screen import RunScreen

    home, runs = tui_home
    add_bad_lines()
    gone = runs["gone"].run_id
    app = make_app(live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_dashboard(app, pilot)
        table = app.screen.query_one("#runs")
        assert table.row_count == 6 and str(table.get_row(gone)[1]) == "missing"
        assert any("skipped 4 unreadable lines" in m and "--prune" in m for m in notices(app))
        app.open_run(gone)  # a screen open on the run when it is pruned closes with it
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and getattr(app.screen, "_ready", False))
        out = nightshift("ls", "--prune", "--yes")
        assert out.returncode == 0 and "dropped 5 lines" in out.stdout, out.stderr
        await until(pilot, lambda: gone not in app.book.followers, timeout=30)
        await until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await until(pilot, lambda: app.screen.query_one("#runs").row_count == 5)
        assert gone not in {key.value for key in app.screen.query_one("#runs").rows}
        assert runs["done"].run_id in {key.value for key in app.screen.query_one("#runs").rows}
