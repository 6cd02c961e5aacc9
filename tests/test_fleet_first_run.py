"""A new user's first fleet, typed as they would: `nightshift init`, write the oracle, commit, `nightshift run
--lanes 3`. The preflight's oracle runs in a clean checkout of the commit, so the workspace stays as committed and
the fleet starts with nothing its lanes would miss (a fleet refuses only for changes to tracked files). The real Claude
Code CLI runs the lanes against the fake model API (only the model is faked)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_claude import fake_claude  # noqa: F401
from tests.fixtures_core import kill_supervisor, nightshift, wait_for
from tests.fixtures_fleet import REFERENCE, lane_run_dirs, solver

ORACLE = (f'\n[oracle]\ncommand = "{sys.executable} solver.py"\n[[oracle.compare]]\nname = "result"\n'
          'candidate = "out/result.dat"\nreference = "reference/result.dat"\nrtol = 1e-6\n')


@pytest.fixture
def new_folder(tmp_path):
    ws = tmp_path / "my-solver"
    ws.mkdir()
    yield ws
    for run_dir in (ws / ".nightshift" / "runs").glob("*"):
        kill_supervisor(run_dir)  # the fleet's first: it would start a lane again
    for run_dir in lane_run_dirs(ws):
        kill_supervisor(run_dir)
        subprocess.run(["tmux", "-L", f"ns-{run_dir.name}", "kill-server"], capture_output=True)


def events(run_dir: Path) -> list[dict]:
    from nightshift.supervisor.run.events import read_events
    return read_events(run_dir / "events.jsonl").events


@pytest.mark.timeout(300)
def test_init_oracle_commit_then_run_lanes_3_starts_and_names_what_the_lanes_miss(new_folder, fake_claude):
    ws = new_folder
    config_dir = Path(os.environ["CLAUDE_CONFIG_DIR"])  # the user's Claude Code, logged in once by hand
    (config_dir / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": ["dummy"], "rejected": []},
        "projects": {str(ws.resolve()): {"hasTrustDialogAccepted": True}}}))
    init = nightshift("init", "--goal", "a solver whose result agrees with the reference to 1e-6", cwd=ws)
    assert init.returncode == 0, init.stdout + init.stderr
    (ws / "reference").mkdir()
    (ws / "reference" / "result.dat").write_text(REFERENCE)
    (ws / "solver.py").write_text(solver(1e-3))
    (ws / "nightshift.toml").write_text((ws / "nightshift.toml").read_text() + ORACLE)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "the oracle"], cwd=ws,
                   check=True)

    proc = nightshift("run", "--lanes", "3", cwd=ws, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the preflight's oracle ran where every verdict runs it, in a clean checkout of the commit (#45): the workspace
    # stays as the user committed it, so the lanes miss nothing of it
    assert not (ws / "out" / "result.dat").exists()
    start = next(line for line in proc.stdout.splitlines() if line.startswith("run "))
    assert "(3 lanes)" in start and "untracked" not in start, proc.stdout
    run_dir = next((ws / ".nightshift" / "runs").glob("*"))
    wait_for(lambda: any(e["type"] == "lane.created" for e in events(run_dir)), timeout=120,
             what="the fleet to make its lanes")
    stop = nightshift("stop", run_dir.name, cwd=ws)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    wait_for(lambda: any(e["type"] == "run.finished" for e in events(run_dir)), timeout=120,
             what="the fleet to end when stopped")
    assert "uncommitted" not in proc.stdout + proc.stderr


def test_the_winners_merge_sets_aside_an_untracked_file_it_would_overwrite(tmp_path):
    """The preflight's out/result.dat is untracked in the workspace; the winning lane committed its own: the merge
    goes through and the user's file is kept in the run's folder, not deleted."""
    from nightshift.supervisor.fleet.finish import merge_problem, merge_winner

    ws = tmp_path / "ws"
    ws.mkdir()
    git = lambda *a: subprocess.run(["git", "-c", "user.name=u", "-c", "user.email=u@u", *a], cwd=ws, check=True,
                                    capture_output=True, text=True).stdout  # noqa: E731
    git("init", "-q", "-b", "main")
    (ws / "solver.py").write_text("v = 1\n")
    git("add", "-A")
    git("commit", "-qm", "start")
    base = git("rev-parse", "HEAD").strip()
    git("switch", "-qc", "lane")
    (ws / "out").mkdir()
    (ws / "out" / "result.dat").write_text("the lane's\n")
    git("add", "-A")
    git("commit", "-qm", "lane")
    git("switch", "-q", "main")
    (ws / "out").mkdir(exist_ok=True)
    (ws / "out" / "result.dat").write_text("the preflight's\n")
    (ws / "notes.txt").write_text("mine\n")
    assert merge_problem(ws, "main", base) is None  # untracked files are no reason to hold the merge
    head, moved = merge_winner(ws, "lane", tmp_path / "set-aside")
    assert moved == ["out/result.dat"] and head == git("rev-parse", "lane").strip()
    assert (tmp_path / "set-aside" / "out" / "result.dat").read_text() == "the preflight's\n"
    assert (ws / "out" / "result.dat").read_text() == "the lane's\n" and (ws / "notes.txt").read_text() == "mine\n"
    (ws / "solver.py").write_text("v = 2\n")
    assert "uncommitted changes to tracked files" in merge_problem(ws, "main", head)
