"""Small edges of the same family: bytes that are not UTF-8, environments that lie, a read-only or oddly named
workspace, a closed pipe, settings that would only fail in a detached supervisor, a long nudge, a wrong hook
token, and a demo without pytest. Each gets one line (or just works), never a traceback or a hang."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.config.oracle import CompareConfig
from nightshift.supervisor.run.paths import registry_path
from nightshift.supervisor.verify.oracle.compare import compare_tables
from nightshift.supervisor.verify.oracle.report import pushback_lines
from nightshift.supervisor.verify.oracle.table import Table
from tests.fixtures_core import AGENT, Workspace, mount_tmpfs, nightshift, supervise, unmount, wait_for
from tests.fixtures_core import workspace  # noqa: F401
from tests.test_bad_input import one_line_error

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def test_a_registry_line_that_is_not_utf8_hides_nothing(workspace):
    ws = workspace.configure({"default": FIX})
    run = ws.create_run()
    assert supervise(run).returncode == 0
    with open(registry_path(), "ab") as fh:
        fh.write(b'{"run_id": "caf\xe9", "run_dir": "/x"}\n\xff\xfe\n')
    for verb in (["ls"], ["status", run.run_id], ["log", run.run_id]):
        proc = nightshift(*verb)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert run.run_id in proc.stdout or verb[0] == "log"
    one_line_error(nightshift("stop", run.run_id), "already finished")


def test_a_config_that_is_not_utf8_names_the_line(workspace):
    toml = workspace.path / "nightshift.toml"
    toml.write_bytes(toml.read_bytes().replace(b'goal = "', b'goal = "caf\xe9 ', 1))
    one_line_error(nightshift("run", str(workspace.path)), "nightshift.toml line", "not UTF-8", "0xe9")


def test_claim_with_a_bad_shift_or_a_missing_run_dir_records_nothing(tmp_path):
    env = {"NIGHTSHIFT_RUN_DIR": str(tmp_path / "gone"), "NIGHTSHIFT_TOKEN": "t", "NIGHTSHIFT_SHIFT": "abc"}
    one_line_error(nightshift("claim", "done", "--summary", "x", env=env), "NIGHTSHIFT_SHIFT='abc'")
    one_line_error(nightshift("claim", "done", "--summary", "x", env={**env, "NIGHTSHIFT_SHIFT": "1"}),
                   "not a nightshift run directory", "nothing was recorded")
    assert not (tmp_path / "gone").exists()


def test_nan_in_a_candidate_is_reported_as_nan_with_where():
    x = np.arange(1.0, 11.0)
    ref = Table("r", ["l", "TT"], [x.copy(), x * 2])
    values = x * 2
    values[6] = np.nan
    cand = Table("c", ["l", "TT"], [x.copy(), values])
    cfg = CompareConfig.model_validate({"name": "cl", "candidate": "c", "reference": "r", "x": "l", "rtol": 1e-3})
    out = compare_tables(cfg, cand, ref)
    line = pushback_lines([{"name": "cl", "x": "l", **out}])[0]
    assert "NaN at l=7 where the reference is 14 (1 non-finite value in the candidate" in line and "inf" not in line


@pytest.fixture
def read_only_workspace(tmp_path):
    disk = tmp_path / "ro"
    mount_tmpfs(disk, "4m")
    path = disk / "ws"
    path.mkdir()
    init_workspace(path, InitOptions(goal="g", agent="command"))
    (path / "agent.py").write_text(AGENT)
    Workspace(path).configure({"default": FIX})
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    yield path
    unmount(disk)


def test_a_read_only_workspace_is_one_line(read_only_workspace):
    one_line_error(nightshift("run", str(read_only_workspace)), "cannot write in", "make it writable")


def test_a_workspace_path_containing_a_literal_dollar_home_works(tmp_path):
    path = tmp_path / "$HOME" / "ws"
    path.mkdir(parents=True)
    init_workspace(path, InitOptions(goal="make check.txt say ok", agent="command"))
    (path / "agent.py").write_text(AGENT)
    ws = Workspace(path).configure({"default": FIX}, backend="local")
    proc = nightshift("run", "--foreground", str(path), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = subprocess.run(["git", "log", "--oneline"], cwd=path, capture_output=True, text=True).stdout
    assert "nightshift: shift 1 turn 1: PASS" in log
    assert ws.path.exists()


def test_status_into_a_closed_pipe_ends_quietly(workspace):
    ws = workspace.configure({"default": FIX})
    run = ws.create_run()
    assert supervise(run).returncode == 0
    for verb in (["status", run.run_id], ["log", run.run_id], ["ls"]):
        proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", *verb], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        proc.stdout.close()  # the reader is gone before a line is written, as `| head -1` after its line
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_an_empty_agent_command_is_refused_before_detaching(workspace):
    ws = workspace.configure({"default": FIX})
    toml = ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace(f'command = "{sys.executable} agent.py"', 'command = ""'))
    one_line_error(nightshift("run", str(ws.path)), "agent.command is empty")
    assert not list((ws.path / ".nightshift" / "runs").glob("*/events.jsonl"))


def test_a_long_nudge_is_delivered_whole_through_a_file(workspace):
    ws = workspace.configure({"s1t1": [["sleep", "6"], ["write", "check.txt", "no"]], "s1t2": FIX})
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "agent.started" in ws.types(run), 60, what="the agent")
        message = "".join(f"line {i}: measure the error at l = {i}\n" for i in range(400))  # > 4,000 chars
        assert len(message) > 4000
        assert nightshift("nudge", run.run_id, message).returncode == 0
        assert proc.wait(timeout=90) == 0
    finally:
        proc.kill()
    accepted = next(e for e in ws.events(run) if e["type"] == "command.accepted" and e["data"]["verb"] == "nudge")
    inline = accepted["data"]["args"]["message"]
    saved = Path(inline.split(" is in ")[1].split(": read it")[0])
    assert saved.read_text() == message and f"({len(message)} characters)" in inline
    assert str(saved) in run.turn_file(1, 2, "prompt.md").read_text()  # the push-back points the agent to it


def test_a_wrong_hook_token_in_a_command_run_is_let_go_at_once(workspace):
    ws = workspace.configure({"s1t1": [["sleep", "20"], *FIX]})
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "agent.started" in ws.types(run), 60, what="the agent")
        # A Claude session in the same workspace with a stale token: its Stop hook must not wait for 600 s.
        hook = nightshift("hook", "stop", input=json.dumps({"session_id": "x"}), timeout=60,
                          env={"NIGHTSHIFT_RUN_DIR": str(run.root), "NIGHTSHIFT_TOKEN": "wrong",
                               "NIGHTSHIFT_HOOK_TIMEOUT": "600"})
        assert hook.returncode == 0 and hook.stdout.strip() == ""
        assert proc.wait(timeout=90) == 0
    finally:
        proc.kill()


def test_demo_headless_without_pytest_says_so_and_exits(tmp_path):
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pytest.py").write_text("raise ImportError('No module named pytest')\n")
    env = {"PYTHONPATH": f"{shadow}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    one_line_error(nightshift("demo", "--headless", "--dir", str(tmp_path / "demo"), env=env, timeout=60),
                   "nightshift demo needs pytest", "pip install")
