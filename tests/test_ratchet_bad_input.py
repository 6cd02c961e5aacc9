"""The test ratchet's bad input: a suite that fails to collect at the start (the run does not start: one line), a
test command without per-test results (the ratchet counts totals and says so), a flaky test (left out and named),
and `nightshift release` given the wrong test, no reason, a finished run, or called by the agent. From `nightshift
init` defaults, with real pytest, git, tmux and bubblewrap; a scripted command agent, no model."""
from __future__ import annotations

import sys

from nightshift.supervisor.shift.launcher import run_foreground
from tests.fixtures_core import nightshift, workspace  # noqa: F401
from tests.fixtures_ratchet import BASELINE, BREAK, CLAIM, ROUNDTRIP, TEST_COMMAND, write_suite

UNCOLLECTABLE = "import numpy_that_is_not_installed\n\n\ndef test_x():\n    pass\n"
FLAKY = ("from pathlib import Path\n\n\ndef test_sometimes():\n    seen = Path('flaky.count')\n"
         "    n = int(seen.read_text()) if seen.exists() else 0\n    seen.write_text(str(n + 1))\n"
         "    assert n % 2 == 0\n")


def one_line(proc) -> str:
    text = proc.stderr.strip()
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert len(text.splitlines()) == 1, text
    return text


def suite(workspace, script: dict | None = None, extra: str = "", **files: str):
    write_suite(workspace.path)
    for rel, text in files.items():
        (workspace.path / "tests" / rel).write_text(text)
    return workspace.configure(script or {"default": [CLAIM]}, test_command=TEST_COMMAND, max_shifts=1, pushbacks=1,
                               extra=extra)


def runs(ws) -> list:
    return sorted((ws.path / ".nightshift" / "runs").glob("*"))


def test_a_suite_that_fails_to_collect_at_the_start_starts_no_run(workspace):
    ws = suite(workspace, **{"test_bad.py": UNCOLLECTABLE})
    checked = nightshift("check", str(ws.path), timeout=120)
    assert checked.returncode == 1
    assert ("FAIL  tests        the test suite fails to collect: tests/test_bad.py: ModuleNotFoundError: No module "
            "named 'numpy_that_is_not_installed'") in checked.stdout, checked.stdout
    started = nightshift("run", "--foreground", cwd=ws.path, timeout=120)
    assert started.returncode != 0 and not runs(ws)
    assert "the preflight found 1 problem(s)" in one_line(started)
    # --no-check: the run takes the starting set itself, and does not start either (one line, no shift)
    unchecked = nightshift("run", "--foreground", "--no-check", cwd=ws.path, timeout=120)
    assert unchecked.returncode == 14, unchecked.stdout + unchecked.stderr
    assert "Traceback" not in unchecked.stdout + unchecked.stderr
    [run_dir] = runs(ws)
    from nightshift.supervisor.run.events import read_events
    types = [e["type"] for e in read_events(run_dir / "events.jsonl").events]
    assert "shift.started" not in types and "tests.baseline" not in types
    from nightshift.supervisor.run.state import load_state
    state = load_state(run_dir)[0]
    assert state["outcome"] == "failed"
    assert state["finish_reason"].startswith("the test suite fails to collect: tests/test_bad.py: ModuleNotFoundError")
    assert "\n" not in state["finish_reason"]


def test_without_per_test_results_the_ratchet_counts_totals_and_a_drop_is_a_regression(workspace):
    ws = suite(workspace, {"s1t1": [BREAK, CLAIM]}, extra="junit = false\n")
    checked = nightshift("check", str(ws.path), timeout=120)
    assert ("tests        6 pass now by the runner's own count; per-test results not readable, so the ratchet can "
            "only count totals: fewer passing tests at a verdict is a regression") in checked.stdout, checked.stdout
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    baseline = next(e["data"] for e in ws.events(run) if e["type"] == "tests.baseline")
    assert not baseline["per_test"] and baseline["passed_total"] == 6
    first = next(e["data"] for e in ws.events(run) if e["type"] == "verify.finished")
    tests = next(c for c in first["checks"] if c["name"] == "tests")
    assert not tests["passed"] and tests["summary"] == "tests: exit status 1, 5 passed (totals only), regressed"
    assert tests["lines"][0] == ("fewer tests pass: 5 now, 6 before (per-test results are not readable, so the "
                                 "ratchet counts totals: a drop is a regression)")


