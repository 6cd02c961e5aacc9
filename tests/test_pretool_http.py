"""Tool calls decided over Claude Code's HTTP hook by the turn's resident helper (issue 30), with the real CLI against
the fake model inside the real namespace: allowed and refused calls, a Definition-of-done edit, a deny rule, with
the network on (the host's loopback, an ephemeral port) and off (the namespace's own loopback, the door handed out);
the helper killed mid-turn (the calls after it refused, an event's record, the next turn has a helper); and the
agent's own requests to the helper's port, which cannot change a rule or end it."""
from __future__ import annotations

import json
import os
import signal

import pytest

from tests.fake_anthropic import FakeAnthropic, bash, text, tool, tools, write
from tests.fixtures_core import require_tool, wait_for
from tests.fixtures_namespace import need_namespace
from tests.fixtures_pretool import Session, tool_results

DOD_EDIT = {"old_string": "## Definition of done\n", "new_string": "## Definition of done\n\n- [x] it is done\n"}


@pytest.fixture
def session_parts():
    require_tool("claude")
    need_namespace()


@pytest.mark.parametrize("network", [True, False], ids=["host-loopback", "namespace-loopback"])
def test_calls_are_allowed_and_refused_over_http(tmp_path, session_parts, network):
    s = Session(tmp_path, network=network, deny=("Bash(touch denied-by-rule.txt)",))
    ws = s.ws
    reference = (ws / "reference" / "cl.dat").read_text()
    script = [tools(bash("touch allowed.txt")),
              tools(write(str(ws / "reference" / "cl.dat"), "2 1.0\n")),
              tools(tool("Edit", {"file_path": str(ws / "CLAUDE.md"), **DOD_EDIT})),
              tools(bash("touch denied-by-rule.txt")),
              tools(bash("git commit --amend -m rewritten")),
              text("done")]
    with FakeAnthropic(script) as fake:
        turn = s.turn(fake)
        results = tool_results(fake)
    assert turn.out.returncode == 0, turn.out.stderr[-2000:]
    settings = json.loads((s.run.root / "claude-settings.json").read_text())
    [hook] = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert hook["type"] == "http" and hook["onFailure"] == "block"
    assert hook["url"].startswith("http://127.0.0.1:") and "/pretool/" in hook["url"]
    assert settings["allowedHttpHookUrls"] == [hook["url"]]
    assert (hook["url"].split(":")[2].split("/")[0] == "8120") is (not network)
    assert oct((s.run.root / "claude-settings.json").stat().st_mode & 0o777) == "0o600"

    assert (ws / "allowed.txt").exists() and not results[0]["error"]
    assert (ws / "reference" / "cl.dat").read_text() == reference
    assert results[1]["error"] and "nightshift policy (references)" in results[1]["text"]
    assert "- [x] it is done" not in (ws / "CLAUDE.md").read_text()
    assert results[2]["error"] and "definition_of_done" in results[2]["text"]
    assert not (ws / "denied-by-rule.txt").exists() and results[3]["error"]
    assert results[4]["error"] and "nightshift policy (history)" in results[4]["text"]
    records = s.refusals()
    assert [r["rule"] for r in records] == ["references", "definition_of_done", "history"]
    assert {r["decided_by"] for r in records} == {"helper"} and {r["shift"] for r in records} == {"1"}
    assert not turn.problems.exists()  # the helper lived through the turn
    assert not (turn.helper_folder / "d").exists()  # the handover happened once, before the agent started


