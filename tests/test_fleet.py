"""Fleets end to end: scripted command-agent lanes from `nightshift init` defaults, each an ordinary run in its own
git worktree under real tmux and bubblewrap, against a real oracle. Only the model is absent: the agents are
scripts that do what each test says (one copies the answers, one stalls, one converges slowly, one is fast)."""
from __future__ import annotations

import pytest

from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_fleet import COPY, Fleet, fleet, lane_events, lane_run_dirs, show, solver, wait_page  # noqa: F401

FOUR = {
    "lane-1:default": [*COPY, ["write", "check.txt", "ok"], ["claim", "done", "exact"]],
    "lane-2:default": [["sleep", 0.5]],
    "lane-3:s1t1": [["write", "solver.py", solver(1e-3)], ["write", "check.txt", "ok"]],
    "lane-3:default": [["sleep", 2], ["write", "solver.py", solver(3e-4)]],
    "lane-4:s1t1": [wait_page("lane 1", "lane 2"), ["write", "solver.py", solver(1e-8)], ["write", "check.txt", "ok"],
                    ["claim", "done", "converged"]],
    "lane-5:default": [["shell", "cp .nightshift/failed-approaches.md seen.md"], ["sleep", 0.5]],
}
APPROACHES = 'approaches = ["copy the reference", "wait for inspiration", "finite differences, coarse to fine"]\n'


@pytest.mark.timeout(600)
def test_four_lanes_the_fast_one_is_merged_the_cheat_named_the_stall_forked(fleet: Fleet):
    fleet.configure(FOUR, "lanes = 4\n" + APPROACHES + "fork_on_stall = true\nmax_forks = 1\n")
    base = fleet.git("rev-parse", "HEAD").strip()
    proc = nightshift("run", "--foreground", "--no-check", cwd=fleet.ws.path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr + show(fleet)
    run_id = fleet.run_dir().name
    finished = fleet.of("run.finished")
    assert finished[-1]["outcome"] == "done" and "lane 4" in finished[-1]["reason"]
    ended = {d["lane"]: d for d in fleet.of("lane.ended")}
    assert ended[1]["outcome"] == "cheated" and any("values in a row" in c or "is a copy of" in c
                                                    for c in ended[1]["cheats"]), show(fleet)
    assert ended[2]["outcome"] in ("retired", "stopped"), show(fleet)
    assert ended[3]["outcome"] == "stopped" and ended[4]["outcome"] == "verified"
    # the fleet checked lane 4's commit itself, in a checkout of its own, with the oracle
    verified = fleet.of("lane.verified")
    assert [v["lane"] for v in verified] == [4] and verified[0]["passed"] and 0 < verified[0]["metric"] < 1
    # a stalled lane was replaced from the best honest commit (lane 3's, not the copying lane's)
    forked = [d for d in fleet.of("lane.planned") if d["fork"]]
    assert len(forked) == 1 and forked[0]["lane"] == 5 and forked[0]["forked_from"] == 3, show(fleet)
    assert fleet.git("merge-base", "--is-ancestor", forked[0]["start"], f"nightshift/{run_id}/lane-3") == ""
    assert forked[0]["start"] != base
    seen = fleet.git("show", f"nightshift/{run_id}/lane-5:seen.md")
    assert "lane 1: copy the reference: CAUGHT CHEATING" in seen or "lane 2" in seen, seen
    # the winner is on the run's branch; every lane is kept as a branch
    assert fleet.git("show", "HEAD:check.txt") == "ok"
    assert "1e-08" in fleet.git("show", "HEAD:solver.py")
    branches = fleet.git("for-each-ref", "--format=%(refname:short)", f"refs/heads/nightshift/{run_id}/").split()
    assert sorted(branches) == [f"nightshift/{run_id}/lane-{k}" for k in range(1, 6)]
    notes = (fleet.ws.path / "CHANGELOG.md").read_text()
    assert "- Winner: lane 4 (the first lane verified by the fleet)" in notes
    for k, words in ((1, "copy the reference; CAUGHT CHEATING"), (3, "finite differences, coarse to fine; stopped"),
                     (4, "its own choice; kept (merged)"), (5, "forked from lane 3")):
        line = next(line for line in notes.splitlines() if line.startswith(f"- lane {k} "))
        assert words in line and "worst error / tolerance" in line, notes
    assert "caught:" in notes
    # each lane was its own run with its own supervisor, started once
    assert sorted(d["lane"] for d in fleet.of("lane.started")) == [1, 2, 3, 4, 5]
    assert len(lane_run_dirs(fleet.ws.path)) == 5
