"""Long work says what it is doing (issue 40): `nightshift check` in a terminal prints each line as its check
finishes, and a status line on stderr names the step under way with its elapsed time; in a pipe the same lines
come with nothing of the status line. The real CLI under a real pseudo-terminal (pty), a workspace from
`nightshift init` whose test command is slow.
"""
from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.fixtures_core import nightshift, require_tool

SLOW = 3  # seconds of each test-command run (check runs a quick suite twice)


def slow_workspace(tmp_path: Path) -> Path:
    require_tool("git")
    ws = tmp_path / "ws"
    ws.mkdir()
    made = nightshift("init", str(ws), "--agent", "demo", "--yes", "--goal", "g", "--test-command", f"sleep {SLOW}")
    assert made.returncode == 0, made.stderr
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=ws, check=True)
    return ws


def under_pty(argv: list[str], timeout: float = 120) -> list[tuple[float, bytes]]:
    """Run ``argv`` with a pseudo-terminal as its stdin, stdout and stderr; every chunk read, with when."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its controlling tty
        os.execv(argv[0], argv)
    start, chunks = time.monotonic(), []
    try:
        while time.monotonic() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal (it ended)
                break
            if not data:
                break
            chunks.append((time.monotonic() - start, data))
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return chunks


def first_seen(chunks: list[tuple[float, bytes]], needle: bytes) -> float:
    seen = b""
    for at, data in chunks:
        seen += data
        if needle in seen:
            return at
    raise AssertionError(f"{needle!r} never appeared in: {seen[-2000:]!r}")


def test_check_in_a_terminal_prints_each_line_as_it_finishes_and_says_the_slow_step(tmp_path):
    ws = slow_workspace(tmp_path)
    chunks = under_pty([sys.executable, "-m", "nightshift.supervisor.cli.main", "check", str(ws)])
    config, status = first_seen(chunks, b"ok    config"), first_seen(chunks, b"check: running the tests")
    tests, end = first_seen(chunks, b"  tests        "), chunks[-1][0]
    # the config line was on the screen while the slow test command still ran (twice: 2 x SLOW seconds)
    assert config < status < tests and tests - config >= SLOW, (config, status, tests)
    # the status line counts the seconds of the step under way
    seen = b"".join(data for _, data in chunks).decode(errors="replace")
    counted = {int(n) for n in re.findall(r"check: running the tests.*?\((\d+) s\)", seen)}
    assert max(counted) >= SLOW, counted
    assert end - tests < 30 and ("ready" in seen or "problem(s)" in seen)


def test_check_in_a_pipe_prints_the_lines_and_nothing_of_the_status_line(tmp_path):
    ws = slow_workspace(tmp_path)
    out = nightshift("check", str(ws), timeout=120)
    assert "ok    config" in out.stdout and "  tests        " in out.stdout, out.stdout + out.stderr
    assert "check:" not in out.stdout + out.stderr and "\x1b" not in out.stdout + out.stderr, out.stderr
    assert "(0 s)" not in out.stderr


def test_init_on_references_says_what_it_reads_on_a_terminal_only(tmp_path):
    folders = []
    for name in ("tty", "pipe"):
        ws = tmp_path / name
        (ws / "reference").mkdir(parents=True)
        (ws / "reference" / "spectrum.dat").write_text("# k P\n" + "".join(f"{k} {k * k}\n" for k in range(1, 200)))
        folders.append(ws)
    argv = ["init", "--agent", "demo", "--yes", "--goal", "g", "--reference-dir", "reference"]
    seen = b"".join(data for _, data in under_pty([sys.executable, "-m", "nightshift.supervisor.cli.main", *argv[:1],
                                                   str(folders[0]), *argv[1:]]))
    assert b"init: reading the references in reference/" in seen and b"nightshift: wrote" in seen, seen[-2000:]
    piped = nightshift(argv[0], str(folders[1]), *argv[1:])
    assert piped.returncode == 0 and "nightshift: wrote" in piped.stdout, piped.stderr
    assert "init:" not in piped.stdout + piped.stderr and "\x1b" not in piped.stdout + piped.stderr
