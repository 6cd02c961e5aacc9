"""The fake Messages API against the real anthropic SDK: streaming and not, tools, errors, side requests."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import anthropic
import urllib.error
import urllib.request
import pytest

from tests.fake_anthropic import (FakeAnthropic, Turn, bash, error, overloaded, rate_limited, raw, server_error,
                                  text, tools, usage_limit, write)
from tests.fixtures_fakeapi import fake_anthropic  # noqa: F401  (fixture)

TOOLS = [{"name": "Write", "description": "write a file",
          "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"},
                                                           "content": {"type": "string"}}}},
         {"name": "Bash", "description": "run", "input_schema": {"type": "object",
                                                                 "properties": {"command": {"type": "string"}}}}]


def post(url: str, body: dict, method: str = "POST") -> tuple[int, dict, str]:
    """Raw HTTP (stdlib), for what the SDK's types would not send or would hide."""
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body else None, method=method,
                                 headers={"content-type": "application/json", "x-api-key": "dummy"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def client(fake: FakeAnthropic, **kw) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.url, api_key="sk-secret-test", **kw)


def ask(c: anthropic.Anthropic, prompt: str = "hi", tools_: list | None = TOOLS, **kw):
    extra = {"tools": tools_} if tools_ else {}
    return c.messages.create(model="claude-fake-1", max_tokens=100,
                             messages=[{"role": "user", "content": prompt}], **extra, **kw)


def test_text_reply_non_streaming_with_usage(fake_anthropic):
    fake_anthropic.push(text("hello there", input_tokens=11, output_tokens=7))
    msg = ask(client(fake_anthropic))
    assert msg.content[0].text == "hello there"
    assert msg.stop_reason == "end_turn"
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (11, 7)
    assert msg.model == "claude-fake-1"


def test_streaming_tool_use_then_text(fake_anthropic):
    fake_anthropic.push(tools(write("out/a.txt", "x = 1\n"), bash("ls -la"), text="running both",
                              output_tokens=42))
    c = client(fake_anthropic)
    with c.messages.stream(model="claude-fake-1", max_tokens=100, tools=TOOLS,
                           messages=[{"role": "user", "content": "go"}]) as stream:
        events = [e.type for e in stream]
        msg = stream.get_final_message()
    assert events[0] == "message_start" and "message_stop" in events
    assert [b.type for b in msg.content] == ["tool_use", "tool_use", "text"]
    assert msg.content[0].name == "Write"
    assert msg.content[0].input == {"file_path": "out/a.txt", "content": "x = 1\n"}
    assert msg.content[1].input["command"] == "ls -la"
    assert msg.content[2].text == "running both"
    assert msg.stop_reason == "tool_use"
    assert msg.usage.output_tokens == 42


def test_tool_use_non_streaming(fake_anthropic):
    fake_anthropic.push(tools(bash("make -j4")))
    msg = ask(client(fake_anthropic))
    assert msg.stop_reason == "tool_use" and msg.content[0].input["command"] == "make -j4"
    assert msg.content[0].id.startswith("toolu_")


def test_requests_are_recorded_without_secrets(fake_anthropic):
    fake_anthropic.push(text("a"))
    c = client(fake_anthropic)
    c.messages.create(model="m", max_tokens=5, tools=TOOLS, system="be brief", messages=[
        {"role": "user", "content": "first"}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "file written"}]}])
    rec = fake_anthropic.message_requests()[-1]
    # this SDK sends the key as x-api-key or as a Bearer token depending on its version
    assert "<redacted>" in (rec.headers.get("x-api-key"), rec.headers.get("authorization"))
    assert "sk-secret-test" not in json.dumps(rec.headers)
    assert rec.last_user_text() == "file written"
    assert rec.system_text == "be brief"
    assert rec.body["model"] == "m"


def test_side_request_without_tools_does_not_consume_script(fake_anthropic):
    fake_anthropic.push(text("scripted"))
    c = client(fake_anthropic)
    title = ask(c, "name this session", tools_=None)
    assert json.loads(title.content[0].text) == {"title": "Fake session"}
    assert fake_anthropic.remaining == 1
    assert ask(c).content[0].text == "scripted"
    assert [r.kind for r in fake_anthropic.message_requests(None)] == ["side", "script"]


def test_side_requests_script_mode_consumes_script():
    with FakeAnthropic([text("judged")], side_requests="script") as fake:
        assert ask(client(fake), tools_=None).content[0].text == "judged"
        assert fake.remaining == 0


def test_role_system_message_is_accepted(fake_anthropic):
    # Claude Code sends a message with role "system"; the fake must not reject it (raw HTTP: the SDK types forbid it).
    fake_anthropic.push(text("fine"))
    body = {"model": "m", "max_tokens": 5, "tools": TOOLS, "messages": [
        {"role": "user", "content": "a"}, {"role": "system", "content": "Available agent types"}]}
    status, _, reply_text = post(f"{fake_anthropic.url}/v1/messages?beta=true", body)
    assert status == 200 and json.loads(reply_text)["content"][0]["text"] == "fine"


def test_529_then_success_is_retried_by_the_sdk(fake_anthropic):
    fake_anthropic.push(overloaded(), server_error(), text("recovered"))
    msg = ask(client(fake_anthropic, max_retries=3))
    assert msg.content[0].text == "recovered"
    assert len(fake_anthropic.message_requests()) == 3


