"""Every crash of the supervisor leaves a trace (a `supervisor.crashed` event when the disk allows, the reserved
last word always, a [notify] notification) that `status` shows; a check that cannot read its input fails that
check instead of the supervisor; agent-written text is never trusted to be UTF-8; a git lock or a full disk is
a pause or a crash with the fix, and `nightshift resume` continues once the cause is gone."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from tests.fixtures_core import AGENT, Workspace, kill_supervisor, mount_tmpfs, nightshift, require_tool, supervise
from tests.fixtures_core import unmount, wait_for
from tests.fixtures_core import workspace  # noqa: F401

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def notify_to(path: Path) -> str:
    return f"[notify]\ncommand = 'echo \"$NIGHTSHIFT_EVENT: $NIGHTSHIFT_MESSAGE\" >> {path}'\n"


def assert_clean_log(ws, run) -> list[dict]:
    events = ws.events(run)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events].count("run.finished") == 1
    assert events[-1]["data"]["outcome"] == "done", [e["type"] for e in events]
    return events


def test_bytes_that_are_not_utf8_in_claude_md_never_stop_the_supervisor(workspace):
    with open(workspace.path / "CLAUDE.md", "ab") as fh:
        fh.write(b"\n- [ ] caf\xe9 written by a latin-1 editor\n")  # the user's own, before the run
    ws = workspace.configure({"s1t1": [["shell", "printf '\\n- [ ] \\xff\\xfe by the agent\\n' >> CLAUDE.md"], *FIX]})
    run = ws.create_run()
    done = supervise(run)
    assert done.returncode == 0, done.stdout + done.stderr
    events = assert_clean_log(ws, run)
    assert "supervisor.crashed" not in [e["type"] for e in events]


def test_a_check_that_cannot_read_its_input_fails_that_check_with_the_reason(workspace):
    ws = workspace.configure({
        "s1t1": [["shell", "mv CLAUDE.md CLAUDE.bak && mkdir CLAUDE.md"], *FIX],
        "s1t2": [["shell", "rmdir CLAUDE.md && mv CLAUDE.bak CLAUDE.md"], *FIX]})
    run = ws.create_run()
    done = supervise(run)
    assert done.returncode == 0, done.stdout + done.stderr
    events = assert_clean_log(ws, run)
    first = next(e for e in events if e["type"] == "verify.finished")
    plan = next(c for c in first["data"]["checks"] if c["name"] == "plan")
    assert not plan["passed"] and "CLAUDE.md is a folder, not a regular file: not read" in plan["lines"]


def test_a_stale_git_lock_pauses_the_run_with_the_fix_and_resume_commits(workspace, tmp_path):
    notes = tmp_path / "notes.txt"
    ws = workspace.configure({"s1t1": [["shell", "touch .git/index.lock"], *FIX]}, extra=notify_to(notes))
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), 60, what="the run to pause on the git lock")
        status = nightshift("status", run.run_id).stdout
        assert "index.lock" in status and "paused" in status
        wait_for(lambda: notes.exists() and "index.lock" in notes.read_text(), 30, what="the notification")
        (ws.path / ".git" / "index.lock").unlink()
        assert nightshift("resume", run.run_id).returncode == 0
        assert proc.wait(timeout=90) == 0
    finally:
        proc.kill()
    events = assert_clean_log(ws, run)
    assert [e["shift"] for e in events if e["type"] == "commit.created"] == [1]
    assert "supervisor.crashed" not in [e["type"] for e in events]


def test_an_unexpected_crash_is_recorded_notified_and_shown_then_resume_continues(workspace, tmp_path):
    notes = tmp_path / "notes.txt"
    # The agent makes the supervisor's own verdict file unwritable (a directory in its place).
    ws = workspace.configure({"s1t1": [["shell", 'mkdir -p "$NIGHTSHIFT_RUN_DIR/shifts/1/t1.verdict.json"'], *FIX]},
                             extra=notify_to(notes))
    run = ws.create_run()
    crashed = supervise(run)
    assert crashed.returncode != 0
    events = ws.events(run)
    assert events[-1]["type"] == "supervisor.crashed"
    reason = events[-1]["data"]["reason"]
    assert "IsADirectoryError" in reason and f"nightshift resume {run.run_id}" in reason
    assert "crashed: supervisor crashed: IsADirectoryError" in notes.read_text()
    status = nightshift("status", run.run_id).stdout
    assert f"crashed    {reason}" in status
    assert json.loads(nightshift("status", run.run_id, "--json").stdout)["crashed"] == reason
    assert "crashed*" in nightshift("ls").stdout
    (run.shift_dir(1) / "t1.verdict.json").rmdir()
    resumed = supervise(run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert_clean_log(ws, run)
    assert "crashed" not in nightshift("status", run.run_id).stdout.split("finished")[-1]


@pytest.fixture
def small_disk(tmp_path):
    """A 6 MiB tmpfs to fill (root; in CI a mount that is refused fails the test)."""
    disk = tmp_path / "disk"
    mount_tmpfs(disk, "6m")
    yield disk
    for run_dir in (disk / "ws" / ".nightshift" / "runs").glob("*"):
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)
        kill_supervisor(run_dir)
    unmount(disk)


def test_a_full_disk_is_a_crash_with_the_fix_and_resume_continues_once_space_is_freed(small_disk, tmp_path):
    require_tool("git")
    path = small_disk / "ws"
    path.mkdir()
    init_workspace(path, InitOptions(goal="make check.txt say ok", agent="command"))
    (path / "agent.py").write_text(AGENT)
    notes = tmp_path / "notes.txt"  # outside the full disk, like a mail or chat command
    ws = Workspace(path).configure({"s1t1": [*FIX, ["shell", "cat /dev/zero > fill.bin 2>/dev/null; true"]]},
                                   extra=notify_to(notes))
    run = ws.create_run()
    crashed = supervise(run)
    assert crashed.returncode != 0 and "Traceback" not in crashed.stderr, crashed.stderr
    assert "disk full" in notes.read_text()
    status = nightshift("status", run.run_id).stdout
    assert "crashed    disk full" in status and f"nightshift resume {run.run_id}" in status
    (path / "fill.bin").unlink()
    resumed = supervise(run)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    events = assert_clean_log(ws, run)
    assert not shutil.disk_usage(path).free == 0
    assert "fill.bin" not in subprocess.run(["git", "log", "--stat"], cwd=path, capture_output=True, text=True).stdout
    assert [e["type"] for e in events].count("shift.started") == 1


def test_stop_while_a_git_lock_holds_the_commit_ends_the_run_saying_so(workspace):
    ws = workspace.configure({"s1t1": [["shell", "touch .git/index.lock"], *FIX]})
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), 60, what="the run to pause on the git lock")
        assert nightshift("stop", run.run_id).returncode == 0
        assert proc.wait(timeout=60) == 1
    finally:
        proc.kill()
    finished = ws.events(run)[-1]
    assert finished["type"] == "run.finished" and finished["data"]["outcome"] == "stopped"
    assert "not committed" in finished["data"]["reason"] and "index.lock" in finished["data"]["reason"]
