"""Issue 35: the judge is on by default where it can run. `nightshift init` writes [judge] (at claims of done)
when a judge can be reached (an Anthropic key, or a Claude login with the CLI), says so in its summary, and says
plainly when none will run; `check` has a judge line; the report's trust line names a run without a judge. From
init defaults, the one false accept the oracle and tests cannot see (a "calibrated" constant hiding the bug) is
not done when the judge (the fake model) finds it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from nightshift.supervisor.config.schema import load_config
from nightshift.supervisor.shift.launcher import create_run, resolve_config, run_foreground
from nightshift.supervisor.verify.judge.call import gather_inputs, rubric_for
from tests.fake_anthropic import FakeAnthropic, tool, tools
from tests.fixtures_core import nightshift, require_tool

SECRET = "sk-ant-api03-never-written-anywhere"
NO_CREDENTIALS = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "CLAUDE_CODE_OAUTH_TOKEN": ""}


def _init(tmp_path, env: dict) -> tuple[subprocess.CompletedProcess, object]:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**NO_CREDENTIALS, "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude"), **env}
    out = nightshift("init", str(ws), "--goal", "make check.txt say ok", "--agent", "command",
                     "--test-command", 'test "$(cat check.txt)" = ok', env=env)
    assert out.returncode == 0, out.stderr
    return out, ws


def test_without_credentials_init_writes_no_judge_and_check_says_none_will_run(tmp_path):
    out, ws = _init(tmp_path, {})
    toml = (ws / "nightshift.toml").read_text()
    assert load_config(ws).judge is None and "# [judge]" in toml
    assert "nightshift: judge: off (no Anthropic key and no Claude login found here" in out.stdout
    check = nightshift("check", str(ws), env={**NO_CREDENTIALS, "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude")})
    line = next(x for x in check.stdout.splitlines() if x.split()[1:2] == ["judge"])
    assert line.startswith("note") and "no judge will run" in line, line


def test_with_an_api_key_init_turns_the_judge_on_at_claims_and_never_writes_the_key(tmp_path):
    out, ws = _init(tmp_path, {"ANTHROPIC_API_KEY": SECRET})
    judge = load_config(ws).judge
    assert judge is not None and judge.enabled and judge.when == "claim" and judge.via == "auto"
    assert "judge: on at claims of done (the API, with ANTHROPIC_API_KEY set)" in out.stdout
    written = "".join(p.read_text(errors="replace") for p in ws.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert SECRET not in written + out.stdout + out.stderr
    check = nightshift("check", str(ws), env={"ANTHROPIC_API_KEY": SECRET})
    line = next(x for x in check.stdout.splitlines() if x.split()[1:2] == ["judge"])
    assert line.startswith("ok") and "through the API, at each claim of done" in line and SECRET not in check.stdout


def test_with_a_claude_login_init_turns_on_the_cli_judge_and_without_the_cli_does_not(tmp_path):
    # init only asks whether the CLI is on PATH (it runs nothing): a stand-in named claude is all it needs to find
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "claude").write_text("#!/bin/sh\nexit 0\n")
    (tools / "claude").chmod(0o755)
    login = tmp_path / "claude-login"
    login.mkdir()
    (login / ".credentials.json").write_text("{}")
    out, ws = _init(tmp_path, {"CLAUDE_CONFIG_DIR": str(login), "PATH": f"{tools}:/usr/bin:/bin"})
    assert load_config(ws).judge is not None
    assert f"judge: on at claims of done (the claude CLI, with the Claude login in {login})" in out.stdout
    bare = tmp_path / "bare"
    bare.mkdir()
    out, ws = _init(bare, {"CLAUDE_CONFIG_DIR": str(login), "PATH": "/usr/bin:/bin"})  # a login, but no CLI
    assert load_config(ws).judge is None and "judge: off (the judge's claude CLI is not on PATH" in out.stdout


def _findings(n: int, fail: bool) -> object:
    items = [{"id": f"C{i}", "verdict": "FAIL" if fail and i == 1 else "PASS",
              "evidence": "solver.py: width * 1.42857142857143 is a constant tuned to the reference" if fail else "ok",
              "fix": "remove the calibrated factor and fix the interface width" if fail else ""}
             for i in range(1, n + 1)]
    return tools(tool("record_verdict", {"findings": items}), input_tokens=2000, output_tokens=300)


def test_from_init_defaults_the_judge_refuses_a_calibrated_constant_and_the_report_names_it(tmp_path, monkeypatch):
    notes = ["append", "CHANGELOG.md", "\n- tried the width\n"]
    calibrated = [notes, ["write", "solver.py", "width = 0.7 * 1.42857142857143  # calibrated\n"],
                  ["write", "check.txt", "ok"], ["claim", "done", "calibrated the width"]]
    honest = [notes, ["write", "solver.py", "width = 1.0\n"], ["write", "check.txt", "ok"], ["claim", "done", "fixed"]]
    with FakeAnthropic([], side_requests="script") as fake:
        env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": fake.url}
        _out, ws = _init(tmp_path, env)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        toml = ws / "nightshift.toml"  # the one setting a command agent needs: its command
        toml.write_text(toml.read_text().replace('# command = "codex exec {prompt}"',
                                                 f'command = "{sys.executable} agent.py"'))
        from tests.fixtures_core import AGENT
        (ws / "agent.py").write_text(AGENT)
        (ws / "agent_script.json").write_text(json.dumps({"s1t1": calibrated, "s1t2": honest}))
        for name in ("CLAUDE.md",):  # the plan's items checked, so only the judge stands between a claim and done
            (ws / name).write_text((ws / name).read_text().replace("- [ ]", "- [x]"))
        subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "setup"], cwd=ws,
                       check=True)
        config = load_config(ws)
        n = len(rubric_for(config.judge, gather_inputs(ws, config.judge, None, None, "", config.goal)))
        fake.script.extend([_findings(n, True), _findings(n, False)])
        run = create_run(ws, resolve_config(ws))
        run_foreground(run, say=lambda _: None, leave_on_outcome=True)
    events = [json.loads(line) for line in run.events.read_text().splitlines()]
    verdicts = [e["data"] for e in events if e["type"] == "verify.finished"]
    first_judge = next(c for c in verdicts[0]["checks"] if c["name"] == "judge")
    assert not verdicts[0]["passed"] and not first_judge["passed"]
    assert "remove the calibrated factor" in run.turn_file(1, 2, "prompt.md").read_text()
    report = nightshift("report", run.run_id, cwd=ws, env=env)
    assert "Judge on the last verdict: ran" in report.stdout, report.stdout
