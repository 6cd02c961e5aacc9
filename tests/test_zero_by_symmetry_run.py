"""Issue 35 end to end: a scripted command agent works on a field zero by symmetry on two grid rows, in a workspace
made by `nightshift init` from its references with a goal that states only a relative tolerance.

The honest solver (the same scheme as the reference code, round-off of its own on the zero rows) ends VERIFIED DONE
with no setting of the oracle changed; the wrong one (1e-4 off where x > 1/2) never ends done, and its push-back
quotes the worst point's |cand - ref|, |ref| and atol beside its relative error; nor does it when the agent tries
to widen the derived atol in nightshift.toml.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.verify.oracle.report import fmt
from tests.fixtures_core import AGENT, nightshift, require_tool, wait_for
from tests.fixtures_symmetry import SOLVER, WRONG, X, reference_field, write_all

GOAL = "agree with the reference code to 1e-6 relative"
# What the scripted agent does at each stop: the solver, its notes, the plan ticked, a claim of done.
WORK = [["append", "CHANGELOG.md", "\n- solver: the reference scheme, written out in every format\n"],
        ["shell", "sed -i 's/^- \\[ \\]/- [x]/' CLAUDE.md"], ["claim", "done", "the solver matches the reference"]]


def workspace(tmp_path, solver: str, work: list | None = None):
    """init's defaults; only the scripted agent, the local backend and a one-shift budget are set for the test."""
    require_tool("git")
    ws = tmp_path / "ws"
    write_all(ws / "reference", reference_field())
    init_workspace(ws, InitOptions(goal=GOAL, reference_dir="reference", agent="command"))
    (ws / "agent.py").write_text(AGENT)
    (ws / "agent_script.json").write_text(json.dumps({"default": [["write", "solver.py", solver], *(work or WORK)]}))
    toml = ws / "nightshift.toml"
    text = toml.read_text()
    for old, new in (('\ncommand = ""', f'\ncommand = "{sys.executable} solver.py"'),
                     ('# command = "codex exec {prompt}"', f'command = "{sys.executable} agent.py"'),
                     ('kind = "tmux"', 'kind = "local"'), ("max_shifts = 20", "max_shifts = 1"),
                     ("max_pushbacks_per_shift = 3", "max_pushbacks_per_shift = 1")):
        assert old in text, old
        text = text.replace(old, new, 1)
    toml.write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=ws, check=True)
    return ws


def run_until_it_stops(ws):
    from nightshift.supervisor.run.events import read_events
    from nightshift.supervisor.shift.launcher import create_run, resolve_config

    run = create_run(ws, resolve_config(ws))
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws)
    types = lambda: [e["type"] for e in read_events(run.events).events]  # noqa: E731
    try:
        wait_for(lambda: "run.finished" in types() or "run.paused" in types(), timeout=240, what="the run to stop")
        if "run.finished" not in types():  # held by its budget: its supervisor ends there, a stop is queued (#47)
            nightshift("stop", run.run_id)
            wait_for(lambda: "run.finished" in types() or proc.poll() is not None, timeout=60,
                     what="the run to finish after stop, or its held supervisor to end")
        proc.wait(timeout=60)
    finally:
        proc.kill()
    return run, read_events(run.events).events


def test_an_honest_solver_with_a_field_zero_by_symmetry_ends_verified_done_from_init_defaults(tmp_path):
    ws = workspace(tmp_path, SOLVER)
    run, events = run_until_it_stops(ws)
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    finished = [e["data"]["outcome"] for e in events if e["type"] == "run.finished"]
    assert finished == ["done"] and verdicts[-1]["passed"], json.dumps(verdicts, indent=1)[:4000]
    oracle = next(c for c in verdicts[-1]["checks"] if c["name"] == "oracle")
    assert oracle["passed"] and "oracle: all 4 comparisons pass" in json.dumps(oracle), oracle
    story = nightshift("report", run.run_id, cwd=ws).stdout + nightshift("log", run.run_id, cwd=ws).stdout
    assert "Traceback" not in story


def test_a_wrong_solver_never_ends_done_and_is_told_its_absolute_error_beside_the_relative_one(tmp_path):
    ws = workspace(tmp_path, WRONG)
    run, events = run_until_it_stops(ws)
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    assert verdicts and not any(v["passed"] for v in verdicts)
    assert [e["data"]["outcome"] for e in events if e["type"] == "run.finished"] != ["done"]
    pushback = run.turn_file(1, 2, "prompt.md").read_text()
    assert "rel err 1.00e-04 vs rtol 1e-06 at index (" in pushback, pushback  # the .npy field, by index
    ref = reference_field()
    size = float(np.abs(ref[X > 0.5]).max())  # where the physics moved, the largest |ref|: the worst ratio
    assert f"|cand - ref| = {fmt(size * 1e-4)}, |ref| = {fmt(size)}, atol " in pushback, pushback


def test_an_agent_that_widens_the_derived_atol_in_nightshift_toml_never_ends_done(tmp_path):
    """The floor init derived is the user's: the agent's turn cannot write nightshift.toml, so a wrong solver with
    every atol raised to 1 is still measured against the floor init wrote."""
    widen = ["shell", "sed -i 's/atol = [0-9.e+-]*/atol = 1/' nightshift.toml; echo edited >> widen.log"]
    ws = workspace(tmp_path, WRONG, [widen, *WORK])
    written = (ws / "nightshift.toml").read_text()
    run, events = run_until_it_stops(ws)
    assert (ws / "widen.log").exists()  # the agent did try
    assert (ws / "nightshift.toml").read_text() == written
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    assert verdicts and not any(v["passed"] for v in verdicts)
    assert [e["data"]["outcome"] for e in events if e["type"] == "run.finished"] != ["done"]
    assert "rel err 1.00e-04 vs rtol 1e-06" in run.turn_file(1, 2, "prompt.md").read_text()