@pytest.mark.parametrize("turn, exc, etype", [
    (overloaded(), anthropic.InternalServerError, "overloaded_error"),
    (rate_limited(retry_after=0), anthropic.RateLimitError, "rate_limit_error"),
    (error(404, message="model: nope"), anthropic.NotFoundError, "not_found_error"),
    (error(400, message="bad"), anthropic.BadRequestError, "invalid_request_error"),
])
def test_errors_reach_the_sdk_as_typed_exceptions(fake_anthropic, turn, exc, etype):
    fake_anthropic.push(turn)
    with pytest.raises(exc) as info:
        ask(client(fake_anthropic, max_retries=0))
    assert info.value.body["error"]["type"] == etype


def test_rate_limit_carries_retry_after(fake_anthropic):
    fake_anthropic.push(rate_limited(retry_after=7))
    status, headers, _ = post(f"{fake_anthropic.url}/v1/messages", {
        "model": "m", "max_tokens": 1, "tools": TOOLS, "messages": [{"role": "user", "content": "x"}]})
    assert status == 429 and headers["retry-after"] == "7"


def test_error_while_streaming(fake_anthropic):
    fake_anthropic.push(overloaded())
    with pytest.raises(anthropic.InternalServerError):
        with client(fake_anthropic, max_retries=0).messages.stream(
                model="m", max_tokens=5, tools=TOOLS, messages=[{"role": "user", "content": "x"}]) as s:
            s.get_final_message()


def test_delay_makes_the_client_time_out(fake_anthropic):
    fake_anthropic.push(text("too late", delay=5), text("on time"))
    c = client(fake_anthropic, max_retries=0, timeout=0.3)
    with pytest.raises(anthropic.APITimeoutError):
        ask(c)
    assert ask(c).content[0].text == "on time"


def test_usage_limit_text_and_error(fake_anthropic):
    fake_anthropic.push(usage_limit(1_900_000_000), usage_limit(1_900_000_000, as_error=True))
    c = client(fake_anthropic, max_retries=0)
    assert ask(c).content[0].text == "Claude AI usage limit reached|1900000000"
    with pytest.raises(anthropic.RateLimitError) as info:
        ask(c)
    assert info.value.response.headers["anthropic-ratelimit-unified-reset"] == "1900000000"
    assert info.value.response.headers["anthropic-ratelimit-unified-status"] == "rejected"


def test_match_waits_for_the_right_request(fake_anthropic):
    fake_anthropic.push(text("fixed it", match="Stop hook feedback"))
    c = client(fake_anthropic)
    assert "script exhausted" in ask(c, "unrelated").content[0].text
    assert fake_anthropic.remaining == 1
    assert ask(c, "Stop hook feedback:\nTT off by 3%").content[0].text == "fixed it"
    assert fake_anthropic.remaining == 0


def test_known_models_refuses_others():
    with FakeAnthropic([text("x")], known_models={"claude-ok"}) as fake:
        with pytest.raises(anthropic.NotFoundError):
            ask(client(fake, max_retries=0))
        assert fake.remaining == 1


def test_raw_body_is_sent_as_is(fake_anthropic):
    fake_anthropic.push(raw("not json at all"))
    _, _, body = post(f"{fake_anthropic.url}/v1/messages", {
        "model": "m", "max_tokens": 1, "tools": TOOLS, "messages": [{"role": "user", "content": "x"}]})
    assert body == "not json at all"


def test_head_root_and_count_tokens(fake_anthropic):
    assert post(fake_anthropic.url + "/", {}, method="HEAD")[0] == 200
    count = client(fake_anthropic).messages.count_tokens(model="m", messages=[{"role": "user", "content": "hi"}])
    assert count.input_tokens >= 1


def test_turn_from_dict_covers_every_kind():
    turns = [Turn.from_dict(d) for d in (
        {"text": "hi", "output_tokens": 3}, {"error": 529}, {"usage_limit": 5},
        {"tools": [{"name": "Bash", "input": {"command": "ls"}}], "text": "t", "match": "go"},
        {"raw": "x", "status": 502})]
    assert turns[0].blocks[0]["text"] == "hi" and turns[0].output_tokens == 3
    assert (turns[1].status, turns[1].error_type) == (529, "overloaded_error")
    assert turns[2].blocks[0]["text"].endswith("|5")
    assert turns[3].stop_reason == "tool_use" and turns[3].match == "go"
    assert (turns[4].raw_body, turns[4].status) == ("x", 502)


def test_idle_timeout_stops_a_leaked_server():
    fake = FakeAnthropic(idle_timeout=0.2).start()
    assert fake.stopped.wait(10), "the idle server did not stop"
    with pytest.raises(OSError):
        post(fake.url + "/", {}, method="HEAD")


def test_standalone_process_serves_a_json_script(tmp_path):
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"text": "from a file"}]))
    port_file = tmp_path / "port"
    proc = subprocess.Popen([sys.executable, "-m", "tests.fake_anthropic", "--script", str(script),
                             "--port-file", str(port_file), "--idle-timeout", "60"], stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        fake_url = f"http://127.0.0.1:{port_file.read_text()}"
        c = anthropic.Anthropic(base_url=fake_url, api_key="dummy")
        msg = c.messages.create(model="m", max_tokens=5, tools=TOOLS, messages=[{"role": "user", "content": "x"}])
        assert msg.content[0].text == "from a file"
    finally:
        proc.terminate()
        proc.wait(10)
