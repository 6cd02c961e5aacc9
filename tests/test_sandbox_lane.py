"""Issue 37 in a fleet: a lane is an ordinary run in its own worktree, and its agent's turn meets the same closed
sandbox (the probes of supervisor/sandbox/surfaces.py run from the lane's turn, with the user's doors set up
outside); the lane's honest work is then verified and merged."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet, lane_run_dirs, show, solver  # noqa: F401
from tests.fixtures_namespace import need_namespace
from tests.test_sandbox_surfaces import stranger_home  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(600)
def test_a_lanes_turn_meets_a_closed_sandbox(fleet: Fleet, stranger_home):  # noqa: F811
    need_namespace()
    from nightshift.supervisor.config.schema import load_config
    from nightshift.supervisor.sandbox.boundary import boundary_for
    from nightshift.supervisor.sandbox.survey import plan

    from nightshift.supervisor.run.own_python import bare_code
    code = bare_code("nightshift.supervisor.sandbox.surfaces")
    probe = f"{sys.executable} -S -E -P -c \"{code}\" probe-plan.json > surfaces.jsonl 2>&1"
    fleet.configure({"lane-1:s1t1": [["shell", probe], ["write", "solver.py", solver(1e-8)],
                                     ["write", "check.txt", "ok"], ["claim", "done", "probed and converged"]],
                     "lane-2:default": [["sleep", 0.5]]}, "lanes = 2\n")
    todo = plan(boundary_for(fleet.ws.path, load_config(fleet.ws.path)), session=True)
    assert todo["sockets"] and todo["credentials"]
    (fleet.ws.path / "probe-plan.json").write_text(json.dumps(todo))  # committed: every lane's worktree has it
    fleet.git("add", "probe-plan.json")
    fleet.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "probe plan")
    proc = nightshift("run", "--foreground", "--no-check", cwd=fleet.ws.path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr + show(fleet)
    lane = next(d for d in lane_run_dirs(fleet.ws.path) if d.name.endswith("-l1"))
    worktree = lane.parents[2]
    found = {json.loads(line)["surface"]: json.loads(line) for line in (worktree / "surfaces.jsonl").read_text()
             .splitlines()}
    assert {"capabilities", "mounts", "unix sockets", "abstract sockets", "credentials", "syscalls",
            "session"} <= set(found), found
    for item in found.values():
        assert item["closed"], item
    assert fleet.of("run.finished")[-1]["outcome"] == "done", show(fleet)
