"""Which hook decides a run's tool calls (issue 30): HTTP where the CLI, the namespace and the helper can serve it,
else the command hook, said by `doctor` and `check`; and the HTTP hook's settings fail closed before (or without)
the helper: the placeholder URL refuses the call with the real CLI."""
from __future__ import annotations

import json
import os
import subprocess

from nightshift.supervisor.agents import claude_version
from nightshift.supervisor.agents.claude_settings import HTTP_PLACEHOLDER, claude_settings
from nightshift.supervisor.cli.doctor import boundary_checks
from nightshift.supervisor.cli.init.workspace import InitOptions, init_workspace
from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.shift.pretool_transport import pretool_transport
from tests.fake_anthropic import FakeAnthropic, bash, text, tools
from tests.fixtures_core import require_tool
from tests.fixtures_namespace import need_namespace
from tests.fixtures_pretool import tool_results

POLICY = {"workspace": "/w", "plan": "/w/CLAUDE.md", "writable": ["/tmp"], "protect": [], "hide": [],
          "network": True, "sandbox": False, "run_files": []}


def _workspace(tmp_path, policy: str = "", claude_bin: str = ""):
    ws = tmp_path / "ws"
    ws.mkdir()
    init_workspace(ws, InitOptions(goal="g", agent="claude"))
    toml = ws / "nightshift.toml"
    text_ = toml.read_text()
    if policy:
        text_ = text_.replace('sandbox = "auto" ', policy, 1)
    if claude_bin:
        text_ = text_.replace("[agent]\n", f"[agent]\nclaude_bin = {json.dumps(claude_bin)}\n", 1)
    toml.write_text(text_)
    return ws


def _old_cli(tmp_path, version: str) -> str:
    """A stand-in that answers `--version` as an older Claude Code would (the gate reads nothing else)."""
    path = tmp_path / "old-claude"
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    os.chmod(path, 0o755)
    return str(path)


def test_init_defaults_decide_over_http_and_doctor_says_so(tmp_path):
    require_tool("claude")
    need_namespace()
    ws = _workspace(tmp_path)
    transport = pretool_transport(load_config(ws))
    assert transport.kind == "http", transport
    [row] = [r for r in boundary_checks(ws) if r[1] == "tool-call hook"]
    assert "HTTP hook" in row[2] and "fails closed" in row[2]


def test_an_older_cli_gets_the_command_hook_with_the_reason(tmp_path):
    need_namespace()
    ws = _workspace(tmp_path, claude_bin=_old_cli(tmp_path, "2.1.200"))
    transport = pretool_transport(load_config(ws))
    assert transport.kind == "command"
    assert "2.1.200 is older than 2.1.295" in transport.why and "npm install" in transport.why
    [row] = [r for r in boundary_checks(ws) if r[1] == "tool-call hook"]
    assert "command hook" in row[2] and "2.1.200" in row[2]
    settings = claude_settings(POLICY, None, [], [], pretool=transport.kind)
    [hook] = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert hook["type"] == "command" and "onFailure" not in hook  # an old CLI may drop a settings file it cannot read
    assert "allowedHttpHookUrls" not in settings


def test_an_unreadable_cli_version_and_no_namespace_get_the_command_hook(tmp_path):
    broken = tmp_path / "broken-claude"
    broken.write_text("#!/bin/sh\nexit 3\n")
    os.chmod(broken, 0o755)
    assert "could not be read" in claude_version.http_hook_problem(str(broken))
    ws = _workspace(tmp_path, policy='sandbox = "off"   ')
    transport = pretool_transport(load_config(ws))
    assert transport.kind == "command" and "no namespace" in transport.why and "sandbox = \"off\"" in transport.why


def test_the_stop_hook_stays_a_command_hook_and_pretool_fails_closed(tmp_path):
    settings = claude_settings(POLICY, 120, [], [], pretool="http")
    [stop] = settings["hooks"]["Stop"][0]["hooks"]
    assert stop["type"] == "command"  # Claude Code ignores onFailure on Stop: an unreachable HTTP Stop hook lets go
    [hook] = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert hook == {"type": "http", "url": HTTP_PLACEHOLDER, "timeout": 30, "onFailure": "block"}
    assert settings["allowedHttpHookUrls"] == [HTTP_PLACEHOLDER]


def test_without_its_helper_the_http_hook_refuses_the_call(tmp_path):
    """The settings as nightshift writes them, no helper to point them at itself: the real CLI refuses the call."""
    require_tool("claude")
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(claude_settings({**POLICY, "workspace": str(ws)}, None, [], [], pretool="http")))
    with FakeAnthropic([tools(bash("touch made")), text("done")]) as fake:
        out = subprocess.run(["claude", "-p", "go", "--output-format", "json", "--permission-mode", "dontAsk",
                              "--settings", str(settings)], cwd=ws, capture_output=True, text=True, timeout=120,
                             env={**os.environ, **fake.env(), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
        results = tool_results(fake)
    assert out.returncode == 0, out.stderr[-2000:]
    assert not (ws / "made").exists()
    assert results[0]["error"] and "127.0.0.1:1" in results[0]["text"]


def test_check_names_the_hook_a_run_will_use(tmp_path):
    """`nightshift check`'s boundary lines: ok for HTTP, a note with the reason for the command hook."""
    require_tool("claude")
    need_namespace()
    from nightshift.supervisor.cli.preflight.boundary import boundary_lines
    from nightshift.supervisor.cli.preflight.lines import PreflightContext

    ws = _workspace(tmp_path)
    ctx = PreflightContext(workspace=ws, out_dir=tmp_path / "out", config=load_config(ws))
    lines = [(line.status, line.text) for line in boundary_lines(ctx) if "tool calls are decided" in line.text]
    assert lines == [("ok", pretool_transport(ctx.config).line())], lines
    old = tmp_path / "old"
    old.mkdir()
    ws = _workspace(old, claude_bin=_old_cli(old, "2.1.100"))
    ctx = PreflightContext(workspace=ws, out_dir=old / "out", config=load_config(ws))
    [(status, detail)] = [(line.status, line.text) for line in boundary_lines(ctx)
                          if "tool calls are decided" in line.text]
    assert status == "note" and "command hook" in detail and "2.1.100 is older than 2.1.295" in detail
