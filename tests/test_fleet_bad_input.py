"""A fleet that cannot start is one line naming the thing and the fix, a non-zero exit, no traceback, and nothing
made: no run, no worktree, no branch."""
from __future__ import annotations

import subprocess

import pytest

from nightshift.supervisor.config.schema import parse_config
from nightshift.supervisor.fleet.lanes import FleetRefused, branch_for, refuse_fleet
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_fleet import Fleet, fleet  # noqa: F401


def refused(fleet: Fleet, *args: str) -> str:
    proc = nightshift("run", "--no-check", *args, cwd=fleet.ws.path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not list(fleet.ws.path.glob(".nightshift/runs/*")) and not list(fleet.ws.path.glob(".nightshift/lanes/*"))
    assert "nightshift/" not in fleet.git("branch")
    return proc.stderr


def test_no_lanes(fleet: Fleet):
    fleet.configure({}, "lanes = 2\n")
    assert "--lanes 0: a fleet needs 1 lane or more" in refused(fleet, "--lanes", "0")


def test_more_approaches_than_lanes(fleet: Fleet):
    fleet.configure({}, 'lanes = 2\napproaches = ["spectral", "finite volume"]\n')
    assert "approaches lists 2 approaches for 1 lane(s)" in refused(fleet, "--lanes", "1")
    (fleet.ws.path / "nightshift.toml").write_text((fleet.ws.path / "nightshift.toml").read_text()
                                                   .replace("lanes = 2", "lanes = 1"))
    fleet.git("commit", "-qam", "one lane")
    assert "fleet lists 2 approaches for 1 lane(s)" in refused(fleet)


def test_uncommitted_changes_to_tracked_files(fleet: Fleet):
    fleet.configure({}, "lanes = 2\n")
    (fleet.ws.path / "draft.py").write_text("x = 1\n")  # untracked: no reason to refuse (named at the start)
    (fleet.ws.path / "agent.py").write_text("print('edited, not committed')\n")
    text = refused(fleet)
    assert "1 uncommitted change(s) to tracked files (e.g. agent.py)" in text and "commit or stash" in text


def test_a_lane_branch_already_taken(fleet: Fleet):
    fleet.configure({}, "lanes = 2\n")
    fleet.git("branch", branch_for("20990101-000000-abcd", 2))
    config = parse_config((fleet.ws.path / "nightshift.toml").read_text())
    with pytest.raises(FleetRefused, match=r"branch nightshift/20990101-000000-abcd/lane-2 already exists"):
        refuse_fleet(fleet.ws.path, config, "20990101-000000-abcd", 2)


def test_more_lanes_than_the_limits_pay_one_shift_each(fleet: Fleet):
    fleet.configure({}, "lanes = 4\n")
    text = (fleet.ws.path / "nightshift.toml").read_text().replace('kind = "tmux"', 'kind = "slurm"')
    text = text.replace("[limits]\n", "[limits]\nmax_core_hours = 3\n") + '\n[slurm]\ntime = "1:00:00"\ncpus = 1\n'
    config = parse_config(text)
    with pytest.raises(FleetRefused, match=r"4 lanes need 4 core-hours for one shift each .* max_core_hours = 3"):
        refuse_fleet(fleet.ws.path, config, "20990101-000000-abcd", 4)
    refuse_fleet(fleet.ws.path, config, "20990101-000000-abcd", 3)  # three lanes fit


def test_lanes_in_the_config_file_are_checked_with_the_line(fleet: Fleet):
    fleet.configure({}, "lanes = 0\n")
    err = refused(fleet)
    assert "nightshift.toml line" in err and "fleet.lanes" in err
    assert subprocess.run(["git", "status", "--porcelain"], cwd=fleet.ws.path, capture_output=True,
                          text=True).stdout == ""


def test_a_lane_that_cannot_be_made_is_recorded_and_the_others_go_on(fleet: Fleet):
    from nightshift.supervisor.fleet.lanes import lanes_dir
    from nightshift.supervisor.fleet.launch import create_fleet, supervise_any
    from nightshift.supervisor.shift.launcher import resolve_config
    from tests.fixtures_fleet import solver

    fleet.configure({"lane-1:default": [["write", "solver.py", solver(1e-8)], ["write", "check.txt", "ok"],
                                        ["claim", "done", "converged"]]}, "lanes = 2\n")
    run = create_fleet(fleet.ws.path, resolve_config(fleet.ws.path))
    blocker = lanes_dir(fleet.ws.path, run.run_id) / "lane-2"
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where lane 2's worktree would go\n")
    assert supervise_any(run, say=lambda _: None) == 0
    two = next(d for d in fleet.of("lane.ended") if d["lane"] == 2)
    assert two["outcome"] == "failed" and two["reason"].startswith("could not be made: ") and "\n" not in two["reason"]
    assert fleet.of("fleet.decided")[0]["winner"] == 1