def test_a_flaky_test_is_left_out_and_named_by_check_the_first_event_and_the_report(workspace):
    ws = suite(workspace, **{"test_flaky.py": FLAKY})
    (ws.path / ".gitignore").write_text("flaky.count\n")
    checked = nightshift("check", str(ws.path), timeout=120)
    assert ("flaky (outcome differed between two runs, left out of the ratchet): tests/test_flaky.py::test_sometimes; "
            "ran twice") in checked.stdout, checked.stdout
    (ws.path / "flaky.count").unlink(missing_ok=True)  # check ran it in its own tree (the verdicts' clean checkout)
    started = nightshift("run", "--foreground", cwd=ws.path, timeout=200)
    [run_dir] = runs(ws)
    from nightshift.supervisor.run.events import read_events
    events = read_events(run_dir / "events.jsonl").events
    baseline = next(e for e in events if e["type"] == "tests.baseline")
    assert [e["type"] for e in events[:5]] == ["run.created", "workspace.recorded", "git.guarded",
                                               "preflight.finished", "tests.baseline"], [e["type"] for e in events[:5]]
    assert baseline["data"]["flaky"] == ["tests/test_flaky.py::test_sometimes"]
    assert set(baseline["data"]["passing"]) == BASELINE and baseline["data"]["source"] == "preflight"
    report = nightshift("report", run_dir.name, cwd=ws.path)
    assert report.returncode == 0, report.stderr + started.stdout
    page = (run_dir / "report.html").read_text()
    assert "flaky, left out: tests/test_flaky.py::test_sometimes" in page


def test_release_refuses_what_it_cannot_do_in_one_line(workspace):
    ws = suite(workspace, {"s1t1": [BREAK, CLAIM]})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0  # held: budget spent
    wrong = nightshift("release", run.run_id, "tests/test_io.py::test_rondtrip", "--why", "renamed", cwd=ws.path)
    assert wrong.returncode == 2
    assert f"holds no test 'tests/test_io.py::test_rondtrip'; did you mean {ROUNDTRIP}?" in one_line(wrong)
    blank = nightshift("release", run.run_id, ROUNDTRIP, "--why", "  ", cwd=ws.path)
    assert blank.returncode == 2 and "say why the test may go" in one_line(blank)
    missing = nightshift("release", run.run_id, ROUNDTRIP, cwd=ws.path)
    assert missing.returncode == 2 and "--why" in missing.stderr and "Traceback" not in missing.stderr
    inside = nightshift("release", run.run_id, ROUNDTRIP, "--why", "x", cwd=ws.path,
                        env={"NIGHTSHIFT_RUN_DIR": str(run.root)})
    assert inside.returncode == 2 and "is for a person, not for the agent's turn" in one_line(inside)
    unknown = nightshift("release", "no-such-run", ROUNDTRIP, "--why", "x", cwd=ws.path)
    assert unknown.returncode == 2 and "no-such-run" in one_line(unknown)
    stopped = nightshift("stop", run.run_id, cwd=ws.path)
    assert stopped.returncode in (0, 3)
    from nightshift.supervisor.run.events import EventLog
    from nightshift.supervisor.run.state import load_state
    log = EventLog(run.events, last_seq=load_state(run.root)[0]["seq"])
    log.append("run.finished", None, outcome="stopped", reason="stopped by the user")
    log.close()
    finished = nightshift("release", run.run_id, ROUNDTRIP, "--why", "x", cwd=ws.path)
    assert finished.returncode == 2 and "has already finished" in one_line(finished)
    assert "test.released" not in ws.types(run)


def test_the_agent_cannot_release_a_test_even_with_its_turns_variables_unset(workspace):
    release = (f"R=$(basename $NIGHTSHIFT_RUN_DIR); env -u NIGHTSHIFT_RUN_DIR -u NIGHTSHIFT_NAMESPACE {sys.executable} "
               f"-m nightshift.supervisor.cli.main release $R tests/test_io.py --why 'it was slow' > release.out 2>&1; "
               f"{sys.executable} -m nightshift.supervisor.cli.main release $R tests/test_io.py --why 'slow' > asked.out 2>&1")
    ws = suite(workspace, {"s1t1": [BREAK, ["shell", release], CLAIM]})
    run = ws.create_run()
    assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) != 0
    assert "test.released" not in ws.types(run)
    said = (ws.path / "release.out").read_text()
    assert f"cannot write run {run.run_id}'s inbox" in said and "is for a person" in said, said
    assert "is for a person, not for the agent's turn" in (ws.path / "asked.out").read_text()
    first = next(e["data"] for e in ws.events(run) if e["type"] == "verify.finished")
    tests = next(c for c in first["checks"] if c["name"] == "tests")
    assert tests["lines"][0].startswith(f"failed: {ROUNDTRIP} (passed at the start")
