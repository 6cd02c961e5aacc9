"""`nightshift submit --lanes N` refuses as `run --lanes N` does, only for changes to tracked files, and its start
line names the untracked files the lanes will not see. Against the localhost Slurm cluster; the chain's job is held
in the queue (``--begin``) and the run is stopped there, so no lane runs."""
from __future__ import annotations

import pytest

from nightshift.hpc.chain import cancel_chain
from nightshift.hpc.client import make_client
from nightshift.supervisor.run.paths import RunPaths
from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet  # noqa: F401
from tests.fixtures_slurm import QUICK, slurm_cluster  # noqa: F401
from tests.test_bad_input import one_line_error

pytestmark = pytest.mark.slurm
QUEUED = '\n[slurm]\nclient = "cli"\ntime = "5:00"\npoll_interval = "1s"\nextra = ["--begin=now+3600"]\n'


def test_submit_lanes_refuses_only_tracked_changes_and_names_the_untracked(slurm_cluster, fleet: Fleet):
    fleet.configure({}, "lanes = 2\n", backend="local")
    toml = fleet.ws.path / "nightshift.toml"
    toml.write_text(toml.read_text() + QUEUED)
    fleet.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "slurm")
    (fleet.ws.path / "agent.py").write_text((fleet.ws.path / "agent.py").read_text() + "# edited\n")
    one_line_error(nightshift("submit", "--no-check", cwd=fleet.ws.path), "to tracked files (e.g. agent.py)",
                   "commit or stash")
    assert not list(fleet.ws.path.glob(".nightshift/runs/*"))  # nothing made, nothing queued
    fleet.git("checkout", "agent.py")
    (fleet.ws.path / "scratch.txt").write_text("my notes\n")
    out = nightshift("submit", "--no-check", cwd=fleet.ws.path, timeout=120)
    run = RunPaths(fleet.run_dir())
    try:
        assert out.returncode == 0, out.stdout + out.stderr
        start = next(line for line in out.stdout.splitlines() if line.startswith(f"run {run.run_id}: submitted"))
        assert "do not see 1 untracked file(s): scratch.txt" in start, out.stdout
        stop = nightshift("stop", run.run_id, cwd=fleet.ws.path, timeout=120)
        assert stop.returncode == 0, stop.stdout + stop.stderr
        wait_for(lambda: any(e["type"] == "run.finished" for e in fleet.events(run.root)), timeout=60,
                 what="the queued fleet to end when stopped")
        assert (fleet.ws.path / "scratch.txt").read_text() == "my notes\n"
    finally:
        cancel_chain(run, make_client("cli", backoff=QUICK))
