"""Two supervisors starting on one workspace at the same moment: exactly one runs, the other refuses in one line
(real supervisors in subprocesses, real tmux, real git, the scripted command agent)."""
from __future__ import annotations

import os
import subprocess
import sys

from nightshift.supervisor.run.state import load_state
from tests.fixtures_core import nightshift, workspace  # noqa: F401

SLOW_FIX = [["sleep", "3"], ["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def start(*args: str, cwd, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})


def test_two_supervisors_started_at_once_on_one_workspace_run_one(workspace):
    ws = workspace.configure({"default": SLOW_FIX})
    runs = [ws.create_run(), ws.create_run()]  # no supervisor is up yet: the "live run" check passes both
    # Each supervisor lingers 2s between its "is another run live here?" check and recording itself: without the
    # workspace lock both would find none there and both would run.
    procs = [start("supervise", str(run.root), cwd=ws.path, env={"NIGHTSHIFT_TEST_SLOW_START": "2"}) for run in runs]
    outs = [p.communicate(timeout=240) for p in procs]
    started = [run for run in runs if "supervisor.started" in ws.types(run)]
    assert len(started) == 1, [o[1][-500:] for o in outs]
    loser = next(i for i, run in enumerate(runs) if run is not started[0])
    assert procs[loser].returncode != 0
    assert "is live in this workspace" in outs[loser][1] and started[0].run_id in outs[loser][1]
    assert ws.types(runs[loser]) == ["run.created", "workspace.recorded", "git.guarded"]  # it touched nothing
    assert load_state(started[0].root)[0]["outcome"] == "done"


def test_two_runs_launched_at_once_start_one_and_refuse_the_other_in_one_line(workspace):
    ws = workspace.configure({"default": [["sleep", "30"]]})
    procs = [start("run", str(ws.path), cwd=ws.path) for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes[0] == 0 and codes[1] != 0, outs
    refused = outs[[p.returncode for p in procs].index(codes[1])]
    lines = refused[1].strip().splitlines()
    assert len(lines) == 1 and "is live in" in lines[0] and "Traceback" not in refused[1]
    run_dirs = list((ws.path / ".nightshift" / "runs").glob("*"))
    assert len(run_dirs) == 1  # no orphan run left behind by the refused launch
    assert nightshift("stop", run_dirs[0].name, timeout=120).returncode == 0
