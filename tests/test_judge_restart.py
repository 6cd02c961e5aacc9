"""The judge's clock and the breaker across a restart and a hold (the real Anthropic SDK against the fake model
API): a supervisor killed -9 while it waits for a judge that is down comes back with the deadline it had (from the
log), not a fresh `max_wait`; and a judge hold followed by `resume` does not count the same stop twice toward the
breaker."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from nightshift.supervisor.run.state import apply, empty_state, load_state
from nightshift.supervisor.shift.launcher import run_foreground
from tests.fake_anthropic import FakeAnthropic, overloaded, tool, tools
from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401
from tests.test_judge_held import FIX, api_env, judge_section, passing


def start(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nightshift.supervisor.cli.main", *args], env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_a_supervisor_restarted_during_a_judge_wait_keeps_its_deadline(workspace):
    ws = workspace.configure({"s1t1": FIX}, extra=judge_section("1h"))
    with FakeAnthropic(side_requests="script", fallback=overloaded()) as fake:
        first = start("run", str(ws.path), "--foreground", "--no-check", env=api_env(fake))
        try:
            run_dir = wait_for(lambda: next((ws.path / ".nightshift" / "runs").glob("*"), None), timeout=60,
                               what="the run")
            run = type("R", (), {"events": run_dir / "events.jsonl"})
            waits = lambda: [e["data"] for e in ws.events(run) if e["type"] == "judge.waiting"]  # noqa: E731
            wait_for(waits, timeout=90, what="the first judge wait")
            os.kill(first.pid, signal.SIGKILL)  # the supervisor dies mid-wait
            first.wait(timeout=30)
            deadline = waits()[0]["deadline"]
            second = start("resume", run_dir.name, "--foreground", env=api_env(fake))
            try:
                wait_for(lambda: [e for e in ws.events(run) if e["type"] == "supervisor.started"][1:]
                         and len(waits()) >= 2, timeout=90, what="the restarted supervisor's judge wait")
                assert {w["deadline"] for w in waits()} == {deadline}  # the same clock, not a fresh hour
                assert load_state(run_dir)[0]["judge_wait"]["deadline"] == deadline
                assert nightshift("stop", run_dir.name).returncode == 0
                second.wait(timeout=60)
            finally:
                if second.poll() is None:
                    second.kill()
        finally:
            if first.poll() is None:
                first.kill()
    state = load_state(run_dir)[0]
    assert state["outcome"] == "stopped" and not state["last_verdict"]["passed"]


def failing(ws) -> object:
    """The judge's verdict: every criterion fails (the agent changed nothing)."""
    verdict = passing(ws)
    findings = [{**f, "verdict": "FAIL", "fix": "do the work"} for f in verdict.blocks[0]["input"]["findings"]]
    return tools(tool("record_verdict", {"findings": findings}), input_tokens=2000, output_tokens=300)


def test_a_judge_hold_then_resume_counts_the_stop_once_toward_the_breaker(workspace, monkeypatch):
    """A stop with nothing changed is one stop without progress, however often it is verified: the hold counts it,
    the person's `resume` resets the breaker, and verifying the same stop again does not count it a second time."""
    (workspace.path / "check.txt").write_text("ok")  # the tests pass already: the judge is asked at the stop
    ws = workspace.configure({"s1t1": [["claim", "done", "nothing to do"]], "default": [["sleep", 60]]},
                             breaker=2, extra=judge_section("3s"))
    with FakeAnthropic(side_requests="script") as fake:  # malformed answers only: held after 3 s
        for key, value in api_env(fake).items():
            monkeypatch.setenv(key, value)
        run = ws.create_run()
        assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 1
    state = load_state(run.root)[0]
    assert state["pause_kind"] == "judge" and state["stale_stops"] == 1
    with FakeAnthropic([failing(ws)], side_requests="script") as fake:  # back, and it says the work is not done
        resumed = start("resume", run.run_id, "--foreground", env=api_env(fake))
        try:
            wait_for(lambda: "pushback.sent" in ws.types(run) or "breaker.tripped" in ws.types(run), timeout=120,
                     what="the decision after the resumed stop")
            assert nightshift("stop", run.run_id).returncode == 0
            resumed.wait(timeout=90)
        finally:
            if resumed.poll() is None:
                resumed.kill()
    types = ws.types(run)
    assert "breaker.tripped" not in types and "pushback.sent" in types, types
    assert types.count("verify.retried") == 1, types
    assert [e["data"]["stale"] for e in ws.events(run) if e["type"].startswith("commit.")][:2] == [True, True]
    # When it decided to push back: the breaker was reset by the person's `resume`, and the same stop verified again
    # is not a new stop without progress (it would have started the count again at one).
    state = empty_state()
    for event in ws.events(run):
        if event["type"] == "pushback.sent":
            break
        apply(state, event)
    assert state["stale_stops"] == 0, types