def test_a_helper_killed_mid_turn_refuses_the_calls_after_and_the_next_turn_has_one(tmp_path, session_parts):
    s = Session(tmp_path)
    ws = s.ws
    script = [tools(bash("touch a; while [ ! -e go ]; do sleep 0.05; done")),
              tools(bash("touch b")),
              text("stopped")]
    with FakeAnthropic(script) as fake:
        turn = s.start(fake)
        try:
            wait_for(lambda: (ws / "a").exists(), 120, what="the first call to run")
            pid = int((turn.helper_folder / "pid").read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: not _alive(pid), 30, what="the helper to end")
            (ws / "go").touch()
            stdout, stderr = turn.proc.communicate(timeout=240)
        finally:
            if turn.proc.poll() is None:
                turn.proc.kill()
        results = tool_results(fake)
    assert turn.proc.returncode == 0, stderr[-2000:]
    assert not (ws / "b").exists()  # refused, never allowed
    assert results[1]["error"] and 'blocking because onFailure is "block"' in results[1]["text"]
    assert "ended before the turn did" in turn.problems.read_text()
    [event] = _supervisor_records(s)  # what the supervisor makes of it at the stop: an event, named in the push-back
    assert event["rule"] == "helper" and "refused" in event["message"] and event["tool"] == "hook"

    with FakeAnthropic([tools(bash("touch c")), tools(write(str(ws / "nightshift.toml"), "goal = 'x'\n")),
                        text("done")]) as fake:
        again = s.turn(fake)
        results = tool_results(fake)
    assert again.out.returncode == 0, again.out.stderr[-2000:]
    assert (ws / "c").exists() and not results[0]["error"]
    assert results[1]["error"] and "nightshift policy (config)" in results[1]["text"]
    assert s.refusals()[-1]["decided_by"] == "helper"


def test_a_policy_refreshed_mid_turn_holds_at_the_next_call(tmp_path, session_parts):
    """The supervisor rewrites policy.json when a test passes mid-session: the helper reads it again at the next
    call, so the newly protected file is refused at once."""
    s = Session(tmp_path)
    ws = s.ws
    (ws / "test_solver.py").write_text("def test_it():\n    assert True\n")
    script = [tools(bash("touch a; while [ ! -e go ]; do sleep 0.05; done")),
              tools(write(str(ws / "test_solver.py"), "def test_it():\n    pass\n")),
              text("done")]
    with FakeAnthropic(script) as fake:
        turn = s.start(fake)
        try:
            wait_for(lambda: (ws / "a").exists(), 120, what="the first call to run")
            from nightshift.supervisor.shift.policy import compile_policy, write_policy
            write_policy(s.run, compile_policy(s.run, s.config, {"test_solver.py::test_it"}, sandbox=False))
            (ws / "go").touch()
            _, stderr = turn.proc.communicate(timeout=240)
        finally:
            if turn.proc.poll() is None:
                turn.proc.kill()
        results = tool_results(fake)
    assert turn.proc.returncode == 0, stderr[-2000:]
    assert results[1]["error"] and "nightshift policy (tests)" in results[1]["text"], results
    assert "assert True" in (ws / "test_solver.py").read_text()
    assert s.refusals()[-1]["decided_by"] == "helper"


def _supervisor_records(s: Session) -> list[dict]:
    from nightshift.supervisor.agents import make_agent
    from nightshift.supervisor.shift.ledger import RunLedger
    from nightshift.supervisor.shift.turn_boundary import TurnBoundary

    ledger = RunLedger(s.run)
    ledger.open()
    try:
        TurnBoundary(ledger, s.config, make_agent("claude")).record_after_stop(1, s.turns)
    finally:
        ledger.close()
    events = [json.loads(line) for line in s.run.events.read_text().splitlines()]
    return [e["data"] for e in events if e["type"] == "policy.denied" and e["data"]["tool"] == "hook"]


def test_a_port_taken_inside_the_namespace_refuses_the_calls_with_an_event(tmp_path, session_parts):
    """Network off: something already holds the helper's port inside (here a process started before the door):
    the door says so, every call is refused (never allowed) and the supervisor records it."""
    s = Session(tmp_path, network=False)
    squat = ("python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 8120)); s.listen(); "
             "open('/tmp/squatting', 'w').close(); [c.close() for c, _ in iter(s.accept, None)]\" &\n"
             "until [ -e /tmp/squatting ]; do sleep 0.05; done\n")
    with FakeAnthropic([tools(bash("touch made")), text("done")]) as fake:
        turn = s.turn(fake, before=squat)
        results = tool_results(fake)
    assert turn.out.returncode == 0, turn.out.stderr[-2000:]
    assert "cannot be opened in the namespace" in turn.out.stderr
    assert not (turn.helper_folder / "d").exists()  # the handover window closed when the door said it failed
    assert not (s.ws / "made").exists() and results[0]["error"]
    [event] = _supervisor_records(s)
    assert "door could not open" in event["message"]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


