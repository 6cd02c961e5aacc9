"""The shift loop end to end with real tmux, real git and a scripted command agent (the model is not involved)."""
from __future__ import annotations

import json
import subprocess
import sys

from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import supervise, wait_for, workspace, nightshift  # noqa: F401

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed check.txt"]]
WRONG = [["write", "check.txt", "no"], ["claim", "done", "all good (it is not)"]]


def test_premature_claim_is_pushed_back_with_the_failure_then_verified(workspace):
    ws = workspace.configure({"s1t1": WRONG, "s1t2": FIX})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    types = ws.types(run)
    assert types.count("shift.started") == 1 and types.count("agent.started") == 2
    verdicts = [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"]
    assert [v["passed"] for v in verdicts] == [False, True]
    assert verdicts[0]["claimed"] == "done"
    pushback = run.turn_file(1, 2, "prompt.md").read_text()
    assert "after your claim that the goal is met" in pushback and "tests: exit status 1" in pushback
    assert ws.events(run)[-1]["data"]["outcome"] == "done"
    log = subprocess.run(["git", "log", "--format=%s"], cwd=ws.path, capture_output=True, text=True).stdout
    assert "nightshift: shift 1 turn 2: PASS" in log and "nightshift: shift 1 turn 1: FAIL" in log
    tracked = subprocess.run(["git", "ls-files"], cwd=ws.path, capture_output=True, text=True).stdout
    assert ".nightshift" not in tracked and "check.txt" in tracked


def test_after_the_pushback_limit_a_fresh_shift_gets_the_orientation_prompt(workspace):
    ws = workspace.configure({"s1t1": WRONG, "s1t2": WRONG, "s2t1": FIX}, pushbacks=1)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    ended = [e["data"]["reason"] for e in ws.events(run) if e["type"] == "shift.ended"]
    assert ended == ["pushback_limit"]
    orientation = run.turn_file(2, 1, "prompt.md").read_text()
    assert "shift 2" in orientation and "CLAUDE.md" in orientation and "CHANGELOG.md" in orientation
    assert "The last check by nightshift said: FAIL" in orientation


def test_a_stop_without_a_claim_is_verified_and_asked_to_claim(workspace):
    ws = workspace.configure({"s1t1": [["write", "check.txt", "ok"]], "s1t2": FIX})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    first = [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"][0]
    assert first["passed"] and first["claimed"] is None
    assert "you did not claim" in run.turn_file(1, 2, "prompt.md").read_text()


def test_changelog_required_and_plan_items_that_vanish_are_reported(workspace):
    claude_md = workspace.path / "CLAUDE.md"
    text = claude_md.read_text()
    first_item = text.split("## Plan", 1)[1].split("- [ ] ", 1)[1].splitlines()[0]
    ws = workspace.configure({
        "s1t1": [["write", "CLAUDE.md", text.replace(f"- [ ] {first_item}\n", "")], *FIX],
        "s1t2": [["write", "CLAUDE.md", text], ["append", "CHANGELOG.md", "\n### today: restored the plan\n"], *FIX],
    }, require_changelog=True)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    first = [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"][0]
    failed = {c["name"]: c for c in first["checks"] if not c["passed"]}
    assert set(failed) == {"plan", "changelog"}
    assert failed["plan"]["lines"] == [f"VANISHED (never checked): {first_item}"]


def test_a_test_that_passed_before_and_fails_now_is_a_regression(workspace):
    test_file = "import pathlib\n\ndef test_a():\n    assert pathlib.Path('a.txt').read_text() == '1'\n\n" \
                "def test_b():\n    assert pathlib.Path('b.txt').read_text() == '1'\n"
    ws = workspace.configure({
        "s1t1": [["write", "a.txt", "1"], ["write", "b.txt", "0"]],
        "s1t2": [["write", "a.txt", "0"], ["write", "b.txt", "1"]],
        "s1t3": [["write", "a.txt", "1"], ["claim", "done", "both pass"]],
    }, test_command=f"{sys.executable} -m pytest -q test_ab.py")
    (ws.path / "test_ab.py").write_text(test_file)  # the user's tests, there when the run starts (the goal's)
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None) == 0
    verdicts = [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"]
    tests = [next(c for c in v["checks"] if c["name"] == "tests") for v in verdicts]
    assert tests[0]["summary"] == "tests: 1 passed, 1 failing, 0 regressed"
    assert tests[1]["summary"] == "tests: 1 passed, 1 failing, 1 regressed"
    assert any(line.startswith("failed: test_ab.py::test_a (passed at an earlier verdict") for line in tests[1]["lines"])
    assert any("assert '0' == '1'" in line for line in tests[1]["lines"])
    assert verdicts[2]["passed"]


def test_a_blocked_claim_pauses_the_run_and_tells_the_human(workspace, tmp_path):
    told = tmp_path / "told.txt"
    ws = workspace.configure({"s1t1": [["claim", "blocked", "need the reference data for z > 3"]]},
                             extra=f'[notify]\ncommand = "echo $NIGHTSHIFT_EVENT: $NIGHTSHIFT_MESSAGE > {told}"\n')
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), what="run.paused")
        wait_for(told.exists, what="the notify command")
        assert told.read_text().startswith("blocked: the agent is blocked: need the reference data for z > 3")
        assert nightshift("stop", run.run_id).returncode == 0
        assert proc.wait(timeout=30) == 1
    finally:
        proc.kill()
    assert ws.events(run)[-1]["data"]["outcome"] == "stopped"


def test_budget_of_shifts_and_the_breaker_pause_the_run(workspace):
    ws = workspace.configure({"default": [["write", "check.txt", "no"]]}, pushbacks=0, max_shifts=2, breaker=9)
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "run.paused" in ws.types(run), what="run.paused")
        exceeded = [e["data"] for e in ws.events(run) if e["type"] == "budget.exceeded"]
        assert exceeded == [{"what": "max_shifts", "limit": 2, "value": 2}]
        assert ws.types(run).count("shift.started") == 2
        nightshift("stop", run.run_id)
        proc.wait(timeout=30)
    finally:
        proc.kill()


