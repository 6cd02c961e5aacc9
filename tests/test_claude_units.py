"""Claude adapter pieces that need no model: trust, dialogs, records of a turn, limits, doctor."""
from __future__ import annotations

import json
import time

import pytest

from nightshift.supervisor.agents.claude import ClaudeAgent, trust_workspace
from nightshift.supervisor.agents.claude_records import limit_wait, read_stream, read_transcript
from tests.fixtures_core import nightshift


def test_trust_is_recorded_keeping_the_rest_of_the_config(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    (tmp_path / ".claude.json").write_text(json.dumps({"theme": "dark", "projects": {"/other": {"x": 1}}}))
    message = trust_workspace(tmp_path / "ws")
    data = json.loads((tmp_path / ".claude.json").read_text())
    assert data["theme"] == "dark" and data["projects"]["/other"] == {"x": 1}
    assert data["projects"][str((tmp_path / "ws").resolve())]["hasTrustDialogAccepted"] is True
    assert "recorded" in message
    (tmp_path / ".claude.json").write_text("{broken")
    assert "not valid JSON" in trust_workspace(tmp_path / "ws")


def test_init_trust_asks_first(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    (tmp_path / "cfg").mkdir()
    out = nightshift("init", str(tmp_path / "ws0"), "--trust", input="n\n")
    assert out.returncode == 2  # no such folder yet
    (tmp_path / "ws").mkdir()
    nightshift("init", str(tmp_path / "ws"), "--trust", input="n\n")
    assert not (tmp_path / "cfg" / ".claude.json").exists()
    nightshift("init", str(tmp_path / "ws"), "--trust", "--force", input="y\n")
    assert json.loads((tmp_path / "cfg" / ".claude.json").read_text())["projects"]


def test_first_run_dialogs_are_named_with_the_fix():
    agent = ClaudeAgent("interactive")
    screen = "Accessing workspace:\n /w\n Is this a project you created or one you trust?\n ❯ 1. Yes"
    assert "nightshift init --trust" in agent.check_screen(screen)
    assert "ANTHROPIC_AUTH_TOKEN" in agent.check_screen("Detected a custom API key... Do you want to use this API key?")
    assert agent.check_screen("✻ Cooked for 3s\n────\n❯ \n────\n ? for shortcuts") is None
    assert agent.is_idle("────\n❯ \n────\n ? for shortcuts")
    assert not agent.is_idle("✢ Churning… (5s)\n❯ \n esc to interrupt")


def test_limits_become_waits():
    now = 1_700_000_000.0
    assert limit_wait("Claude AI usage limit reached|1700000500", now) == 1700000500.0
    assert limit_wait("API Error: 529 overloaded_error", now) == now + 60
    assert limit_wait("429 rate_limit_error", now) == now + 60
    assert limit_wait("all good", now) is None


def test_stream_records_truncated_or_erroring(tmp_path):
    path = tmp_path / "stream.jsonl"
    path.write_text('{"type":"system","session_id":"s1"}\n{"type":"assistant","message":{"usage":{"input_tokens":7')
    stop = read_stream(path, 137)
    assert stop.session_id == "s1" and "no result line" in stop.error and stop.exit_code == 137
    path.write_text(json.dumps({"type": "result", "subtype": "success", "is_error": True, "api_error_status": 529,
                                "result": "API Error: Repeated 529 Overloaded errors", "session_id": "s2",
                                "total_cost_usd": 0}) + "\n")
    stop = read_stream(path, 1)
    assert stop.error.startswith("API Error") and stop.wait_until > time.time()
    assert read_stream(tmp_path / "missing.jsonl", None).error


def test_transcript_cost_counts_each_message_once(tmp_path):
    path = tmp_path / "t.jsonl"
    usage = {"input_tokens": 1000, "output_tokens": 100}
    lines = [{"type": "assistant", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": usage,
                                                "content": [{"type": "text", "text": "part"}]}},
             {"type": "assistant", "message": {"id": "m1", "model": "claude-sonnet-4-5", "usage": usage,
                                                "content": [{"type": "tool_use"}]}},
             {"type": "user", "message": {"content": "x"}}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n{torn")
    cost, totals, context, last = read_transcript(path, lambda u, m: (u["input_tokens"] * 3 + u["output_tokens"] * 15) / 1e6)
    assert totals["input_tokens"] == 1000 and context == 1000 and last == "part"
    assert abs(cost - 0.0045) < 1e-12
    assert read_transcript(tmp_path / "gone.jsonl", lambda u, m: 0.0)[0] == 0.0


def test_doctor_names_what_is_missing_without_secrets(monkeypatch, tmp_path):
    out = nightshift("doctor", str(tmp_path), env={"ANTHROPIC_API_KEY": "sk-secret-value"})
    assert "ANTHROPIC_API_KEY set (value not shown)" in out.stdout and "sk-secret-value" not in out.stdout
    assert "workspace filesystem" in out.stdout and "claude" in out.stdout


@pytest.mark.parametrize("given", ["nothing", "a login", "a token"])
def test_doctor_and_the_preflight_say_the_same_about_credentials(given, tmp_path, monkeypatch):
    from nightshift.supervisor.agents.credentials import CREDENTIAL_VARS
    from nightshift.supervisor.cli.preflight.agent import credentials_line

    config = tmp_path / "claude-config"
    config.mkdir()
    for name in CREDENTIAL_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    if given == "a login":
        (config / ".credentials.json").write_text("{}")
    if given == "a token":
        monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "oauth-secret-value")
    expected = credentials_line()  # the preflight's line, in this process with this environment
    out = nightshift("doctor", str(tmp_path))  # doctor's, in a process of its own with the same environment
    row = next(line for line in out.stdout.splitlines() if line.split()[1:2] == ["credentials"])
    assert row.startswith("ok " if expected.status == "ok" else "MISSING"), row
    assert row.endswith(expected.text), (row, expected.text)
    assert (expected.status == "ok") == (given != "nothing") and "oauth-secret-value" not in out.stdout