AGENT_PROBE = r'''
import json, socket, urllib.request, urllib.error
url = json.load(open("{settings}"))["hooks"]["PreToolUse"][0]["hooks"][0]["url"]
base = url.rsplit("/pretool/", 1)[0]
found = {{}}
def ask(name, path, body=b"", method="POST", headers=None):
    req = urllib.request.Request(base + path, data=body if method == "POST" else None, method=method,
                                 headers=headers or {{}})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            found[name] = [r.status, r.read().decode()[:300]]
    except urllib.error.HTTPError as e:
        found[name] = [e.code, ""]
    except Exception as e:
        found[name] = ["error", str(e)[:200]]
key = url[len(base):]
ask("forged policy", key, json.dumps({{"policy": {{"protect": []}}, "tool_name": "Write",
    "tool_input": {{"file_path": "{ref}", "content": "x"}}}}).encode())
ask("shutdown", "/shutdown"); ask("rules", "/policy"); ask("delete", key, method="DELETE"); ask("get", key, method="GET")
ask("malformed", key, b"{{not json"); ask("not a call", key, b"[1, 2]")
s = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=10)
s.sendall(b"POST " + key.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n")
found["oversized"] = s.recv(4096).decode(errors="replace")[:400]
s.close()
try:
    d = socket.socket(socket.AF_UNIX); d.connect("/tmp/.pretool/d"); found["door"] = "connected"
except OSError as e:
    found["door"] = str(e)
json.dump(found, open("probe.json", "w"))
'''


@pytest.mark.parametrize("network", [True, False], ids=["host-loopback", "namespace-loopback"])
def test_the_agents_requests_to_the_helper_change_no_rule_and_do_not_end_it(tmp_path, session_parts, network):
    s = Session(tmp_path, network=network)
    ws = s.ws
    ref = ws / "reference" / "cl.dat"
    reference = ref.read_text()
    probe = AGENT_PROBE.format(settings=s.run.root / "claude-settings.json", ref=ref)
    (ws / "probe.py").write_text(probe)
    script = [tools(bash("python3 probe.py")), tools(write(str(ref), "2 1.0\n")), tools(bash("touch after.txt")),
              text("done")]
    with FakeAnthropic(script) as fake:
        turn = s.turn(fake)
        results = tool_results(fake)
    assert turn.out.returncode == 0, turn.out.stderr[-2000:]
    found = json.loads((ws / "probe.json").read_text())
    assert found["forged policy"][0] == 200 and "nightshift policy (references)" in found["forged policy"][1]
    assert found["shutdown"][0] == 404 and found["rules"][0] == 404
    assert found["delete"][0] == 405 and found["get"][0] == 405
    assert found["malformed"][0] == 200 and "deny" in found["malformed"][1] and "hook_input" in found["malformed"][1]
    assert "deny" in found["not a call"][1]
    assert "200" in found["oversized"] and "larger than nightshift reads" in found["oversized"]
    assert found["door"] != "connected"  # the handover happened once, before the agent started
    # The helper still decides, with the same rules: the reference stays refused, the shell still works.
    assert ref.read_text() == reference
    assert results[1]["error"] and "nightshift policy (references)" in results[1]["text"]
    assert (ws / "after.txt").exists() and not results[2]["error"]
    assert not turn.problems.exists()
    rules = [r["rule"] for r in s.refusals()]
    assert rules.count("hook_input") == 3 and rules[-1] == "references"
