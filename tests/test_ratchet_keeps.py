"""The test ratchet's starting set is kept: a person's release of a test lets an honest rename through (and the
report shows it); the set survives a kill -9 of the supervisor right after it was recorded; every lane of a fleet
starts with the fleet's. Real git, tmux, bubblewrap and pytest, a scripted command agent; no model."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fixtures_core import nightshift, supervise, wait_for, workspace  # noqa: F401
from tests.fixtures_fleet import LANE_AGENT, fleet, lane_events, lane_run_dirs  # noqa: F401
from tests.fixtures_ratchet import BASELINE, BREAK, CLAIM, ROUNDTRIP, TEST_COMMAND, UTIL, write_suite

# A plain mv: an agent's `git mv` (a staged deletion) makes the shift's commit fail in gitops today (left to #27).
RENAME = ["shell", "mv tests/test_io.py tests/test_inout.py"]


def ratchet_check(verdict: dict) -> dict:
    return next(c for c in verdict["checks"] if c["name"] == "tests")


def test_a_persons_release_lets_an_honest_rename_through_and_the_report_shows_it(workspace):
    write_suite(workspace.path)
    ws = workspace.configure({"s1t1": [["shell", "until [ -f released ]; do sleep 0.1; done"]],
                              "s1t2": [RENAME, CLAIM]}, test_command=TEST_COMMAND, max_shifts=1)
    run = ws.create_run()
    proc = subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", "supervise", str(run.root)],
                            cwd=ws.path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: "agent.started" in ws.types(run), 60, what="the first turn")
        released = nightshift("release", run.run_id, "tests/test_io.py", "--why", "renamed to test_inout.py with "
                              "the io module", cwd=ws.path)
        assert released.returncode == 0, released.stdout + released.stderr
        assert "release: accepted by run" in released.stdout and ROUNDTRIP in released.stdout
        (ws.path / "released").write_text("")
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    events = ws.events(run)
    release = next(e["data"] for e in events if e["type"] == "test.released")
    assert set(release["tests"]) == {t for t in BASELINE if t.startswith("tests/test_io.py::")}
    assert release["files"] == ["tests/test_io.py"] and release["why"].startswith("renamed to test_inout.py")
    last = [e["data"] for e in events if e["type"] == "verify.finished"][-1]
    assert last["passed"] and ratchet_check(last)["summary"] == "tests: 6 passed, 0 failing, 0 regressed"
    assert events[-1]["data"]["outcome"] == "done"
    assert (ws.path / "tests" / "test_inout.py").is_file() and not (ws.path / "tests" / "test_io.py").exists()
    told = nightshift("log", run.run_id, cwd=ws.path).stdout
    assert "test ratchet starts from 6 tests passing (start; ran twice" in told
    assert "released from the test ratchet by" in told and "(renamed to test_inout.py with the io module)" in told
    report = nightshift("report", run.run_id, cwd=ws.path)
    assert report.returncode == 0, report.stderr
    page = (run.root / "report.html").read_text()
    assert "released from the test ratchet by" in page and "renamed to test_inout.py with the io module" in page


def test_the_starting_set_survives_a_kill_9_right_after_it_was_recorded(workspace):
    write_suite(workspace.path)
    ws = workspace.configure({"s1t1": [BREAK, ["shell", "rm -f tests/test_io.py"], CLAIM],
                              "s1t2": [["write", "suite/util.py", UTIL], CLAIM]}, test_command=TEST_COMMAND,
                             max_shifts=1, extra='\n[policy]\nsandbox = "off"\n')
    run = ws.create_run()
    killed = supervise(run, env={"NIGHTSHIFT_TEST_CRASH_AFTER": "tests.baseline"})
    assert killed.returncode == -9 and ws.types(run)[-1] == "tests.baseline"
    assert supervise(run).returncode == 0
    types = ws.types(run)
    assert types.count("tests.baseline") == 1 and types.count("supervisor.started") == 2
    first = [e["data"] for e in ws.events(run) if e["type"] == "verify.finished"][0]
    assert any(line.startswith(f"vanished: {ROUNDTRIP} (its file was deleted; nightshift put it back")
               for line in ratchet_check(first)["lines"])  # kept, so restored and named, after the restart too


@pytest.mark.timeout(400)
def test_every_lane_of_a_fleet_starts_with_the_fleets_starting_set(fleet):
    ws = fleet.ws
    write_suite(ws.path)
    (ws.path / "agent.py").write_text(LANE_AGENT)
    ws.configure({"lane-1:default": [BREAK, CLAIM], "lane-2:default": [["sleep", 2]],
                  "lane-2:s1t1": [["write", "suite/extra.py", "X = 1\n"], ["sleep", 3], CLAIM]},
                 test_command=TEST_COMMAND, max_shifts=1, pushbacks=0, extra="\n[fleet]\nlanes = 2\n")
    proc = nightshift("run", "--foreground", cwd=ws.path, timeout=300)  # with the preflight: it takes the set
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fleet_baseline = fleet.of("tests.baseline")
    assert len(fleet_baseline) == 1 and fleet_baseline[0]["source"] == "preflight"
    assert set(fleet_baseline[0]["passing"]) == BASELINE
    lanes = lane_run_dirs(ws.path)
    assert len(lanes) == 2
    for run_dir in lanes:
        events = lane_events(run_dir)
        baseline = [e["data"] for e in events if e["type"] == "tests.baseline"]
        assert len(baseline) == 1 and baseline[0]["source"] == "fleet" and set(baseline[0]["passing"]) == BASELINE
        assert [e["type"] for e in events].index("tests.baseline") < [e["type"] for e in events].index("shift.started")
    one = next(d for d in lane_run_dirs(ws.path) if d.name.endswith("-l1"))
    first = next(e["data"] for e in lane_events(one) if e["type"] == "verify.finished")
    assert any(line.startswith(f"failed: {ROUNDTRIP} (passed at the start") for line in ratchet_check(first)["lines"])
    decided = fleet.of("fleet.decided")[0]
    assert decided["winner"] == 2


def test_a_release_on_a_fleet_is_in_every_lane_made_after_it(fleet):
    from nightshift.supervisor.fleet.launch import create_fleet
    from nightshift.supervisor.fleet.loop import FleetSupervisor
    from nightshift.supervisor.run.state import load_state
    from nightshift.supervisor.shift.launcher import resolve_config
    from nightshift.supervisor.shift.ratchet import kept

    ws = fleet.ws
    write_suite(ws.path)
    (ws.path / "agent.py").write_text(LANE_AGENT)
    ws.configure({"default": [["sleep", 1]]}, test_command=TEST_COMMAND, extra="\n[fleet]\nlanes = 2\n")
    config = resolve_config(ws.path)
    run = create_fleet(ws.path, config)
    sup = FleetSupervisor(run, config, say=lambda _: None)
    sup.ledger.open()
    try:
        sup.plan()  # no preflight: the fleet takes the starting set itself
        sup.handle({"id": "c1", "verb": "release", "args": {"test": "tests/test_io.py", "why": "split in two"}})
        sup.handle({"id": "c2", "verb": "release", "args": {"test": "tests/test_nothing.py", "why": "x"}})
        for key, lane in sorted(sup.fleet["lanes"].items()):
            assert sup.create_lane(int(key), lane)
    finally:
        sup.ledger.close()
    answers = {e["data"]["id"]: e["type"] for e in fleet.events() if e["type"].startswith("command.")}
    assert answers == {"c1": "command.accepted", "c2": "command.rejected"}
    assert fleet.of("tests.baseline")[0]["source"] == "start"
    left = BASELINE - {t for t in BASELINE if t.startswith("tests/test_io.py::")}
    for run_dir in lane_run_dirs(ws.path):
        types = [e["type"] for e in lane_events(run_dir)]
        assert types[-2:] == ["tests.baseline", "test.released"], types
        assert kept(load_state(run_dir)[0]) == left
