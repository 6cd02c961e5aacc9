"""The boundary's parts without an agent: the PreToolUse decision against an agent that tries every way around
it, the hook process itself (outside a run, garbage, no policy, a huge input: nothing happens, it never waits),
the [policy] section's bad input (line and key named), and doctor's account of what holds the agent's hands."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nightshift.supervisor.config.schema import ConfigError, parse_config
from nightshift.supervisor.shift.policy_check import decide

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def policy(tmp_path) -> dict:
    ws = tmp_path / "ws"
    (ws / "reference").mkdir(parents=True)
    (ws / "tests").mkdir()
    (ws / "CLAUDE.md").write_text("# Goal\n\n## Definition of done\n- agree to 0.1%\n\n## Plan\n- [ ] a\n")
    heldout = tmp_path / "held" / "cl.dat"
    return {"workspace": str(ws), "plan": str(ws / "CLAUDE.md"), "writable": ["/tmp/x-tmp"], "network": False,
            "sandbox": False, "hide": [[str(heldout), "held-out references are never readable"]],
            "protect": [[str(ws / "reference" / "cl.dat"), "references", "your edit of {path} was refused"],
                        [str(ws / "nightshift.toml"), "config", "nightshift.toml is the user's"],
                        [str(ws / ".nightshift") + "/**", "run_state", ".nightshift/ is nightshift's"],
                        [str(ws / "tests" / "test_a.py"), "tests", "passed once"]]}


def rule(policy, tool, **tool_input):
    found = decide(policy, tool, tool_input, policy["workspace"])
    return found[0] if found else None


def test_file_tools_meet_the_protected_and_hidden_paths(policy):
    ws = policy["workspace"]
    assert rule(policy, "Write", file_path=f"{ws}/reference/cl.dat", content="x") == "references"
    assert rule(policy, "Edit", file_path="reference/cl.dat", old_string="a", new_string="b") == "references"
    assert rule(policy, "MultiEdit", file_path=f"{ws}/reference/../reference/cl.dat", edits=[]) == "references"
    assert rule(policy, "Write", file_path=f"{ws}/nightshift.toml", content="") == "config"
    assert rule(policy, "Write", file_path=f"{ws}/.nightshift/runs/r/events.jsonl", content="") == "run_state"
    assert rule(policy, "Edit", file_path=f"{ws}/tests/test_a.py", old_string="1", new_string="2") == "tests"
    assert rule(policy, "Write", file_path="/etc/profile.d/x.sh", content="") == "outside"
    assert rule(policy, "Write", file_path="/tmp/x-tmp/scratch.txt", content="") is None
    assert rule(policy, "Write", file_path=f"{ws}/solver.py", content="print(1)") is None
    held = policy["hide"][0][0]
    assert rule(policy, "Read", file_path=held) == "hidden"
    assert rule(policy, "Grep", pattern="TT", path=str(Path(held).parent)) is None  # the folder is not hidden
    assert rule(policy, "Read", file_path=f"{ws}/reference/cl.dat") is None  # visible references are readable


def test_the_definition_of_done_is_the_users(policy):
    plan = policy["plan"]
    assert rule(policy, "Edit", file_path=plan, old_string="- agree to 0.1%", new_string="- agree to 10%") \
        == "definition_of_done"
    assert rule(policy, "Write", file_path=plan, content="# Goal\n\n## Plan\n- [x] a\n") == "definition_of_done"
    assert rule(policy, "Edit", file_path=plan, old_string="- [ ] a", new_string="- [x] a") is None
    assert rule(policy, "MultiEdit", file_path=plan, edits=[{"old_string": "- [ ] a", "new_string": "- [x] a"},
                                                            {"old_string": "0.1%", "new_string": "1%"}]) \
        == "definition_of_done"


@pytest.mark.parametrize("command,expected", [
    ("git push --force origin main", "history"), ("git push -f", "history"), ("git push origin +main", "history"),
    ("git push --force-with-lease", "history"), ("git commit --amend -m x", "history"),
    ("git rebase -i HEAD~3", "history"), ("git filter-branch --all", "history"), ("git reset --hard HEAD~2", "history"),
    ("cd sub && git reset --hard abc123", "history"), ("git reset --hard", None), ("git reset --hard HEAD", None),
    ("git push origin main", "network"), ("git commit -m 'fix'", None), ("pytest -q", None),
    ("sed -i s/1/2/ reference/cl.dat", "references"), ("echo 0 > reference/cl.dat", "references"),
    ("cp out/cl.dat reference/cl.dat", "references"), ("cat reference/cl.dat", None),
    ("rm tests/test_a.py", "tests"), ("python3 -m pytest tests/test_a.py", None),
    ("curl https://example.org", "network"), ("pip install numpy", "network"),
])
def test_shell_commands_meet_the_rules(policy, command, expected):
    assert rule(policy, "Bash", command=command) == expected


def test_hidden_paths_in_any_shell_command_and_network_only_when_off(policy):
    held = policy["hide"][0][0]
    for command in (f"cat {held}", f"python3 -c \"print(open('{held}').read())\"", f"cp {held} out/cl.dat"):
        assert rule(policy, "Bash", command=command) == "hidden"
    assert rule(policy, "WebFetch", url="https://example.org", prompt="x") == "network"
    on = {**policy, "network": True}
    assert rule(on, "WebFetch", url="https://example.org", prompt="x") is None
    assert rule(on, "Bash", command="curl https://example.org") is None
    sandboxed = {**policy, "sandbox": True}
    assert rule(sandboxed, "Bash", command="curl https://example.org") is None  # the sandbox cuts it, visibly


def hook(env: dict, stdin: str, module: str = "nightshift.supervisor.shift.pretool", cwd=None) -> subprocess.CompletedProcess:
    """The hook exactly as Claude Code starts it: the command nightshift writes into the settings, through a shell."""
    from nightshift.supervisor.agents.claude_settings import hook_command
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NIGHTSHIFT_")}
    return subprocess.run(["sh", "-c", hook_command(module)], input=stdin, text=True, capture_output=True,
                          env={**clean, **env}, timeout=30, cwd=cwd)


def test_the_hook_does_nothing_outside_a_run_with_garbage_or_without_a_policy(tmp_path, policy):
    call = json.dumps({"tool_name": "Write", "tool_input": {"file_path": f"{policy['workspace']}/reference/cl.dat"}})
    assert hook({}, call).stdout == ""  # not a session nightshift started
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {"NIGHTSHIFT_RUN_DIR": str(run_dir), "NIGHTSHIFT_TOKEN": "t"}
    assert hook(env, call).stdout == ""  # no compiled policy (yet): Claude Code's rules still hold
    (run_dir / "policy.json").write_text(json.dumps(policy))
    for garbage in ("not json {", "[]", json.dumps({"tool_name": "Write", "tool_input": "x"}), ""):
        out = hook(env, garbage)
        assert out.returncode == 0 and out.stdout == "" and out.stderr == ""
    assert not (run_dir / "refusals").exists()


def test_the_hook_refuses_records_and_never_waits_even_for_a_huge_input(tmp_path, policy):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "policy.json").write_text(json.dumps(policy))
    env = {"NIGHTSHIFT_RUN_DIR": str(run_dir), "NIGHTSHIFT_TOKEN": "t", "NIGHTSHIFT_SHIFT": "2"}
    huge = "x" * 20_000_000
    started = time.monotonic()
    out = hook(env, json.dumps({"tool_name": "Write", "tool_input": {
        "file_path": f"{policy['workspace']}/reference/cl.dat", "content": huge}, "cwd": policy["workspace"]}))
    assert time.monotonic() - started < 25  # no supervisor here: nothing to wait for
    answer = json.loads(out.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "references" in answer["permissionDecisionReason"]
    [record] = [json.loads(p.read_text()) for p in (run_dir / "refusals").glob("*.json")]
    assert record["rule"] == "references" and record["shift"] == "2" and len(record["input"]) <= 200
    allowed = hook(env, json.dumps({"tool_name": "Bash", "tool_input": {"command": "pytest -q"}}))
    assert allowed.stdout == ""  # the hook never answers allow: Claude Code's own rules still decide


def test_the_permission_hook_records_what_waits(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {"NIGHTSHIFT_RUN_DIR": str(run_dir), "NIGHTSHIFT_TOKEN": "t"}
    out = hook(env, json.dumps({"tool_name": "Bash", "tool_input": {"command": "make"}}), "nightshift.supervisor.shift.waits")
    assert out.returncode == 0 and out.stdout == ""
    [wait] = [json.loads(p.read_text()) for p in (run_dir / "waits").glob("*.json")]
    assert wait["what"] == "permission for Bash: make" and wait["token"] == "t"


@pytest.mark.parametrize("body,message", [
    ('[policy]\nnetwork = "maybe"\n', "nightshift.toml line 2: policy.network"),
    ('[policy]\nsandbox = "always"\n', "line 2: policy.sandbox"),
    ('[policy]\nallow = ["Bash(make:*"]\n', "not a permission rule"),
    ('[policy]\nallow = ["Bash"]\ndeny = ["Bash"]\n', "allow and deny both name 'Bash'"),
    ('[policy]\nprotect = [""]\n', "policy.protect"),
    ('[policy]\non_wait = "ask"\n', "line 2: policy.on_wait"),
    ('[policy]\nwait_timeout = "soon"\n', "policy.wait_timeout"),
    ('[policy]\nnetwrk = false\n', "unknown key policy.netwrk"),
])
def test_a_malformed_or_contradictory_policy_names_line_and_key(body, message):
    with pytest.raises(ConfigError) as err:
        parse_config(body)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_bad_policy_is_one_line_from_the_cli(tmp_path):
    (tmp_path / "nightshift.toml").write_text('[policy]\nsandbox = "always"\n')
    out = subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "run", str(tmp_path)], capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("nightshift: ") and "policy.sandbox" in out.stderr and len(out.stderr.splitlines()) == 1


def test_doctor_says_what_holds_the_agents_hands(tmp_path, monkeypatch):
    from nightshift.supervisor.cli.doctor import boundary_checks
    # This test is about the bypass setting a user might add. The sandbox variable is removed because some containers
    # (this CI machine's among them) export it, and a login node does not: the user's environment is what is tested.
    monkeypatch.delenv("IS_SANDBOX", raising=False)  # removed, never added: not a default
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([sys.executable, "-m", "nightshift.supervisor.cli.main", "init", str(tmp_path), "--goal", "g"], check=True,
                   capture_output=True)
    init_defaults = {what: ok for ok, what, _detail in boundary_checks(tmp_path)}
    assert all(init_defaults.values()), init_defaults  # nothing in `init` defaults trips root's trap
    bypass = '[agent]\npermission_mode = "bypassPermissions"\n'  # the setting under test, not a default
    (tmp_path / "nightshift.toml").write_text(bypass)
    rows = {what: (ok, detail) for ok, what, detail in boundary_checks(tmp_path)}
    assert "file tools" in rows and "namespace" in rows
    if os.getuid() == 0:
        root_ok, root_detail = rows["root"]
        assert not root_ok and "IS_SANDBOX=1" in root_detail and "never needs bypass" in root_detail  # not a default
    else:
        assert rows["permission mode"][0] and "does not need it" in rows["permission mode"][1]
    monkeypatch.setenv("PATH", "/nonexistent")  # no bubblewrap: what holds the shell then
    (tmp_path / "nightshift.toml").write_text('[policy]\nsandbox = "required"\n')
    rows = {what: (ok, detail) for ok, what, detail in boundary_checks(tmp_path)}
    ok, detail = rows["namespace"]
    assert not ok and "apt-get install bubblewrap" in detail and "will not start" in detail


def test_a_workspace_module_named_like_the_stdlib_cannot_switch_the_hook_off(tmp_path, policy):
    """The agent can write any file into the workspace, where Claude Code starts the hook: a json.py or fnmatch.py
    there must not replace the module the hook imports (it would answer nothing, which lets the call through)."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "policy.json").write_text(json.dumps(policy))
    ws = policy["workspace"]
    for name in ("fnmatch", "json", "re"):
        (tmp_path / "ws" / f"{name}.py").write_text("import sys\nsys.exit(0)\n")
    env = {"NIGHTSHIFT_RUN_DIR": str(run_dir), "NIGHTSHIFT_TOKEN": "t"}
    out = hook(env, json.dumps({"tool_name": "Write", "tool_input": {"file_path": f"{ws}/nightshift.toml"},
                                "cwd": ws}), cwd=ws)
    assert json.loads(out.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny", out.stderr


def test_a_protected_name_with_brackets_is_a_path_not_a_pattern():
    ws = "/w"
    policy = {"workspace": ws, "protect": [[f"{ws}/ref/run[1].csv", "references", "read-only"]]}
    assert decide(policy, "Write", {"file_path": f"{ws}/ref/run[1].csv"}) is not None


def test_a_wait_only_the_hook_saw_is_not_cleared_by_a_screen_without_known_prompt_words(monkeypatch):
    """The PermissionRequest hook reports prompts in any wording; the screen check knows a few. A blank-looking
    screen must not end a wait it never saw (status would say working while the agent sits at the prompt)."""
    from types import SimpleNamespace

    from nightshift.supervisor.shift import session as session_module
    events = []
    sess = object.__new__(session_module.AgentSession)
    sess.ledger = SimpleNamespace(state={"shift": 1, "waiting_for": None},
                                  emit=lambda event_type, shift, **data: events.append((event_type, data)))
    sess.config = SimpleNamespace(policy=SimpleNamespace(on_wait="wait", wait_timeout=1800))
    sess._waiting_since, sess._screen_saw_wait, sess._answered_on_screen = None, False, False
    clock = [1000.0]
    monkeypatch.setattr(session_module.time, "monotonic", lambda: clock[0])
    sess.start_waiting("mcp__db__query", "hook", lambda what: None)
    sess.ledger.state["waiting_for"] = "mcp__db__query"
    clock[0] += 60
    sess.watch_screen("Allow the db tool to run this query?  1. Yes  2. No", lambda what: None)
    assert [k for k, _ in events] == ["agent.waiting"]  # still waiting: nothing the screen knew went away
    sess.watch_screen("Do you want to proceed?\n❯ 1. Yes\n  2. No", lambda what: None)  # words it knows
    clock[0] += 60
    sess.watch_screen("working...", lambda what: None)
    assert [k for k, _ in events] == ["agent.waiting", "agent.wait_answered"]


def test_a_prompt_just_answered_and_still_drawn_is_not_a_new_wait():
    """Keys sent to a prompt, the agent redraws a moment later: a screen read in between still shows the prompt.
    That is the old prompt (a new wait there made `approve` answer nothing and, at the run's end, go unheard:
    the CI failure of stop 25), until the screen has been seen without it."""
    from types import SimpleNamespace

    from nightshift.supervisor.shift import session as session_module
    events, keys = [], []
    state = {"shift": 1, "waiting_for": None, "target": {"pane": "%0"}}

    def emit(event_type, shift, **data):
        events.append(event_type)
        state["waiting_for"] = data.get("what") if event_type == "agent.waiting" else None

    sess = object.__new__(session_module.AgentSession)
    sess.ledger = SimpleNamespace(state=state, emit=emit)
    sess.config = SimpleNamespace(policy=SimpleNamespace(on_wait="wait", wait_timeout=1800))
    sess.backend = SimpleNamespace(send_keys=lambda target, key: keys.append(key) or True)
    sess._waiting_since, sess._screen_saw_wait, sess._answered_on_screen = None, False, False
    prompt = "Do you want to proceed?\n❯ 1. Yes\n  2. No"
    sess.watch_screen(prompt, lambda what: None)
    assert sess.answer_wait(True, by="user") and keys == ["Enter"]
    sess.watch_screen(prompt, lambda what: None)  # not redrawn yet
    assert events == ["agent.waiting", "agent.wait_answered"]
    sess.watch_screen("running python3 ...", lambda what: None)
    sess.watch_screen(prompt, lambda what: None)  # the next prompt, after the screen moved on
    assert events == ["agent.waiting", "agent.wait_answered", "agent.waiting"]


def test_ticking_the_definition_of_done_is_not_changing_it(policy):
    plan = Path(policy["plan"])
    plan.write_text("# Goal\n\n## Definition of done\n\n- [ ] agree to 0.1%\n- [ ] tests pass\n\n## Plan\n- [ ] a\n")
    assert rule(policy, "Edit", file_path=str(plan), old_string="- [ ] agree", new_string="- [x] agree") is None
    assert rule(policy, "MultiEdit", file_path=str(plan), edits=[
        {"old_string": "- [ ] agree", "new_string": "- [X] agree"}, {"old_string": "- [ ] tests", "new_string": "- [x] tests"},
        {"old_string": "- [ ] a\n", "new_string": "- [x] a\n"}]) is None
    ticked = plan.read_text().replace("- [ ]", "- [x]")
    assert rule(policy, "Write", file_path=str(plan), content=ticked) is None
    # a tick that carries other words with it is a change of the words
    assert rule(policy, "Edit", file_path=str(plan), old_string="- [ ] agree to 0.1%", new_string="- [x] agree to 1%") \
        == "definition_of_done"
    assert rule(policy, "Edit", file_path=str(plan), old_string="- [ ] tests pass\n", new_string="") \
        == "definition_of_done"
    assert rule(policy, "Write", file_path=str(plan), content=ticked.replace("## Definition of done", "## Done")) \
        == "definition_of_done"
