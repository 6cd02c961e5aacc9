"""A run heals without a person: `nightshift watchdog install` puts a line in the user's crontab that runs
`nightshift resume --dead`; Debian's real cron daemon runs it, and a run whose supervisor was killed -9 is resumed
(its live agent adopted, not launched twice). A supervisor that keeps dying is held for a person instead of looping;
runs a person paused are left alone. Real cron, tmux, git, supervisors in subprocesses, the scripted command agent."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from nightshift.supervisor.cli.watch import outcome as outcome
from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.liveness import supervisor_status
from nightshift.supervisor.run.state import load_state
from tests.fixtures_core import kill_supervisor, nightshift, supervise, wait_for, workspace  # noqa: F401
from tests.fixtures_cron import cron_daemon, our_lines  # noqa: F401
from tests.test_bad_input import one_line_error

CRASH_AT_START = {"NIGHTSHIFT_TEST_CRASH_AFTER": "supervisor.started"}  # the supervisor kill -9s itself there


def dead(run) -> bool:
    return not supervisor_status(run.supervisor)["alive"]


def test_cron_resumes_a_run_whose_supervisor_was_killed(workspace, cron_daemon):
    ws = workspace.configure({"s1t1": [["sleep", "25"], ["write", "check.txt", "ok"], ["claim", "done", "fixed"]]})
    started = nightshift("run", str(ws.path), timeout=120)
    assert started.returncode == 0, started.stdout + started.stderr
    run_dir = next((ws.path / ".nightshift" / "runs").glob("*"))
    from nightshift.supervisor.run.paths import RunPaths
    run = RunPaths(run_dir)
    wait_for(lambda: "agent.started" in ws.types(run), timeout=60, what="the agent")
    kill_supervisor(run_dir)
    wait_for(lambda: dead(run), timeout=30, what="the supervisor to be gone")
    installed = nightshift("watchdog", "install", "--every", "1")
    assert installed.returncode == 0, installed.stderr
    assert len(our_lines()) == 1 and "resume --dead" in our_lines()[0]
    assert nightshift("watchdog", "install", "--every", "1").returncode == 0 and len(our_lines()) == 1  # replaced
    assert "installed" in nightshift("watchdog", "status").stdout
    doctor = nightshift("doctor", str(ws.path)).stdout
    assert any("watchdog" in line and "installed" in line for line in doctor.splitlines())
    # cron checks its table every minute: the revival comes within about two.
    wait_for(lambda: load_state(run.root)[0]["outcome"] == "done", timeout=240, interval=2, what="cron to revive it")
    types = ws.types(run)
    assert types.count("supervisor.revived") == 1 and types.count("agent.adopted") == 1
    assert types.count("agent.started") == 1  # the live agent was adopted, never launched a second time
    removed = nightshift("watchdog", "remove")
    assert removed.returncode == 0 and our_lines() == []
    assert nightshift("watchdog", "status").returncode == 1


def test_a_supervisor_that_dies_three_times_within_an_hour_is_held(workspace, tmp_path):
    """`resume --dead` as cron runs it, against a supervisor that dies at once each time (the backend is local so
    that each new supervisor inherits the test's crash hook). The hold is told to the person ([notify])."""
    told = tmp_path / "told.txt"
    notify = f'[notify]\ncommand = "echo \\"$NIGHTSHIFT_EVENT $NIGHTSHIFT_RUN $NIGHTSHIFT_MESSAGE\\" >> {told}"\n'
    ws = workspace.configure({"default": [["sleep", "30"]]}, backend="local", extra=notify)
    run = ws.create_run()
    supervise(run, env=CRASH_AT_START)  # the first death
    for revival in (1, 2):
        wait_for(lambda: dead(run), timeout=30, what="the supervisor to die")
        out = nightshift("resume", "--dead", env=CRASH_AT_START, timeout=120)
        assert run.run_id in out.stdout, out.stdout + out.stderr
        assert ws.types(run).count("supervisor.revived") == revival
    wait_for(lambda: dead(run), timeout=30, what="the supervisor to die")
    held = nightshift("resume", "--dead", env=CRASH_AT_START, timeout=120)
    assert "held" in held.stdout and "died 3 times" in held.stdout, held.stdout + held.stderr
    state = load_state(run.root)[0]
    assert state["paused"] and state["pause_kind"] == "crashloop" and str(run.supervisor_log) in state["pause_reason"]
    waited = nightshift("wait", run.run_id)
    assert waited.returncode == outcome.NEEDS_PERSON and "died 3 times" in waited.stdout
    message = told.read_text().strip().splitlines()
    assert len(message) == 1 and message[0].startswith(f"paused {run.run_id} the supervisor died 3 times")
    assert f"`nightshift resume {run.run_id}`" in message[0]  # what the person does, in the notification
    before = run.events.read_bytes()
    assert nightshift("resume", "--dead", timeout=60).returncode == 0
    assert run.events.read_bytes() == before  # held: not revived again, nothing written


def test_a_hold_whose_notification_fails_is_recorded_and_said(workspace):
    """The hold's notification is the person's only word of it: a [notify] command that fails is a notify.failed
    event (as the supervisor records its own) and a line of `resume --dead`, never dropped."""
    from nightshift.supervisor.cli.watch.revive import revive

    ws = workspace.configure({"default": [["sleep", "30"]]}, backend="local",
                             extra='[notify]\ncommand = "echo mail server down >&2; exit 7"\n')
    run = ws.create_run()
    log = EventLog(run.events, last_seq=load_state(run.root)[0]["seq"])
    for _ in range(2):  # two revivals within the hour already: this death is the third
        log.append("supervisor.revived", None, by="watchdog", reason="test", deaths=1)
    log.close()
    said = revive(run, load_state(run.root)[0])
    assert "held" in said and "the notification failed: notify command exited 7: mail server down" in said
    failed = [e["data"] for e in ws.events(run) if e["type"] == "notify.failed"]
    assert failed == [{"error": "notify command exited 7: mail server down"}]
    assert load_state(run.root)[0]["pause_kind"] == "crashloop"
    assert "the notification failed: notify command exited 7" in nightshift("log", run.run_id, cwd=ws.path).stdout


def test_runs_a_person_paused_or_stopped_are_not_revived(workspace):
    ws = workspace.configure({"default": [["sleep", "30"]]}, backend="local")
    run = ws.create_run()
    supervise(run, env=CRASH_AT_START)
    wait_for(lambda: dead(run), timeout=30, what="the supervisor to die")
    state = load_state(run.root)[0]
    log = EventLog(run.events, last_seq=state["seq"])
    log.append("run.paused", None, reason="paused by the user", kind="user")
    log.close()
    before = run.events.read_bytes()
    out = nightshift("resume", "--dead", timeout=60)
    assert out.returncode == 0 and run.run_id not in out.stdout
    assert run.events.read_bytes() == before and dead(run)


def test_without_cron_the_watchdog_says_how_to_run_resume_dead_yourself(workspace, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {"PATH": str(bare)}
    line = one_line_error(nightshift("watchdog", "install", env=env), "no cron", "resume --dead", "own scheduler")
    assert "Traceback" not in line
    status = nightshift("watchdog", "status", env=env)
    assert status.returncode == 1 and "resume --dead" in status.stdout
    assert "no crontab" in nightshift("doctor", str(workspace.path), env=env).stdout
    one_line_error(nightshift("resume"), "--dead")  # neither a run nor --dead


def test_a_crontab_that_cannot_be_written_is_one_line_and_changes_nothing(cron_daemon, tmp_path):
    """The crontab spool read-only (as on a node where the admin keeps it so): `crontab -` fails for real."""
    if not shutil.which("unshare") or os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("this test needs root and unshare (util-linux) in CI")
        pytest.skip("needs root and unshare to make the crontab spool read-only in a private mount namespace")
    spool = "/var/spool/cron/crontabs"
    script = (f"mount --bind {spool} {spool} && mount -o remount,bind,ro {spool} && "
              f"exec {sys.executable} -m nightshift.supervisor.cli.main watchdog install")
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], capture_output=True,
                          text=True, timeout=60)
    one_line_error(proc, "cannot write your crontab", "nothing was changed", "resume --dead")
    assert our_lines() == []


def test_watchdog_every_out_of_range_is_one_line():
    one_line_error(nightshift("watchdog", "install", "--every", "0"), "--every 0", "1 to 59")
