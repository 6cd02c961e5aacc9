"""Scripts wait for the answer: `nightshift wait` and `run --foreground` exit 0 only when verified done, with
distinct codes for blocked, budget spent, breaker, stopped and failed; `status` ends with "can I trust this?".
Real supervisors (detached in tmux), real git, the scripted command agent."""
from __future__ import annotations

import pytest

from nightshift.supervisor.cli.watch import outcome as outcome
from nightshift.supervisor.run.events import EventLog
from nightshift.supervisor.run.state import apply, empty_state
from tests.fixtures_core import nightshift, workspace, wait_for  # noqa: F401

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def fold(*events: tuple) -> dict:
    state = empty_state()
    for seq, (kind, data) in enumerate(events, 1):
        apply(state, {"seq": seq, "ts": "2026-11-23T00:00:00.000000Z", "type": kind, "shift": 1, "data": data})
    return state


@pytest.mark.parametrize("events, code", [
    ([("verify.finished", {"passed": True}), ("run.finished", {"outcome": "done"})], outcome.DONE),
    ([("verify.finished", {"passed": False}), ("run.finished", {"outcome": "done"})], outcome.FAILED),
    ([("run.finished", {"outcome": "failed"})], outcome.FAILED),
    ([("run.finished", {"outcome": "stopped"})], outcome.STOPPED),
    ([("run.paused", {"reason": "the agent is blocked: no data", "kind": "blocked"})], outcome.BLOCKED),
    ([("run.paused", {"reason": "budget spent: max_cost_usd", "kind": "budget"})], outcome.BUDGET),
    ([("run.paused", {"reason": "breaker: 4 stops", "kind": "breaker"})], outcome.BREAKER),
    ([("run.paused", {"reason": "a dialog", "kind": "dialog"})], outcome.NEEDS_PERSON),
    ([("verify.finished", {"passed": False, "judge": {"available": False}}),
      ("run.paused", {"reason": "the judge is unavailable", "kind": "judge"})], outcome.NEEDS_PERSON),
    ([("run.paused", {"reason": "budget spent: max_shifts = 3 (limit 3)"})], outcome.BUDGET),  # an older run
    ([("run.paused", {"reason": "paused by the user", "kind": "user"})], None),  # a person will resume it
    ([("run.paused", {"reason": "x", "kind": "breaker"}), ("run.resumed", {})], None),
    ([("shift.started", {})], None),
])
def test_each_outcome_has_its_own_code(events, code):
    assert outcome.outcome_code(fold(*events)) == code
    assert len({outcome.DONE, outcome.BLOCKED, outcome.BUDGET, outcome.BREAKER, outcome.STOPPED,
                outcome.FAILED}) == 6


def run_id_from(stdout: str) -> str:
    return stdout.split()[1]  # "run <id> created in ..."


