"""A judge that is down never ends a run as verified done: the real Anthropic SDK against the fake model API
answering malformed or overloaded. The judge is asked again with backoff up to `[judge] max_wait`; then the run is
held for a person (paused, notified, `wait` exits with the held code, `status` and the report say so). A judge that
comes back in time lets an honest run end done; a person's `resume` after a hold asks it afresh."""
from __future__ import annotations

import json
import threading

from nightshift.supervisor.cli.watch import outcome as outcome
from nightshift.supervisor.cli.report.verb import build_report
from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.run.state import load_state
from nightshift.supervisor.shift.launcher import run_foreground
from nightshift.supervisor.verify.judge.call import gather_inputs, rubric_for
from tests.fake_anthropic import FakeAnthropic, overloaded, text, tool, tools
from tests.fixtures_core import nightshift, wait_for, workspace  # noqa: F401
from tests.test_bad_input import one_line_error

FIX = [["write", "check.txt", "ok"], ["claim", "done", "fixed"]]


def judge_section(max_wait: str) -> str:
    return (f'[judge]\nvia = "api"\nmodel = "claude-sonnet-4-6"\nmax_retries = 0\ntimeout = 30\n'
            f'max_wait = "{max_wait}"\n')


def passing(ws) -> object:
    config = load_config(ws.path)
    n = len(rubric_for(config.judge, gather_inputs(ws.path, config.judge, None, None, "", config.goal)))
    items = [{"id": f"C{i}", "verdict": "PASS", "evidence": f"evidence {i}", "fix": ""} for i in range(1, n + 1)]
    return tools(tool("record_verdict", {"findings": items}), input_tokens=2000, output_tokens=300)


def api_env(fake: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-test"}


def test_a_judge_down_past_max_wait_holds_the_run_and_resume_asks_it_again(workspace, monkeypatch, tmp_path):
    told = tmp_path / "told.txt"
    notify = f'[notify]\ncommand = "echo \\"$NIGHTSHIFT_EVENT $NIGHTSHIFT_MESSAGE\\" >> {told}"\n'
    ws = workspace.configure({"s1t1": FIX}, extra=judge_section("3s") + notify)
    # No script: every answer is the fallback text, a verdict without its tool call (malformed), for ever.
    with FakeAnthropic(side_requests="script") as fake:
        for key, value in api_env(fake).items():
            monkeypatch.setenv(key, value)
        run = ws.create_run()
        assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 1  # held, not done
        asked = len(fake.message_requests(kind=None))
    types = ws.types(run)
    assert "run.finished" not in types and types.count("judge.waiting") >= 1
    assert asked >= 2 * (types.count("judge.waiting") + 1)  # each question was malformed twice
    state = load_state(run.root)[0]
    assert state["paused"] and state["pause_kind"] == "judge" and "judge is unavailable" in state["pause_reason"]
    assert state["last_verdict"]["passed"] is False  # the other checks passed; without the judge it is no pass
    assert "paused" in told.read_text() and "judge is unavailable" in told.read_text()
    waited = nightshift("wait", run.run_id, timeout=60)
    assert waited.returncode == outcome.NEEDS_PERSON, waited.stdout + waited.stderr
    assert "waiting for a person" in waited.stdout and "judge is unavailable" in waited.stdout
    status = nightshift("status", run.run_id).stdout
    assert "[paused]" in status and "held for a person" in status.splitlines()[-1]
    assert "held for a person: the judge was down" in build_report(run.root)[0].read_text()
    # A person resumes once the judge is back: the same stop is judged afresh and the honest run ends done.
    with FakeAnthropic([passing(ws)], side_requests="script") as fake:
        again = nightshift("resume", run.run_id, "--foreground", env=api_env(fake), timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "verify.retried" in ws.types(run) and load_state(run.root)[0]["outcome"] == "done"
    assert nightshift("wait", run.run_id).returncode == outcome.DONE


def test_a_judge_back_within_max_wait_lets_an_honest_run_end_done(workspace, monkeypatch):
    ws = workspace.configure({"s1t1": FIX}, extra=judge_section("40s"))
    # overloaded (no SDK retries), then malformed twice, then a real verdict: three questions, two waits.
    script = [overloaded(), text("looks fine"), text("still fine"), passing(ws)]
    with FakeAnthropic(script, side_requests="script") as fake:
        for key, value in api_env(fake).items():
            monkeypatch.setenv(key, value)
        run = ws.create_run()
        assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 0
        assert fake.remaining == 0
    events = ws.events(run)
    waits = [e["data"] for e in events if e["type"] == "judge.waiting"]
    assert [w["tries"] for w in waits] == [1, 2] and "overloaded" in waits[0]["error"]
    assert "malformed twice" in waits[1]["error"]
    assert waits[1]["until"] - waits[0]["until"] > 0  # backoff: the second wait is the longer
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    assert len(verdicts) == 1 and verdicts[0]["passed"] and verdicts[0]["judge"]["available"]
    assert "judge.unavailable" not in [e["type"] for e in events] and "run.paused" not in [e["type"] for e in events]


def test_a_max_wait_of_zero_is_one_line(workspace):
    toml = workspace.path / "nightshift.toml"
    toml.write_text(toml.read_text() + "\n[judge]\nmax_wait = 0\n")
    line = one_line_error(nightshift("run", str(workspace.path)), "judge.max_wait", "longer than 0")
    assert "nightshift.toml line" in line
    assert not (workspace.path / ".nightshift" / "runs").exists()  # nothing half-created


def test_stop_while_waiting_for_the_judge_stops(workspace, monkeypatch):
    """A person's `stop` is heard during the wait (the loop keeps reading its inbox), and nothing ends done."""
    ws = workspace.configure({"s1t1": FIX}, extra=judge_section("1h"))
    with FakeAnthropic(side_requests="script", fallback=overloaded()) as fake:
        for key, value in api_env(fake).items():
            monkeypatch.setenv(key, value)
        run = ws.create_run()
        stopper = threading.Thread(target=lambda: (wait_for(lambda: "judge.waiting" in ws.types(run), timeout=90,
                                                            what="the judge wait"),
                                                   nightshift("stop", run.run_id)), daemon=True)
        stopper.start()
        assert run_foreground(run, say=lambda _: None, leave_on_outcome=True) == 1
        stopper.join(timeout=60)
    state = load_state(run.root)[0]
    assert state["outcome"] == "stopped"
    assert json.dumps(state["last_verdict"]["judge"]).count('"available": false') == 1
