"""Control from any shell: run detached, ls, status, log, pause, resume, stop, nudge, through the inbox and
acknowledged by events."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from nightshift.supervisor.cli.watch.attach import attach_argv
from nightshift.supervisor.run.inbox import send_command, take_commands
from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401

LONG = [["sleep", "60"]]


def start_detached(ws):
    out = nightshift("run", str(ws.path))
    assert out.returncode == 0, out.stderr
    run_id = out.stdout.split()[1]
    from nightshift.supervisor.run.registry import find_run
    run = find_run(run_id)
    wait_for(lambda: "agent.started" in ws.types(run), what="the agent to start")
    return run


def test_every_command_round_trips_through_the_inbox(workspace):
    ws = workspace.configure({"s1t1": [["sleep", "3"], ["write", "check.txt", "no"]],
                              "s1t2": [["write", "check.txt", "ok"], ["claim", "done", "ok now"]]})
    run = start_detached(ws)
    rid = run.run_id
    assert "tmux" in " ".join(attach_argv(run))
    listing = nightshift("ls")
    assert rid in listing.stdout and "working" in listing.stdout
    status = json.loads(nightshift("status", rid, "--json").stdout)
    assert status["supervisor"]["alive"] and status["state"]["shift"] == 1

    assert nightshift("pause", rid).stdout.strip() == f"pause: accepted by run {rid}"
    again = nightshift("pause", rid)
    assert again.returncode == 1 and "rejected" in again.stderr and "already paused" in again.stderr
    nudge = nightshift("nudge", rid, "try printing fewer digits")
    assert nudge.returncode == 0 and "accepted" in nudge.stdout
    # Paused: the agent finishes its turn, is verified, and then nothing is pushed back.
    wait_for(lambda: "commit.created" in ws.types(run), what="the first stop to be committed")
    assert "pushback.sent" not in ws.types(run)
    assert nightshift("resume", rid).returncode == 0
    wait_for(lambda: "pushback.sent" in ws.types(run), what="the push-back after resume")
    assert "> try printing fewer digits" in run.turn_file(1, 2, "prompt.md").read_text()
    wait_for(lambda: "run.finished" in ws.types(run), what="the run to finish")
    log = nightshift("log", rid).stdout
    assert "verdict FAIL" in log and "run finished: DONE" in log
    assert nightshift("stop", rid).returncode == 2  # finished runs take no more commands


def test_stop_ends_the_agent_and_the_run(workspace):
    ws = workspace.configure({"default": LONG})
    run = start_detached(ws)
    target = json.loads(run.snapshot.read_text())["state"]["target"]
    out = nightshift("stop", run.run_id)
    assert out.returncode == 0, out.stderr
    wait_for(lambda: "run.finished" in ws.types(run), what="run.finished")
    assert ws.events(run)[-1]["data"]["outcome"] == "stopped"
    panes = subprocess.run(["tmux", "-L", target["socket"], "list-windows", "-a", "-F", "#{window_name}"],
                           capture_output=True, text=True).stdout
    assert "s1t1" not in panes


def test_commands_without_a_live_supervisor_are_queued_not_lost(workspace):
    ws = workspace.configure({"default": LONG})
    run = ws.create_run()  # never supervised
    out = nightshift("pause", run.run_id, env={"NIGHTSHIFT_ACK_TIMEOUT": "1"})
    assert out.returncode == 3 and "nightshift resume" in out.stderr and "Traceback" not in out.stderr
    assert len(list(run.inbox.glob("*.json"))) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a file owned by another user")
def test_inbox_files_of_other_users_are_ignored(workspace):
    ws = workspace.configure({"default": LONG})
    run = ws.create_run()
    send_command(run, "stop")
    foreign = next(run.inbox.glob("*.json"))
    os.chown(foreign, 65534, 65534)
    assert take_commands(run) == []
    assert oct(run.root.stat().st_mode & 0o777) == "0o700" and oct(run.inbox.stat().st_mode & 0o777) == "0o700"


def test_a_killed_agent_pane_ends_the_shift_as_lost_and_a_fresh_one_starts(workspace):
    ws = workspace.configure({"s1t1": LONG, "s2t1": [["write", "check.txt", "ok"], ["claim", "done", "ok"]]})
    run = start_detached(ws)
    target = json.loads(run.snapshot.read_text())["state"]["target"]
    subprocess.run(["tmux", "-L", target["socket"], "kill-window", "-t", target["pane"]], check=True)
    wait_for(lambda: "run.finished" in ws.types(run), what="run.finished")
    events = ws.events(run)
    assert [e["data"]["reason"] for e in events if e["type"] == "agent.stopped"][0] == "lost"
    assert [e["data"]["reason"] for e in events if e["type"] == "shift.ended"] == ["lost"]
    assert events[-1]["data"]["outcome"] == "done"


def test_resume_restarts_a_run_whose_supervisor_was_killed(workspace):
    ws = workspace.configure({"s1t1": [["sleep", "4"], ["write", "check.txt", "ok"], ["claim", "done", "ok"]]})
    run = start_detached(ws)
    pid = json.loads(run.supervisor.read_text())["pid"]
    os.kill(pid, 9)
    wait_for(lambda: not json.loads(nightshift("status", run.run_id, "--json").stdout)["supervisor"]["alive"],
             what="the supervisor to be seen dead")
    out = nightshift("resume", run.run_id)
    assert out.returncode == 0 and "supervisor restarted" in out.stdout, out.stderr
    wait_for(lambda: "run.finished" in ws.types(run), what="run.finished")
    types = ws.types(run)
    assert types.count("agent.started") == 1 and "agent.adopted" in types
    assert ws.events(run)[-1]["data"]["outcome"] == "done"