def test_foreground_exits_0_only_when_verified_done(workspace):
    ws = workspace.configure({"s1t1": FIX}, backend="local")
    out = nightshift("run", str(ws.path), "--foreground", timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "verified done (exit 0)" in out.stdout


def test_wait_reports_blocked_then_stopped(workspace):
    ws = workspace.configure({"s1t1": [["claim", "blocked", "the reference file is missing"]]}, backend="local")
    started = nightshift("run", str(ws.path))
    assert started.returncode == 0, started.stderr
    run_id = run_id_from(started.stdout)
    waited = nightshift("wait", run_id, "--timeout", "150", timeout=180)
    assert waited.returncode == outcome.BLOCKED, waited.stdout + waited.stderr
    assert "the agent is blocked" in waited.stdout and "reference file is missing" in waited.stdout
    assert nightshift("stop", run_id).returncode == 0
    run_dir = next((ws.path / ".nightshift" / "runs").glob("*"))
    wait_for(lambda: '"run.finished"' in (run_dir / "events.jsonl").read_text(), timeout=60, what="the stop")
    waited = nightshift("wait", run_id, "--timeout", "150", timeout=180)
    assert waited.returncode == outcome.STOPPED, waited.stdout + waited.stderr


def test_wait_reports_the_breaker_and_the_budget(workspace):
    ws = workspace.configure({"default": []}, backend="local", breaker=1, max_shifts=5)
    run_id = run_id_from(nightshift("run", str(ws.path)).stdout)
    waited = nightshift("wait", run_id, "--timeout", "150", timeout=180)
    assert waited.returncode == outcome.BREAKER, waited.stdout + waited.stderr
    nightshift("stop", run_id)


def test_wait_reports_a_spent_budget(workspace):
    ws = workspace.configure({"default": []}, backend="local", pushbacks=0, max_shifts=1)
    run_id = run_id_from(nightshift("run", str(ws.path)).stdout)
    waited = nightshift("wait", run_id, "--timeout", "150", timeout=180)
    assert waited.returncode == outcome.BUDGET, waited.stdout + waited.stderr
    assert "budget spent" in waited.stdout
    nightshift("stop", run_id)


def test_wait_on_an_unknown_run_is_one_line():
    out = nightshift("wait", "no-such-run")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not found" in out.stderr
    assert "Traceback" not in out.stderr


def test_status_ends_with_can_i_trust_this(workspace):
    ws = workspace.configure({"s1t1": FIX}, backend="local")
    out = nightshift("run", str(ws.path), "--foreground", timeout=180)
    run_id = run_id_from(out.stdout)
    status = nightshift("status", run_id).stdout.strip().splitlines()
    assert status[-1].startswith("trust      yes: verified done at commit ")
    assert "judge did not run" in status[-1] and "no rule refused" in status[-1]
    # Another part of nightshift records its policy's refusals; status counts them.
    run_dir = next((ws.path / ".nightshift" / "runs").glob("*"))
    log = EventLog(run_dir / "events.jsonl")
    log.append("policy.denied", 1, rule="Bash(git push*)", reason="not allowed")
    log.append("policy.denied", 1, rule="Read(/ref/*)", reason="held out")
    log.close()
    last = nightshift("status", run_id).stdout.strip().splitlines()[-1]
    assert "2 actions refused by the policy" in last


def test_foreground_ends_with_the_pause_code_and_resume_continues_the_held_run(workspace):
    """`run --foreground` does not sit on a run held for a person: the breaker gives 12 at once, the run stays
    paused (not finished), and `resume --foreground` picks it up again."""
    ws = workspace.configure({"default": []}, backend="local", breaker=1, max_shifts=5)
    out = nightshift("run", str(ws.path), "--foreground", timeout=180)
    assert out.returncode == 12, out.stdout + out.stderr
    run_id = run_id_from(out.stdout)
    status = nightshift("status", run_id).stdout
    assert "[paused]" in status and "breaker" in status
    run_dir = next((ws.path / ".nightshift" / "runs").glob("*"))
    stops = (run_dir / "events.jsonl").read_text().count('"agent.stopped"')
    again = nightshift("resume", run_id, "--foreground", timeout=180)
    assert again.returncode == 12, again.stdout + again.stderr  # it worked again, then the breaker held it again
    assert (run_dir / "events.jsonl").read_text().count('"agent.stopped"') > stops


@pytest.mark.parametrize("hold", ["budget", "breaker"])
def test_a_held_run_has_no_supervisor_and_a_stop_waits_for_resume(workspace, hold):
    """README: a run held by its budget or breaker has no supervisor, so `stop` is queued (exit 3) until `resume`,
    whose new supervisor ends the run before anything else. A held run's supervisor once waited on for minutes and
    stop answered 0. (A run a person paused keeps its supervisor and answers at once: test_control.)"""
    from nightshift.supervisor.run.liveness import supervisor_status
    from nightshift.supervisor.run.paths import RunPaths
    limits = dict(max_shifts=1, pushbacks=0) if hold == "budget" else dict(breaker=1, max_shifts=5)
    ws = workspace.configure({"default": []}, backend="local", **limits)
    run_id = run_id_from(nightshift("run", str(ws.path)).stdout)
    run = RunPaths(next((ws.path / ".nightshift" / "runs").glob("*")))
    waited = nightshift("wait", run_id, "--timeout", "150", timeout=180)
    assert waited.returncode == {"budget": outcome.BUDGET, "breaker": outcome.BREAKER}[hold], waited.stdout
    wait_for(lambda: supervisor_status(run.supervisor).get("stopped"), timeout=60, what="the supervisor to end")
    assert not supervisor_status(run.supervisor)["alive"]
    assert "its supervisor ends here" in run.supervisor_log.read_text()
    shifts = (run.events).read_text().count('"shift.started"')
    stop = nightshift("stop", run_id)
    assert stop.returncode == 3, stop.stdout + stop.stderr
    assert "queued" in stop.stderr and "held" in stop.stderr and f"nightshift resume {run_id}" in stop.stderr
    assert "run.finished" not in run.events.read_text()
    assert nightshift("resume", run_id).returncode == 0
    waited = nightshift("wait", run_id, "--timeout", "150", timeout=180)
    assert waited.returncode == outcome.STOPPED, waited.stdout + waited.stderr
    assert run.events.read_text().count('"shift.started"') == shifts  # the stop came before any new turn
