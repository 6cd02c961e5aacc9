"""Fleets end to end: scripted command-agent lanes from `nightshift init` defaults, each an ordinary run in its own
git worktree under real tmux and bubblewrap, against a real oracle. Only the model is absent: the agents are
scripts that do what each test says (one copies the answers, one stalls, one converges slowly, one is fast)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401
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
    assert ended[1]["outcome"] == "cheated" and any("answers.txt holds the same bytes as reference/result.dat" in c
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
    # the lane without an approach was told to take another than the others'; every lane was told of the page
    four = next(d for d in lane_run_dirs(fleet.ws.path) if d.name.endswith("-l4"))
    prompt = (four / "shifts" / "1" / "t1.prompt.md").read_text()
    assert "must differ from the other lanes' approaches (copy the reference; wait for inspiration; finite" in prompt
    assert ".nightshift/failed-approaches.md (read-only)" in prompt
    # each lane was its own run with its own supervisor, started once
    assert sorted(d["lane"] for d in fleet.of("lane.started")) == [1, 2, 3, 4, 5]
    assert len(lane_run_dirs(fleet.ws.path)) == 5
    # the fleet's verified done is attested like a run's: the fleet's own check of lane 4's commit, and anyone
    # checks it again (init defaults: no key, so unsigned, which verify-result names unless allowed)
    attested = fleet.of("attest.written")
    assert len(attested) == 1 and not attested[0]["signed"], show(fleet)
    checked = nightshift("verify-result", attested[0]["path"], "--allow-missing", "signature", cwd=fleet.ws.path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"commit {verified[0]['sha'][:12]} is in the repository" in checked.stdout, checked.stdout
    rerun = nightshift("verify-result", attested[0]["path"], "--rerun", "--allow-missing", "signature",
                       cwd=fleet.ws.path, timeout=180)  # the outputs the fleet measured, made again and measured
    assert rerun.returncode == 0 and "ok: --rerun: result" in rerun.stdout, rerun.stdout + rerun.stderr


def test_select_best_keeps_the_lowest_error_and_a_claim_only_the_lanes_folder_holds_fails(fleet: Fleet):
    fleet.configure({
        "lane-1:default": [["write", "solver.py", solver(5e-7)], ["write", "check.txt", "ok"], ["claim", "done", "ok"]],
        "lane-2:default": [["sleep", 6], ["write", "solver.py", solver(1e-8)], ["write", "check.txt", "ok"],
                           ["claim", "done", "better"]],
        # passes in its own folder only: check.txt is git-ignored, so its commit does not hold it
        "lane-3:default": [["write", "solver.py", solver(1e-9)], ["append", ".gitignore", "check.txt\n"],
                           ["write", "check.txt", "ok"], ["claim", "done", "best of all"]],
    }, 'lanes = 3\nselect = "best"\n', heldout_rtol=6e-7)
    proc = nightshift("run", "--foreground", "--no-check", cwd=fleet.ws.path, timeout=280)
    assert proc.returncode == 0, proc.stdout + proc.stderr + show(fleet)
    ended = [(d["lane"], d["outcome"]) for d in fleet.of("lane.ended")]
    firsts = [k for k, outcome in ended if outcome == "verified"]
    assert firsts == [1, 2], show(fleet)  # the worse lane was verified first
    # lane 3's own verdicts already run in a clean checkout of its commit (the ignored check.txt is not there): its
    # claim never passes, and it spends its budget; a lane's verdict the fleet re-checks fails it, if it gets there
    assert (3, "spent") in ended or (3, "failed") in ended, ended
    assert (1, "dominated") in ended
    assert not any(d["passed"] for d in fleet.of("lane.verified") if d["lane"] == 3)
    decided = fleet.of("fleet.decided")[0]
    assert decided["winner"] == 2 and "lowest worst error over tolerance (0.0118, held-out" in decided["reason"]
    assert 0.8 < next(d for d in fleet.of("lane.verified") if d["lane"] == 1)["metric"] < 0.9  # ranked with held-out
    assert "1e-08" in fleet.git("show", "HEAD:solver.py")
    notes = (fleet.ws.path / "CHANGELOG.md").read_text()
    one = next(line for line in notes.splitlines() if line.startswith("- lane 1 "))
    assert "dominated; worst error / tolerance 0.501" in one and "held-out: pass" in one, notes
    assert "0.83" not in notes  # the held-out comparison's own figure never reaches the run's branch
    status = nightshift("status", fleet.run_dir().name, "--json", cwd=fleet.ws.path)
    import json
    lanes = json.loads(status.stdout)["lanes"]
    assert [(lane["lane"], lane["winner"]) for lane in lanes] == [(1, False), (2, True), (3, False)]
    assert "(3 lanes)" in nightshift("ls", cwd=fleet.ws.path).stdout
    human = nightshift("status", fleet.run_dir().name, cwd=fleet.ws.path).stdout
    lane_two = next(line for line in human.splitlines() if line.startswith("lane 2 "))
    assert "lanes      3, cost $" in human and lane_two.endswith("WINNER") and "0.0118" in lane_two, human
    report = nightshift("report", fleet.run_dir().name, cwd=fleet.ws.path)
    assert report.returncode == 0, report.stderr
    assert "lanes: 3; winner: lane 2 (the lowest worst error over tolerance" in report.stdout, report.stdout
    assert "lane 1: its own choice: dominated, worst error / tolerance 0.5" in report.stdout
    from pathlib import Path
    page = Path(report.stdout.splitlines()[0].split(": ", 1)[1]).read_text()  # "report of run X: <path>"
    assert "<table id=lanes>" in page and page.count("<tr><td>") >= 3
    assert "<td>dominated</td><td>0.501</td><td>0.501</td>" in page  # lane 1's accuracy over its verdicts, then its end


TWO = {"lane-1:default": [["sleep", 1], ["write", "solver.py", solver(1e-8)], ["write", "check.txt", "ok"],
                          ["claim", "done", "converged"]],
       "lane-2:default": [["sleep", 1], ["write", "solver.py", solver(1e-3)]]}


@pytest.mark.parametrize("crash_after", ["lane.started", "lane.verified", "fleet.merged"])
def test_kill_9_of_the_fleet_and_resume_no_lane_twice_no_verdict_lost_or_doubled(fleet: Fleet, crash_after):
    fleet.configure(TWO, "lanes = 2\n")
    proc = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", "--foreground", "--no-check"],
                          cwd=fleet.ws.path, capture_output=True, text=True, timeout=200,
                          env={**os.environ, "NIGHTSHIFT_TEST_CRASH_AFTER": crash_after})
    assert proc.returncode == -9, proc.stdout + proc.stderr  # killed right after recording the event
    run_id = fleet.run_dir().name
    assert fleet.of(crash_after)[-1]["lane"] == 1 and not fleet.of("run.finished")
    assert nightshift("resume", run_id, cwd=fleet.ws.path).returncode == 0
    wait_for(lambda: fleet.of("run.finished"), timeout=200, what="the resumed fleet to finish")
    assert fleet.of("run.finished")[-1]["outcome"] == "done", show(fleet)
    starts = [d["lane"] for d in fleet.of("lane.started")]
    assert sorted(starts) == [1, 2], show(fleet)  # the lanes' own supervisors lived on: none started twice
    assert [(d["lane"], d["passed"]) for d in fleet.of("lane.verified")] == [(1, True)]
    assert [d["lane"] for d in fleet.of("lane.ended") if d["outcome"] == "verified"] == [1]
    for run_dir in lane_run_dirs(fleet.ws.path):
        launched = [(e["shift"], e["data"]["turn"]) for e in lane_events(run_dir) if e["type"] == "agent.started"]
        assert len(launched) == len(set(launched)), run_dir  # no turn of any lane launched twice
    assert len(fleet.of("verify.finished")) == 1  # the run's one verdict: the fleet's check of the winner


def test_a_branch_moved_under_the_merge_holds_the_fleet_and_loses_nothing(fleet: Fleet):
    fleet.configure({"lane-1:default": [["sleep", 4], ["write", "solver.py", solver(1e-8)],
                                        ["write", "check.txt", "ok"], ["claim", "done", "converged"]]}, "lanes = 2\n")
    base = fleet.git("rev-parse", "HEAD").strip()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", "--foreground", "--no-check"],
                            cwd=fleet.ws.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: fleet.of("lane.started") if list(fleet.ws.path.glob(".nightshift/runs/*")) else None,
                 timeout=60, what="a lane to start")
        (fleet.ws.path / "mine.txt").write_text("the user's own work\n")
        fleet.git("add", "mine.txt")
        fleet.git("-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "the user's commit")
        mine = fleet.git("rev-parse", "HEAD").strip()
        wait_for(lambda: fleet.of("run.paused"), timeout=200, what="the fleet to hold the merge")
        reason = fleet.of("run.paused")[-1]["reason"]
        assert "moved since the fleet began" in reason and "nightshift resume" in reason and "\n" not in reason
        assert fleet.git("rev-parse", "HEAD").strip() == mine  # nothing merged over the user's commit
        run_id = fleet.run_dir().name
        assert fleet.git("rev-parse", "--verify", f"nightshift/{run_id}/lane-1").strip()  # the winner is kept
        fleet.git("reset", "-q", "--hard", base)  # the user puts the branch back, and resumes
        assert nightshift("resume", run_id, cwd=fleet.ws.path).returncode == 0
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
    assert fleet.of("fleet.merged") and fleet.git("show", "HEAD:check.txt") == "ok"


def test_one_budget_for_the_fleet_pauses_every_lane(fleet: Fleet):
    fleet.configure({"default": [["sleep", 2], ["append", "notes.txt", "x"]]}, "lanes = 2\n", breaker=50,
                    max_shifts=50)
    toml = fleet.ws.path / "nightshift.toml"
    toml.write_text(toml.read_text().replace("[limits]\n", "[limits]\nmax_hours = 0.002\n"))  # about 7 s
    fleet.git("commit", "-qam", "a short budget")
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", "--foreground", "--no-check"],
                            cwd=fleet.ws.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: list(fleet.ws.path.glob(".nightshift/runs/*")) and fleet.of("run.paused"), timeout=120,
                 what="the fleet to pause on its budget")
        assert fleet.of("budget.exceeded")[0]["what"] == "max_hours"
        assert fleet.of("run.paused")[0]["kind"] == "budget"
        for run_dir in lane_run_dirs(fleet.ws.path):  # each lane's own supervisor took the pause
            wait_for(lambda: any(e["type"] == "run.paused" for e in lane_events(run_dir)), timeout=60,
                     what=f"lane {run_dir.name} to pause")
        assert not fleet.of("lane.ended")  # paused, not ended: `nightshift resume` after a raise goes on
        assert nightshift("stop", fleet.run_dir().name, cwd=fleet.ws.path).returncode == 0
        assert proc.wait(timeout=60) != 0
    finally:
        proc.kill()
    for run_dir in lane_run_dirs(fleet.ws.path):
        wait_for(lambda: any(e["type"] == "run.finished" for e in lane_events(run_dir)), timeout=60,
                 what="the lane to stop with its fleet")