def test_breaker_trips_after_stops_with_no_diff_and_no_progress(workspace):
    ws = workspace.configure({"default": []}, pushbacks=9, breaker=2)
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "breaker.tripped" in ws.types(run), what="breaker.tripped")
        state = json.loads(run.snapshot.read_text())["state"]
        wait_for(lambda: json.loads(run.snapshot.read_text())["state"]["paused"], what="paused")
        assert state["stale_stops"] == 2
        assert nightshift("resume", run.run_id).returncode == 0  # resuming resets the breaker
        nightshift("stop", run.run_id)
        proc.wait(timeout=30)
    finally:
        proc.kill()


def test_an_agent_that_commits_its_own_work_is_progress_not_a_stale_stop(workspace):
    # CLAUDE.md tells the agent to commit each unit of work: then nightshift finds nothing left to commit, and
    # that must not count as "no diff" (the breaker tripped on an agent doing exactly what it was told).
    work = "date +%s%N >> notes.txt && git add notes.txt && git commit -qm 'a unit of work'"
    ws = workspace.configure({"default": [["shell", work]]}, pushbacks=9, breaker=2)
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        commits = lambda: [e["data"] for e in ws.events(run) if e["type"] in ("commit.created", "commit.skipped")]
        wait_for(lambda: len(commits()) >= 4, what="four stops committed")
        assert "breaker.tripped" not in ws.types(run)
        assert [c["stale"] for c in commits()[:4]] == [False] * 4
        assert len({c["head"] for c in commits()[:4]}) == 4  # the agent's own commits moved HEAD each time
        nightshift("stop", run.run_id)
        proc.wait(timeout=30)
    finally:
        proc.kill()


def test_an_agent_that_only_writes_its_lab_notes_trips_the_breaker(workspace):
    # A verdict no better and nothing but a CHANGELOG entry (and the plan) changed: stuck, however many commits it
    # makes (a run once made 80 of them until max_shifts, with the test command unable to run at all).
    ws = workspace.configure({"default": [["shell", "date +%s%N >> CHANGELOG.md"]]}, pushbacks=9, breaker=2)
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "breaker.tripped" in ws.types(run), what="breaker.tripped")
        assert ws.types(run).count("commit.created") <= 3, ws.types(run)
        nightshift("stop", run.run_id)
        proc.wait(timeout=30)
    finally:
        proc.kill()


def test_an_agent_that_only_makes_empty_commits_still_trips_the_breaker(workspace):
    ws = workspace.configure({"default": [["shell", "git commit -q --allow-empty -m 'nothing'"]]}, pushbacks=9,
                             breaker=2)
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)], cwd=ws.path)
    try:
        wait_for(lambda: "breaker.tripped" in ws.types(run), what="breaker.tripped")
        nightshift("stop", run.run_id)
        proc.wait(timeout=30)
    finally:
        proc.kill()
